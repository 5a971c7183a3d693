/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <dlfcn.h>
#include <numa.h>

using namespace gaudi_drv_test;


static void check_discovery(const char *asic_name, uct_gaudi_asic_t asic,
                            const char *abi, uint64_t dram_base)
{
    const uct_gaudi_dev_info_t *info;
    char path[64];
    unsigned i;

    ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
    EXPECT_TRUE(uct_gaudi_seam_is_emulated());
    EXPECT_STREQ(abi, uct_gaudi_ioctl_abi_name(uct_gaudi_ioctl_abi()));
    ASSERT_EQ(2u, uct_gaudi_lib_num_devices());
    EXPECT_EQ(NULL, uct_gaudi_lib_device(2));

    for (i = 0; i < 2; ++i) {
        info = uct_gaudi_lib_device(i);
        ASSERT_TRUE(info != NULL);
        EXPECT_EQ(i, info->index);
        EXPECT_EQ((int)i, info->minor);
        EXPECT_EQ("gaudi" + std::to_string(i), info->name);
        EXPECT_EQ(asic, info->asic) << asic_name;
        EXPECT_EQ(1 - i, info->module_id); /* emulator: N - 1 - index */
        EXPECT_EQ(HL_DEVICE_STATUS_OPERATIONAL, info->status);
        EXPECT_EQ(asic != UCT_GAUDI_ASIC_GAUDI3, !!info->usable);
        EXPECT_EQ(12u, strlen(info->bus_id)) << info->bus_id;
        EXPECT_NE(UCS_SYS_DEVICE_ID_UNKNOWN, info->sys_dev);
        /* ucx_info -d prints it: the module ID is visible there */
        EXPECT_STREQ(("GAUDI_" + std::to_string(i) + " module " +
                      std::to_string(1 - i)).c_str(),
                     ucs_topo_sys_device_get_name(info->sys_dev));
        EXPECT_EQ((numa_available() >= 0) ? 0 : -1, info->numa_node);
        EXPECT_EQ(dram_base, info->dram_base);
        /* the real sizes: Gaudi2 80 GiB in pages of 640 MiB */
        EXPECT_EQ((asic == UCT_GAUDI_ASIC_GAUDI2) ? (80ull << 30) :
                                                    (4ull << 30),
                  info->dram_size);
        EXPECT_EQ((asic == UCT_GAUDI_ASIC_GAUDI2) ? (640ull << 20) :
                                                    (2ull << 20),
                  info->alloc_page_size);

        uct_gaudi_ioctl_node_path(UCT_GAUDI_NODE_COMPUTE, i, path,
                                  sizeof(path));
        EXPECT_STREQ(path, info->compute_path);
        EXPECT_EQ(strcmp(abi, "misc") ? 0 : 1,
                  !strncmp(info->compute_path, "/dev/hl", 7))
                << info->compute_path;
    }

    EXPECT_NE(uct_gaudi_lib_device(0)->sys_dev,
              uct_gaudi_lib_device(1)->sys_dev);
    EXPECT_EQ((asic == UCT_GAUDI_ASIC_GAUDI3) ? 0u : 2u,
              uct_gaudi_lib_num_usable());
}

TEST(drv_discovery, abi_generations) {
    static const char *abis[] = {"misc", "trans", "drm"};

    for (const char *abi : abis) {
        emu_node(2, "gaudi2", abi).run([&]() {
            check_discovery("gaudi2", UCT_GAUDI_ASIC_GAUDI2, abi,
                            0x1001000000000000ull);
        });
    }
}

TEST(drv_discovery, asics) {
    emu_node(2, "gaudi1", "misc").run([]() {
        check_discovery("gaudi1", UCT_GAUDI_ASIC_GAUDI1, "misc", 0x20000000);
    });
    emu_node(2, "gaudi3", "drm").run([]() {
        check_discovery("gaudi3", UCT_GAUDI_ASIC_GAUDI3, "drm",
                        0x1001000000000000ull);
    });
}

