/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include <ucs/config/global_opts.h>
#include <ucs/memory/memtype_cache.h>
}

using namespace gaudi_drv_test;


TEST(drv_own, acquire_release_refcount) {
    emu_node(2).run([]() {
        uct_gaudi_dev_t *dev, *dev2;
        int fd;

        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(uct_gaudi_lib_device(0), dev->info);
        EXPECT_STREQ("gaudi0", dev->name);
        EXPECT_GE(dev->fd, 0);
        EXPECT_FALSE(dev->adopted);
        EXPECT_FALSE(dev->failed);
        EXPECT_EQ(UCS_OK, uct_gaudi_health_check(dev));
        EXPECT_TRUE(uct_gaudi_health_is_operational(dev));

        /* one device per process, shared */
        ASSERT_EQ(UCS_OK, uct_gaudi_own_acquire(&dev2));
        EXPECT_EQ(dev, dev2);
        EXPECT_EQ(2u, dev->refcount);
        fd = dev->fd;
        uct_gaudi_own_release(dev2);
        EXPECT_EQ(1u, dev->refcount);
        EXPECT_NE(-1, fcntl(fd, F_GETFD)); /* still open */
        uct_gaudi_own_release(dev);
        EXPECT_EQ(-1, fcntl(fd, F_GETFD)); /* closed by the last release */

        /* and can be owned again */
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        uct_gaudi_own_release(dev);
    });
}

TEST(drv_own, select_by_config) {
    static const char *specs[] = {"1", "module:0", "0000:%02x:00.0"};
    emu_node node(2);

    for (const char *spec : specs) {
        node.run([&]() {
            uct_gaudi_dev_t *dev;
            char value[32];

            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            /* all three name logical device 1 (module id 0) */
            snprintf(value, sizeof(value), spec,
                     uct_gaudi_lib_device(1)->pci.bus);
            setenv("UCX_GAUDI_DEVICE", value, 1);
            uct_gaudi_lib_cleanup();

            dev = acquire_device();
            ASSERT_TRUE(dev != NULL) << value;
            EXPECT_EQ(1u, dev->info->index) << value;
            EXPECT_STREQ("gaudi1", dev->name);
            uct_gaudi_own_release(dev);
        });
    }
}

TEST(drv_own, select_invalid) {
    static const char *specs[] = {"2", "module:9", "module:", "0000:77:00.0",
                                  "gaudi"};
    emu_node node(2);

    for (const char *spec : specs) {
        SCOPED_TRACE(spec);
        node.run({{"UCX_GAUDI_DEVICE", spec}}, []() {
            expect_acquire_fails(UCS_ERR_NO_DEVICE,
                                 {"does not name one of the 2 Gaudi "
                                  "devices"});
        });
    }
}

/* Two processes own one device each; a third finds all busy */
TEST(drv_own, exclusive_across_processes) {
    emu_node node(2);
    device_holder a(node, {}, [](uct_gaudi_dev_t *dev) {
        EXPECT_EQ(0u, dev->info->index);
    }, "A");
    device_holder b(node, {}, [](uct_gaudi_dev_t *dev) {
        EXPECT_EQ(1u, dev->info->index) << "gaudi0 is A's, B skips it";
    }, "B");

    node.run([&]() {
        ASSERT_NO_FATAL_FAILURE(expect_acquire_fails(
                UCS_ERR_BUSY, {"all 2 Gaudi devices are busy (owned by "
                               "other processes)"}));

        /* a device named explicitly: the same, said about that device */
        uct_gaudi_lib_cleanup();
        setenv("UCX_GAUDI_DEVICE", "1", 1);
        expect_acquire_fails(UCS_ERR_BUSY,
                             {"gaudi1", "is busy (owned by another process)"});
    });

    /* once A is gone its device is free again */
    a.release();
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        EXPECT_EQ(0u, dev->info->index);
    });

    b.release();
}

