/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "base_common.h"

#include <fcntl.h>
#include <unistd.h>

extern "C" {
#include <ucs/memory/memtype_cache.h>
}

using namespace gaudi_base_test;


TEST(base_own, acquire_release_refcount) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev, *dev2;
        int fd;

        set_emu_env(2, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(uct_gaudi_base_device(0), dev->info);
        EXPECT_STREQ("gaudi0", dev->name);
        EXPECT_GE(dev->fd, 0);
        EXPECT_FALSE(dev->adopted);
        EXPECT_FALSE(dev->failed);
        EXPECT_EQ(UCS_OK, uct_gaudi_dev_check(dev));
        EXPECT_TRUE(uct_gaudi_dev_is_operational(dev));

        /* one device per process, shared */
        ASSERT_EQ(UCS_OK, uct_gaudi_dev_acquire(&dev2));
        EXPECT_EQ(dev, dev2);
        EXPECT_EQ(2u, dev->refcount);
        fd = dev->fd;
        uct_gaudi_dev_release(dev2);
        EXPECT_EQ(1u, dev->refcount);
        EXPECT_NE(-1, fcntl(fd, F_GETFD)); /* still open */
        uct_gaudi_dev_release(dev);
        EXPECT_EQ(-1, fcntl(fd, F_GETFD)); /* closed by the last release */

        /* and can be owned again */
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        uct_gaudi_dev_release(dev);
    });
}

TEST(base_own, select_by_config) {
    static const char *specs[] = {"1", "module:0", "0000:%02x:00.0"};
    state_dir dir;

    for (const char *spec : specs) {
        run_in_child([&]() {
            uct_gaudi_dev_t *dev;
            char value[32];

            set_emu_env(2, dir);
            ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
            /* all three name logical device 1 (module id 0) */
            snprintf(value, sizeof(value), spec,
                     uct_gaudi_base_device(1)->pci.bus);
            setenv("UCX_GAUDI_DEVICE", value, 1);
            uct_gaudi_base_cleanup();

            dev = acquire_device();
            ASSERT_TRUE(dev != NULL) << value;
            EXPECT_EQ(1u, dev->info->index) << value;
            EXPECT_STREQ("gaudi1", dev->name);
            uct_gaudi_dev_release(dev);
        });
    }
}

TEST(base_own, select_invalid) {
    static const char *specs[] = {"2", "module:9", "module:", "0000:77:00.0",
                                  "gaudi"};
    state_dir dir;

    for (const char *spec : specs) {
        run_in_child([&]() {
            uct_gaudi_dev_t *dev;
            log_capture log;

            set_emu_env(2, dir);
            setenv("UCX_GAUDI_DEVICE", spec, 1);
            ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
            EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_gaudi_dev_acquire(&dev)) << spec;
            EXPECT_EQ(1u, log.count("does not name one of the 2 Gaudi "
                                    "devices")) << spec;
        });
    }
}

