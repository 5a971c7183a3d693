/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/* Quiet probing (gaudi_ioctl.h, gaudi_share.h): opening devices must not
 * provoke error lines in the kernel log where the driver states what a
 * probe would find out, and where nothing states it, at most one per
 * process and device */

#include "drv_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

extern "C" {
#include <uct/gaudi/drv/gaudi_share.h>
#include <uct/gaudi/seam/gaudi_emu.h>
}

using namespace gaudi_drv_test;


static const unsigned NUM_DEVICES = 3;


/* dev_err lines the real driver would have written for this process */
static unsigned kernel_log_errors()
{
    gaudi_emu_get_stats_func_t get_stats;
    gaudi_emu_stats_t stats;
    void *lib;

    /* by its SONAME among the loaded objects (see share.cc) */
    lib = dlopen("libgaudi_emu.so.0", RTLD_NOW | RTLD_NOLOAD);
    EXPECT_TRUE(lib != NULL);
    if (lib == NULL) {
        return ~0u;
    }

    get_stats = (gaudi_emu_get_stats_func_t)dlsym(lib,
                                                  GAUDI_EMU_STATS_SYMBOL);
    EXPECT_TRUE(get_stats != NULL);
    EXPECT_EQ(0, (get_stats != NULL) ? get_stats(&stats) : -1);
    dlclose(lib);
    return (get_stats != NULL) ? stats.kernel_log_errors : ~0u;
}

static bool imports(const char *abi, bool oot)
{
    return oot && !strcmp(abi, "drm");
}

/* Open every device, one after the other, the way a process that
 * (re)initializes would, and ask each whether it imports DMA-BUFs */
static void open_every_device(const char *abi, bool oot)
{
    uct_gaudi_dev_t *dev;
    char value[16];
    unsigned i;

    for (i = 0; i < NUM_DEVICES; ++i) {
        snprintf(value, sizeof(value), "%u", i);
        setenv("UCX_GAUDI_DEVICE", value, 1);
        uct_gaudi_lib_cleanup();
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL) << abi << " device " << i;
        EXPECT_STREQ(abi, uct_gaudi_ioctl_abi_name(uct_gaudi_ioctl_abi()));
        EXPECT_EQ(oot ? UCT_GAUDI_DRIVER_OOT : UCT_GAUDI_DRIVER_UPSTREAM,
                  uct_gaudi_ioctl_driver()) << abi;
        EXPECT_EQ(imports(abi, oot), !!uct_gaudi_share_can_import(dev))
                << abi << (oot ? " oot" : " upstream") << " device " << i;
        EXPECT_EQ(imports(abi, oot), !!uct_gaudi_share_can_import(dev));
        uct_gaudi_own_release(dev);
    }
}

/* What sysfs states is enough: the node layout gives the ioctl generation,
 * the module version (only Habana's out-of-tree package sets one) whether
 * op 99 can exist. Only the out-of-tree driver of the DRM generation must
 * still be asked whether it imports (op 99 may be missing from its build),
 * once per device */
TEST(drv_probe, opening_devices_is_quiet) {
    static const char *abis[] = {"misc", "trans", "drm"};

    for (const char *abi : abis) {
        for (int oot = 0; oot < 2; ++oot) {
            state_dir dir;

            run_in_child([&]() {
                unsigned first;

                set_emu_env(NUM_DEVICES, dir, "gaudi2", abi);
                setenv("UCX_GAUDI_EMU_OOT_IMPORT", oot ? "y" : "n", 1);
                open_every_device(abi, oot);
                first = kernel_log_errors();
                if (imports(abi, oot)) {
                    EXPECT_LE(first, NUM_DEVICES) << abi << " oot";
                } else {
                    EXPECT_EQ(0u, first)
                            << abi << (oot ? " oot" : " upstream");
                }

                /* the same devices again: nothing more */
                open_every_device(abi, oot);
                EXPECT_EQ(first, kernel_log_errors())
                        << abi << (oot ? " oot" : " upstream");
            });
        }
    }
}


/*
 * A seam over the emulator that hides or invents the sysfs files the base
 * layer reads its facts from, for the cases where the driver states nothing
 * or something wrong: those must fall back to asking, never to a wrong
 * answer, and still cost at most one kernel-log line per process and device.
 */
static const uct_gaudi_drv_ops_t *lying_below;
static std::vector<std::string> lying_hidden;   /* path suffixes */
static std::vector<std::string> lying_invented;