/* The application opened the compute node before UCX: use that fd */
TEST(drv_own, adopt_open_compute_fd) {
    emu_node(2).run([]() {
        struct hl_info_hw_ip_info hw_ip;
        uct_gaudi_dev_t *dev;
        int app_fd;

        dev = acquire_adopted(1, &app_fd);
        ASSERT_TRUE(dev != NULL);
        EXPECT_TRUE(dev->adopted);
        EXPECT_EQ(uct_gaudi_lib_device(1), dev->info);

        /* the device works through the adopted fd */
        uct_gaudi_mem_t mem;
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 4096, &mem));
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 0x5a, 4096));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);

        /* not ours to close */
        EXPECT_EQ(0, uct_gaudi_ioctl_info(app_fd, HL_INFO_HW_IP_INFO, &hw_ip,
                                          sizeof(hw_ip)));
        EXPECT_EQ(0, uct_gaudi_seam_ops->close(app_fd));
    });
}

/* Another process holds device 0 and this one holds device 1 already: no
 * open of anything, and a DEVICE setting does not override adoption */
TEST(drv_own, adopt_wins_over_config) {
    emu_node(2).env("UCX_GAUDI_DEVICE", "0").run([]() {
        uct_gaudi_dev_t *dev;
        int app_fd;

        dev = acquire_adopted(1, &app_fd);
        ASSERT_TRUE(dev != NULL);
        uct_gaudi_own_release(dev);
        uct_gaudi_seam_ops->close(app_fd);
    });
}

TEST(drv_own, gaudi3_not_owned) {
    emu_node(2, "gaudi3").run([]() {
        ASSERT_NO_FATAL_FAILURE(expect_acquire_fails(
                UCS_ERR_UNSUPPORTED, {"Gaudi3 DMA is not supported"}));
        EXPECT_EQ(2u, uct_gaudi_lib_num_devices());
        EXPECT_EQ(0u, uct_gaudi_lib_num_usable());

        setenv("UCX_GAUDI_DEVICE", "0", 1);
        uct_gaudi_lib_cleanup();
        expect_acquire_fails(UCS_ERR_UNSUPPORTED,
                             {"Gaudi3 DMA is not supported"});
    });
}

TEST(drv_own, memtype_cache_range) {
    emu_node(2).run([]() {
        ucs_memory_info_t mem_info;
        uct_gaudi_dev_t *dev;
        void *base;

        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_TRUE(dev->memtype_range);
        base = (void*)dev->info->dram_base;
        ASSERT_EQ(UCS_OK, ucs_memtype_cache_lookup(
                (char*)base + 4096, 64, &mem_info));
        EXPECT_EQ(UCS_MEMORY_TYPE_GAUDI, mem_info.type);
        EXPECT_EQ(dev->info->sys_dev, mem_info.sys_dev);
        uct_gaudi_own_release(dev);
        EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_memtype_cache_lookup(
                (char*)base + 4096, 64, &mem_info));
    });
}

/* An emulated node of 8 devices (module ID = 7 - index) and the rules of
 * Habana's runtime: local rank R owns module R */
TEST(drv_own, assign_module_of_local_rank) {
    emu_node node(8);

    for (unsigned rank : {0u, 3u, 7u}) {
        node.run_with_device({{"OMPI_COMM_WORLD_LOCAL_RANK",
                               std::to_string(rank)}},
                             [&](uct_gaudi_dev_t *dev, log_capture &) {
            EXPECT_EQ(rank, dev->info->module_id);
            EXPECT_EQ(7 - rank, dev->info->index);
            EXPECT_EQ(UCT_GAUDI_ASSIGN_LOCAL_RANK, dev->assigned_by);
        });
    }

    node.run_with_device({{"HLS_MODULE_ID", "6"}, {"LOCAL_RANK", "1"}},
                         [](uct_gaudi_dev_t *dev, log_capture &) {
        EXPECT_EQ(6u, dev->info->module_id);
        EXPECT_EQ(UCT_GAUDI_ASSIGN_HLS_MODULE, dev->assigned_by);
    });
}

/* Opens of this test's processes that found their device resetting, in
 * memory shared by every process of the test */
static unsigned *restart_waits;