/* Two processes own one device each; a third finds all busy */
TEST(base_own, exclusive_across_processes) {
    barrier owned_a, owned_b, done_c, release_a, release_b;
    state_dir dir;
    pid_t a, b;

    a = start_child([&]() {
        uct_gaudi_dev_t *dev;

        set_emu_env(2, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(0u, dev->info->index);
        owned_a.signal();
        release_a.wait();
        uct_gaudi_dev_release(dev);
    });
    owned_a.wait();

    b = start_child([&]() {
        uct_gaudi_dev_t *dev;

        set_emu_env(2, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(1u, dev->info->index) << "gaudi0 is A's, B skips it";
        owned_b.signal();
        release_b.wait();
        uct_gaudi_dev_release(dev);
    });
    owned_b.wait();

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        log_capture log;

        set_emu_env(2, dir);
        ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
        EXPECT_EQ(UCS_ERR_BUSY, uct_gaudi_dev_acquire(&dev));
        EXPECT_EQ(1u, log.count("all 2 Gaudi devices are busy (owned by "
                                "other processes)"));

        /* a device named explicitly: the same, said about that device */
        log.clear();
        uct_gaudi_base_cleanup();
        setenv("UCX_GAUDI_DEVICE", "1", 1);
        ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
        EXPECT_EQ(UCS_ERR_BUSY, uct_gaudi_dev_acquire(&dev));
        EXPECT_EQ(1u, log.count("gaudi1"));
        EXPECT_EQ(1u, log.count("is busy (owned by another process)"));
    });

    /* once A is gone its device is free again */
    release_a.signal();
    wait_child(a, "A");
    run_in_child([&]() {
        uct_gaudi_dev_t *dev;

        set_emu_env(2, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(0u, dev->info->index);
        uct_gaudi_dev_release(dev);
    });

    release_b.signal();
    wait_child(b, "B");
    (void)done_c;
}

/* The application opened the compute node before UCX: use that fd */
TEST(base_own, adopt_open_compute_fd) {
    state_dir dir;

    run_in_child([&]() {
        const uct_gaudi_dev_info_t *info;
        struct hl_info_hw_ip_info hw_ip;
        uct_gaudi_dev_t *dev;
        int app_fd;

        set_emu_env(2, dir);
        ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
        info   = uct_gaudi_base_device(1);
        app_fd = uct_gaudi_seam_ops->open(info->compute_path,
                                          O_RDWR | O_CLOEXEC);
        ASSERT_GE(app_fd, 0) << strerror(errno);

        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(app_fd, dev->fd);
        EXPECT_TRUE(dev->adopted);
        EXPECT_EQ(info, dev->info);

        /* the device works through the adopted fd */
        uct_gaudi_mem_t mem;
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 4096, &mem));
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 0x5a, 4096));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_dev_release(dev);

        /* not ours to close */
        EXPECT_EQ(0, uct_gaudi_ioctl_info(app_fd, HL_INFO_HW_IP_INFO, &hw_ip,
                                          sizeof(hw_ip)));
        EXPECT_EQ(0, uct_gaudi_seam_ops->close(app_fd));
    });
}

/* Another process holds device 0 and this one holds device 1 already: no
 * open of anything, and a DEVICE setting does not override adoption */
TEST(base_own, adopt_wins_over_config) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        int app_fd;

        set_emu_env(2, dir);
        setenv("UCX_GAUDI_DEVICE", "0", 1);
        ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
        app_fd = uct_gaudi_seam_ops->open(
                uct_gaudi_base_device(1)->compute_path, O_RDWR | O_CLOEXEC);
        ASSERT_GE(app_fd, 0);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(app_fd, dev->fd);
        EXPECT_EQ(1u, dev->info->index);
        uct_gaudi_dev_release(dev);
        uct_gaudi_seam_ops->close(app_fd);
    });
}

TEST(base_own, gaudi3_not_owned) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        log_capture log;

        set_emu_env(2, dir, "gaudi3");
        ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
        EXPECT_EQ(2u, uct_gaudi_base_num_devices());
        EXPECT_EQ(0u, uct_gaudi_base_num_usable());
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_gaudi_dev_acquire(&dev));
        EXPECT_EQ(1u, log.count("Gaudi3 DMA is not supported"));

        setenv("UCX_GAUDI_DEVICE", "0", 1);
        uct_gaudi_base_cleanup();
        log.clear();
        ASSERT_EQ(UCS_OK, uct_gaudi_base_init());
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_gaudi_dev_acquire(&dev));
        EXPECT_EQ(1u, log.count("Gaudi3 DMA is not supported"));
    });
}

TEST(base_own, memtype_cache_range) {
    state_dir dir;

    run_in_child([&]() {
        ucs_memory_info_t mem_info;
        uct_gaudi_dev_t *dev;
        void *base;

        set_emu_env(2, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_TRUE(dev->memtype_range);
        base = (void*)dev->info->dram_base;
        ASSERT_EQ(UCS_OK, ucs_memtype_cache_lookup(
                (char*)base + 4096, 64, &mem_info));
        EXPECT_EQ(UCS_MEMORY_TYPE_GAUDI, mem_info.type);
        EXPECT_EQ(dev->info->sys_dev, mem_info.sys_dev);
        uct_gaudi_dev_release(dev);
        EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_memtype_cache_lookup(
                (char*)base + 4096, 64, &mem_info));
    });
}