TEST(drv_discovery, mapping_table_env) {
    /* module 0 is the emulator's device 1 */
    emu_node node(2);

    node.env("GAUDI_MAPPING_TABLE", "[{\"index\":0,\"module_id\":0}]");
    node.run([]() {
        const uct_gaudi_dev_info_t *info;

        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        ASSERT_EQ(2u, uct_gaudi_lib_num_devices());

        info = uct_gaudi_lib_device(0);
        EXPECT_EQ(1, info->minor);
        EXPECT_EQ(0u, info->index);
        EXPECT_STREQ("gaudi0", info->name);
        EXPECT_STREQ("GAUDI_0 module 0",
                     ucs_topo_sys_device_get_name(info->sys_dev));
        info = uct_gaudi_lib_device(1);
        EXPECT_EQ(0, info->minor);
        EXPECT_STREQ("gaudi1", info->name);
        EXPECT_STREQ("GAUDI_1 module 1",
                     ucs_topo_sys_device_get_name(info->sys_dev));
    });
}

TEST(drv_discovery, mapping_table_env_malformed) {
    emu_node node(2);

    node.env("GAUDI_MAPPING_TABLE",
             "[{\"index\":0,\"module_id\":0},{\"index\":0,\"module_id\":1}]");
    node.run([]() {
        log_capture log;

        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        ASSERT_EQ(2u, uct_gaudi_lib_num_devices());
        EXPECT_EQ(1u, log.count("GAUDI_MAPPING_TABLE"));
        EXPECT_EQ(1u, log.count("entry [1]: duplicate index 0"));
        /* identity order */
        EXPECT_EQ(0, uct_gaudi_lib_device(0)->minor);
        EXPECT_EQ(1, uct_gaudi_lib_device(1)->minor);
    });
}

TEST(drv_discovery, no_emulator_by_default) {
    run_in_child([&]() {
        unsetenv("UCX_GAUDI_EMU_DEVICES");
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_FALSE(uct_gaudi_seam_is_emulated());
        EXPECT_EQ(&uct_gaudi_drv_kernel_ops, uct_gaudi_seam_ops);
        EXPECT_TRUE(dlopen(UCT_GAUDI_EMU_LIB_NAME,
                           RTLD_NOW | RTLD_NOLOAD) == NULL);
        if (access("/dev/accel", F_OK) && access("/dev/hl_controlD0", F_OK)) {
            /* a machine without Gaudi: no devices, no error */
            EXPECT_EQ(0u, uct_gaudi_lib_num_devices());
        }
    });
}

TEST(drv_discovery, emulator_init_failure) {
    emu_node(2).env("UCX_GAUDI_EMU_FAULTS", "no-such-fault").run([]() {
        uct_gaudi_dev_t *dev;
        log_capture log;

        EXPECT_NE(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(1u, log.count("failed to initialize the Gaudi emulator"));
        EXPECT_EQ(0u, uct_gaudi_lib_num_devices());
        EXPECT_FALSE(uct_gaudi_seam_is_emulated());
        EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_gaudi_own_acquire(&dev));
    });
}