static bool lying_ends_with(const char *path,
                            const std::vector<std::string> &suffixes)
{
    std::string p(path);

    for (const std::string &suffix : suffixes) {
        if ((p.size() >= suffix.size()) &&
            !p.compare(p.size() - suffix.size(), suffix.size(), suffix)) {
            return true;
        }
    }
    return false;
}

static int lying_exists(const char *path)
{
    if (lying_ends_with(path, lying_invented)) {
        return 0;
    } else if (lying_ends_with(path, lying_hidden)) {
        errno = ENOENT;
        return -1;
    }
    return lying_below->exists(path);
}

static ssize_t lying_read_attr(const char *path, char *buf, size_t max)
{
    if (lying_ends_with(path, lying_hidden)) {
        errno = ENOENT;
        return -1;
    }
    return lying_below->read_attr(path, buf, max);
}

static uct_gaudi_drv_ops_t lying_ops;

/* Run the probe of the ABI generation and the driver again over the lying
 * seam; returns the kernel-log lines it cost */
static unsigned probe_through_lies(const std::vector<std::string> &hidden,
                                   const std::vector<std::string> &invented)
{
    unsigned before = kernel_log_errors();

    lying_below           = uct_gaudi_seam_ops;
    lying_ops             = *lying_below;
    lying_ops.exists      = lying_exists;
    lying_ops.read_attr   = lying_read_attr;
    lying_hidden          = hidden;
    lying_invented        = invented;
    uct_gaudi_seam_ops    = &lying_ops;
    EXPECT_EQ(UCS_OK, uct_gaudi_ioctl_probe_abi());
    return kernel_log_errors() - before;
}

/* The ioctl generation where the layout states nothing or the wrong one */
TEST(drv_probe, abi_without_or_against_sysfs) {
    static const struct {
        const char *abi;      /* the emulated generation */
        const char *hide;     /* attribute files hidden */
        const char *invent;   /* attribute files invented */
        unsigned   lines;     /* kernel-log lines it costs (at most 1) */
    } cases[] = {
        /* nothing stated: DRM's INFO first, which costs the 'H' driver its
         * line; the DRM driver logs the 'H' code only at debug level */
        {"trans", "/pci_addr", NULL, 1},
        {"drm", "/pci_addr", NULL, 0},
        /* stated wrong: the confirmation fails, the other codes answer */
        {"trans", NULL, "/device/pci_addr", 1},
        {"drm", "/device/pci_addr", "accel0/pci_addr", 0}
    };

    for (const auto &c : cases) {
        state_dir dir;

        run_in_child([&]() {
            std::vector<std::string> hidden, invented;

            set_emu_env(NUM_DEVICES, dir, "gaudi2", c.abi);
            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            ASSERT_EQ(0u, kernel_log_errors()) << c.abi;
            if (c.hide != NULL) {
                hidden.push_back(c.hide);
            }
            if (c.invent != NULL) {
                invented.push_back(c.invent);
            }

            EXPECT_EQ(c.lines, probe_through_lies(hidden, invented))
                    << c.abi << " hide " << (c.hide ? c.hide : "-")
                    << " invent " << (c.invent ? c.invent : "-");
            EXPECT_STREQ(c.abi,
                         uct_gaudi_ioctl_abi_name(uct_gaudi_ioctl_abi()));
        });
    }
}

/* Where sysfs does not name the driver, op 99 is asked once per device */
TEST(drv_probe, import_without_module_version) {
    for (int oot = 0; oot < 2; ++oot) {
        state_dir dir;

        run_in_child([&]() {
            uct_gaudi_dev_t *dev;
            unsigned i;

            set_emu_env(1, dir, "gaudi2", "drm");
            setenv("UCX_GAUDI_EMU_OOT_IMPORT", oot ? "y" : "n", 1);
            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            EXPECT_EQ(0u, probe_through_lies({"/sys/module/habanalabs",
                                              "/version"}, {}));
            EXPECT_EQ(UCT_GAUDI_DRIVER_UNKNOWN, uct_gaudi_ioctl_driver());

            for (i = 0; i < 3; ++i) {
                dev = acquire_device();
                ASSERT_TRUE(dev != NULL);
                EXPECT_EQ(oot, !!uct_gaudi_share_can_import(dev));
                uct_gaudi_own_release(dev);
            }
            EXPECT_EQ(1u, kernel_log_errors()) << (oot ? "oot" : "upstream");
        });
    }
}