static ucs_log_func_rc_t
restart_log(const char *file, unsigned line, const char *function,
            ucs_log_level_t level, const ucs_log_component_config_t *comp_conf,
            const char *message, va_list ap)
{
    if (strstr(message, "is resetting") != NULL) {
        __atomic_add_fetch(restart_waits, 1, __ATOMIC_RELAXED);
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

/* Gaudi2 resets after every release (reset_upon_device_release): an open
 * meanwhile answers EAGAIN. A rank restarted at once waits for its own
 * module and never takes another rank's (which then would find it busy).
 * 8 ranks, each restarted back to back 20 times, on the emulator's default
 * (0.5 s of reset after each release). */
TEST(drv_own, restarted_ranks_keep_their_modules) {
    static const unsigned num_ranks = 8, restarts = 20;
    pid_t ranks[num_ranks];
    emu_node node(8);

    restart_waits = (unsigned*)mmap(NULL, sizeof(*restart_waits),
                                    PROT_READ | PROT_WRITE,
                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)restart_waits);
    *restart_waits = 0;

    for (unsigned rank = 0; rank < num_ranks; ++rank) {
        ranks[rank] = start_child([&, rank]() {
            for (unsigned i = 0; (i < restarts) && !HasFailure(); ++i) {
                node.run({{"OMPI_COMM_WORLD_LOCAL_RANK",
                           std::to_string(rank)}}, [&]() {
                    uct_gaudi_dev_t *dev;
                    uct_gaudi_mem_t mem;
                    log_capture log;

                    /* UCS read UCX_LOG_LEVEL before the fork */
                    ucs_global_opts.log_component.log_level =
                            UCS_LOG_LEVEL_DIAG;
                    ucs_log_push_handler(restart_log);
                    dev = acquire_device();
                    ASSERT_TRUE(dev != NULL) << "rank " << rank << ", start "
                                             << i;
                    EXPECT_EQ(rank, dev->info->module_id)
                            << "rank " << rank << ", start " << i;
                    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 1 << 20, &mem));
                    EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, i,
                                                           4096));
                    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
                    uct_gaudi_own_release(dev);
                    EXPECT_TRUE(log.messages().empty())
                            << log.messages()[0];
                    ucs_log_pop_handler();
                }, 120);
            }
        }, 900);
    }

    for (unsigned rank = 0; rank < num_ranks; ++rank) {
        wait_child(ranks[rank], ("rank " + std::to_string(rank)).c_str());
    }

    /* the restarts did meet the reset after release */
    EXPECT_GT(*restart_waits, 0u);
    munmap(restart_waits, sizeof(*restart_waits));
}

/* The module a rule forces is busy: an error naming the rule, and no other
 * device taken (UCX goes on without gaudi) */
TEST(drv_own, assign_forced_module_busy) {
    static const env_vars envs[] = {
        {{"LOCAL_RANK", "2"}},
        {{"HLS_MODULE_ID", "2"}},
        {{"HABANA_VISIBLE_MODULES", "4,2"}, {"SLURM_LOCALID", "1"}}
    };
    emu_node node(8);
    device_holder holder(node, {{"UCX_GAUDI_DEVICE", "module:2"}},
                         [](uct_gaudi_dev_t *dev) {
        EXPECT_EQ(UCT_GAUDI_ASSIGN_CONFIG, dev->assigned_by);
    });

    for (const auto &env : envs) {
        node.run(env, [&]() {
            const uct_gaudi_dev_info_t *info;
            uct_gaudi_dev_t *dev;
            log_capture log;
            unsigned i;
            int fd;

            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            EXPECT_EQ(UCS_ERR_BUSY, uct_gaudi_own_acquire(&dev));
            ASSERT_EQ(1u, log.messages().size());
            EXPECT_NE(std::string::npos, log.messages()[0].find(
                    "gaudi5 (module 2, bus 0000:38:00.0) chosen by "))
                    << log.messages()[0];
            EXPECT_NE(std::string::npos, log.messages()[0].find(
                    env.back().first + "=" + env.back().second))
                    << log.messages()[0];
            EXPECT_NE(std::string::npos, log.messages()[0].find(
                    "is busy (owned by another process); UCX continues "
                    "without the Gaudi transports")) << log.messages()[0];

            /* nothing else was opened: every other device is still free */
            for (i = 0; i < 8; ++i) {
                info = uct_gaudi_lib_device(i);
                if (info->module_id == 2) {
                    continue;
                }
                fd = uct_gaudi_seam_ops->open(info->compute_path,
                                              O_RDWR | O_CLOEXEC);
                /* EAGAIN: free, in the reset after the previous check's
                 * release */
                EXPECT_TRUE((fd >= 0) || (errno == EAGAIN))
                        << info->name << ": " << strerror(errno);
                if (fd >= 0) {
                    uct_gaudi_seam_ops->close(fd);
                }
            }
        });
    }

    holder.release();
}