TEST(drv_discovery, bad_config_value) {
    emu_node(2).env("UCX_GAUDI_EMU_ASIC", "gaudi9").run([]() {
        log_capture log;

        EXPECT_NE(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(0u, uct_gaudi_lib_num_devices());
        EXPECT_GE(log.count("Gaudi emulator's configuration"), 1u);
    });
}

/* The emulator's knobs are read only when it is on: a stale or mistyped
 * one must not take the transports away from real devices (issue 20.4) */
TEST(drv_discovery, bad_emu_value_with_emulator_off) {
    run_in_child([&]() {
        log_capture log;

        setenv("UCX_GAUDI_EMU_DEVICES", "0", 1);
        setenv("UCX_GAUDI_EMU_ASIC", "gaudi9", 1);
        setenv("UCX_GAUDI_EMU_HBM_SIZE", "-1x", 1);
        EXPECT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_FALSE(uct_gaudi_seam_is_emulated());
        EXPECT_EQ(0u, log.count("EMU_ASIC"));
        EXPECT_EQ(0u, log.count("configuration"));
    });
}

/* A DMA timeout that cannot be right is refused by name and range */
TEST(drv_discovery, dma_timeout_range) {
    for (const char *value : {"0", "1us", "-1s", "2d", "inf"}) {
        run_in_child([&]() {
            log_capture log;

            setenv("UCX_GAUDI_EMU_DEVICES", "0", 1);
            setenv("UCX_GAUDI_DMA_TIMEOUT", value, 1);
            EXPECT_NE(UCS_OK, uct_gaudi_lib_init()) << value;
            EXPECT_GE(log.count("DMA_TIMEOUT"), 1u) << value;
        });
    }
}

TEST(drv_discovery, config_table_registered) {
    run_in_child([&]() {
        const uct_gaudi_lib_config_t *config;
        ucs_config_global_list_entry_t *entry;
        int found = 0;

        ucs_list_for_each(entry, &ucs_config_global_list, list) {
            found += (entry->prefix != NULL) &&
                     !strcmp(entry->prefix, "GAUDI_") &&
                     (!strcmp(entry->name, "Gaudi") ||
                      !strcmp(entry->name, "Gaudi emulator"));
        }
        EXPECT_EQ(2, found);

        setenv("UCX_GAUDI_EMU_DEVICES", "0", 1);
        setenv("UCX_GAUDI_DEVICE", "module:3", 1);
        setenv("UCX_GAUDI_DMA_TIMEOUT", "5s", 1);
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        config = uct_gaudi_lib_config();
        ASSERT_TRUE(config != NULL);
        EXPECT_STREQ("module:3", config->device);
        EXPECT_DOUBLE_EQ(5.0, config->dma_timeout);
        EXPECT_EQ(0u, config->emu_devices);
    });
}

TEST(drv_discovery, cleanup_and_reinit) {
    emu_node node(2);

    node.run([&]() {
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(2u, uct_gaudi_lib_num_devices());
        uct_gaudi_lib_cleanup();
        EXPECT_EQ(0u, uct_gaudi_lib_num_devices());
        EXPECT_TRUE(uct_gaudi_lib_config() == NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(2u, uct_gaudi_lib_num_devices());

        /* another configuration in the same process */
        uct_gaudi_lib_cleanup();
        set_emu_env(1, node.dir(), "gaudi1", "misc");
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        ASSERT_EQ(1u, uct_gaudi_lib_num_devices());
        EXPECT_EQ(UCT_GAUDI_ASIC_GAUDI1, uct_gaudi_lib_device(0)->asic);
        EXPECT_EQ(UCT_GAUDI_ABI_MISC, uct_gaudi_ioctl_abi());
    });
}

/* The emulator's NUMA placement reaches discovery, also for nodes this host
 * does not have */
TEST(drv_discovery, emulated_numa_nodes) {
    emu_node(5).env("UCX_GAUDI_EMU_NUMA_NODES", "3").run([]() {
        static const int expect[] = {0, 0, 1, 1, 2};
        unsigned i;

        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        ASSERT_EQ(5u, uct_gaudi_lib_num_devices());
        for (i = 0; i < 5; ++i) {
            EXPECT_EQ(expect[i], uct_gaudi_lib_device(i)->numa_node) << i;
        }
    });
}

TEST(drv_discovery, bad_numa_config) {
    emu_node(2).env("UCX_GAUDI_EMU_NUMA_NODES", "3").run([]() {
        log_capture log;

        EXPECT_NE(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(1u, log.count("invalid number of NUMA nodes 3 (0..2"));
        EXPECT_EQ(0u, uct_gaudi_lib_num_devices());

        uct_gaudi_lib_cleanup();
        log.clear();
        setenv("UCX_GAUDI_EMU_NUMA_NODES", "2", 1);
        setenv("UCX_GAUDI_EMU_PROC_NUMA", "64", 1);
        EXPECT_NE(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(1u, log.count("UCX_GAUDI_EMU_PROC_NUMA=64 is not a NUMA "
                                "node"));
        EXPECT_EQ(0u, uct_gaudi_lib_num_devices());
    });
}