/* Devices on two NUMA nodes; the process's CPUs faked on one of them */
TEST(drv_own, assign_numa_node) {
    emu_node node(8);

    node.env("UCX_GAUDI_EMU_NUMA_NODES", "2");
    for (unsigned numa : {1u, 0u}) {
        node.run_with_device({{"UCX_GAUDI_EMU_PROC_NUMA",
                               std::to_string(numa)}},
                             [&](uct_gaudi_dev_t *dev, log_capture &) {
            unsigned i;

            /* placed by the emulator even on a host of one node */
            for (i = 0; i < 8; ++i) {
                EXPECT_EQ((int)i / 4, uct_gaudi_lib_device(i)->numa_node);
            }
            EXPECT_EQ(4 * numa, dev->info->index);
            EXPECT_EQ((int)numa, dev->info->numa_node);
            EXPECT_EQ(UCT_GAUDI_ASSIGN_NUMA, dev->assigned_by);
        });
    }

    /* the first device of node 1 is taken: the next one on node 1 */
    device_holder holder(node, {{"UCX_GAUDI_EMU_PROC_NUMA", "1"}},
                         [](uct_gaudi_dev_t *dev) {
        EXPECT_EQ(4u, dev->info->index);
    });
    node.run_with_device({{"UCX_GAUDI_EMU_PROC_NUMA", "1"}},
                         [](uct_gaudi_dev_t *dev, log_capture &) {
        EXPECT_EQ(5u, dev->info->index);
        EXPECT_EQ(UCT_GAUDI_ASSIGN_NUMA, dev->assigned_by);
    });
    holder.release();
}

/* The application opened its device before UCX: it keeps it, whatever the
 * rules would have chosen */
TEST(drv_own, assign_adopted_device_kept) {
    emu_node node(8);

    node.env("OMPI_COMM_WORLD_LOCAL_RANK", "3").env("HLS_MODULE_ID", "1");
    node.run([]() {
        uct_gaudi_dev_t *dev;
        int app_fd;

        dev = acquire_adopted(0, &app_fd);
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(UCT_GAUDI_ASSIGN_ADOPTED, dev->assigned_by);
        uct_gaudi_own_release(dev);
        uct_gaudi_seam_ops->close(app_fd);
    });
}

/* Each MD open asks for the device: a failure is said once per process, and
 * said again once a success came in between */
TEST(drv_own, assign_failure_said_once) {
    emu_node(2).env("HLS_MODULE_ID", "9").run([]() {
        uct_gaudi_dev_t *dev;
        log_capture log;

        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_gaudi_own_acquire(&dev));
        EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_gaudi_own_acquire(&dev));
        EXPECT_EQ(1u, log.count("HLS_MODULE_ID=9: no Gaudi device has module "
                                "ID 9 (the module IDs of this node: 0,1); UCX "
                                "continues without the Gaudi transports"));
        EXPECT_EQ(1u, log.messages().size());

        setenv("HLS_MODULE_ID", "1", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        uct_gaudi_own_release(dev);
        setenv("HLS_MODULE_ID", "9", 1);
        EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_gaudi_own_acquire(&dev));
        EXPECT_EQ(2u, log.count("HLS_MODULE_ID=9"));
    });
}

/* The serial timing knobs mean nothing under a profile: said, not dropped
 * silently */
TEST(drv_own, emu_timing_knobs_under_profile) {
    emu_node(1)
            .env("UCX_GAUDI_EMU_PROFILE", "gaudi2")
            .env("UCX_GAUDI_EMU_LATENCY", "5us")
            .run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        EXPECT_EQ(1u, log.count("UCX_GAUDI_EMU_BW and UCX_GAUDI_EMU_LATENCY "
                                "are ignored"));
    });
    emu_node(1)
            .env("UCX_GAUDI_EMU_LATENCY", "5us")
            .run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        EXPECT_EQ(0u, log.count("are ignored"));
    });
}
