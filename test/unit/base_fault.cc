/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "base_common.h"

#include <ucs/time/time.h>

#include <errno.h>

using namespace gaudi_base_test;

/*
 * Error paths through the real encoding, with the emulator's fault injection
 * (UCX_GAUDI_EMU_FAULTS, counters per process since the emulator's init).
 * Call counts of a fresh process with 2 Gaudi2 devices, DRM ABI:
 *   open:   probe 1 control node, discovery 2 control nodes, then compute
 *           nodes (#4 is the first compute open);
 *   memory: acquire maps the command buffer (#1), an allocation is ALLOC
 *           (#2) + MAP (#3);
 *   any:    INFO probe 1, discovery 2 x (HW_IP_INFO, DEVICE_STATUS),
 *           acquire's INFO check (#6) and command buffer map (#7).
 */


static const size_t MB = 1ul << 20;


struct errno_case {
    const char   *name;
    int          err;
    ucs_status_t status;
    int          fatal;
};

static const errno_case errno_cases[] = {
    {"ENOMEM",     ENOMEM,     UCS_ERR_NO_MEMORY,        0},
    {"ENOSPC",     ENOSPC,     UCS_ERR_NO_MEMORY,        0},
    {"EINVAL",     EINVAL,     UCS_ERR_INVALID_PARAM,    0},
    {"EFAULT",     EFAULT,     UCS_ERR_INVALID_ADDR,     0},
    {"EPERM",      EPERM,      UCS_ERR_REJECTED,         0},
    {"EACCES",     EACCES,     UCS_ERR_REJECTED,         0},
    {"EBUSY",      EBUSY,      UCS_ERR_BUSY,             0},
    {"EAGAIN",     EAGAIN,     UCS_ERR_NO_RESOURCE,      0},
    {"ENOTTY",     ENOTTY,     UCS_ERR_UNSUPPORTED,      0},
    {"EOPNOTSUPP", EOPNOTSUPP, UCS_ERR_UNSUPPORTED,      0},
    {"ENOSYS",     ENOSYS,     UCS_ERR_UNSUPPORTED,      0},
    {"EOVERFLOW",  EOVERFLOW,  UCS_ERR_OUT_OF_RANGE,     0},
    {"ENXIO",      ENXIO,      UCS_ERR_NO_DEVICE,        0},
    {"ENODEV",     ENODEV,     UCS_ERR_NO_DEVICE,        1},
    {"EIO",        EIO,        UCS_ERR_IO_ERROR,         1},
    {"ETIMEDOUT",  ETIMEDOUT,  UCS_ERR_ENDPOINT_TIMEOUT, 1}
};


/* After a fatal error every call reports the failed device */
static void expect_failed(uct_gaudi_dev_t *dev, const char *reason,
                          log_capture &log)
{
    unsigned before = log.count("device gaudi0 failed: ");
    uct_gaudi_mem_t mem;

    EXPECT_TRUE(dev->failed);
    EXPECT_NE(std::string::npos, std::string(dev->fail_reason).find(reason))
            << dev->fail_reason;
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_dev_check(dev));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_mem_alloc(dev, MB, &mem));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_dma_memset(dev, dev->info->dram_base,
                                                     0, 64));
    EXPECT_EQ(before + 3, log.count("device gaudi0 failed: " +
                                    std::string(reason)));
}

TEST(base_fault, memory_errno_mapping) {
    for (const errno_case &ec : errno_cases) {
        state_dir dir;

        run_in_child([&]() {
            std::string spec = std::string("fail:memory:2:") + ec.name;
            uct_gaudi_mem_t mem;
            uct_gaudi_dev_t *dev;
            log_capture log;

            set_emu_env(2, dir);
            setenv("UCX_GAUDI_EMU_FAULTS", spec.c_str(), 1);
            dev = acquire_device();
            ASSERT_TRUE(dev != NULL);

            EXPECT_EQ(ec.status, uct_gaudi_mem_alloc(dev, MB, &mem))
                    << ec.name;
            /* logged with the call, the device and the operation */
            EXPECT_EQ(1u, log.count("uct_gaudi_ioctl(dev->fd, "
                                    "UCT_GAUDI_IOC_MEMORY, args) failed on "
                                    "gaudi0 (MEMORY/ALLOC): " +
                                    std::string(strerror(ec.err))))
                    << ec.name;
            EXPECT_EQ(ec.fatal, !!dev->failed) << ec.name;

            if (ec.fatal) {
                EXPECT_EQ(1u, log.count("device gaudi0 failed: MEMORY/ALLOC: "
                                        + std::string(strerror(ec.err))));
                expect_failed(dev, "MEMORY/ALLOC", log);
            } else {
                /* one failure only: the device goes on */
                ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
                EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
            }
            uct_gaudi_dev_release(dev);
        });
    }
}

TEST(base_fault, eintr_is_retried) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        log_capture log;

        set_emu_env(2, dir);
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:memory:2:EINTR", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_TRUE(log.messages().empty());
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_dev_release(dev);
    });
}

TEST(base_fault, open_busy_resetting_broken_skipped) {
    static const struct {
        const char *faults;
        unsigned    index;
    } cases[] = {
        {"fail:open:4:EBUSY",  1},
        {"fail:open:4:EAGAIN", 1},
        {"fail:open:4:EPERM",  1}
    };

    for (const auto &c : cases) {
        state_dir dir;

        run_in_child([&]() {
            uct_gaudi_dev_t *dev;
            log_capture log;

            set_emu_env(2, dir);
            setenv("UCX_GAUDI_EMU_FAULTS", c.faults, 1);
            dev = acquire_device();
            ASSERT_TRUE(dev != NULL) << c.faults;
            EXPECT_EQ(c.index, dev->info->index) << c.faults;
            EXPECT_TRUE(log.messages().empty()) << c.faults;
            uct_gaudi_dev_release(dev);
        });
    }
}

TEST(base_fault, open_all_unavailable) {
    state_dir dir1, dir2;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        log_capture log;

        set_emu_env(2, dir1);
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:open:4+:EBUSY", 1);
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(UCS_ERR_BUSY, uct_gaudi_dev_acquire(&dev));
        EXPECT_EQ(1u, log.count("all 2 Gaudi devices are busy (owned by other "
                                "processes)"));
    });
    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        log_capture log;

        set_emu_env(2, dir2);
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:open:4:EAGAIN,fail:open:5:EPERM",
               1);
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_gaudi_dev_acquire(&dev));
        EXPECT_EQ(1u, log.count("no Gaudi device could be opened: 0 busy, 2 "
                                "unavailable"));
    });
}

TEST(base_fault, info_failure_skips_device) {
    state_dir dir;

    run_in_child([&]() {
        set_emu_env(2, dir);
        /* INFO #2 is device 0's HW_IP_INFO */
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:info:2:EIO", 1);
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        ASSERT_EQ(1u, uct_gaudi_lib_num_devices());
        EXPECT_EQ(1, uct_gaudi_lib_device(0)->minor);
        EXPECT_STREQ("gaudi0", uct_gaudi_lib_device(0)->name);
    });
}

TEST(base_fault, cs_queue_full_is_back_pressure) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        log_capture log;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:cs:1:EAGAIN", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        /* the blocking helper rides out a full queue (bounded by the DMA
         * timeout), and says nothing: it is not an error */
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 1, MB));
        EXPECT_TRUE(log.messages().empty());
        EXPECT_FALSE(dev->failed);
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 1, MB));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_dev_release(dev);
    });
}

/* A queue that stays full (the device runs nothing) is not back-pressure
 * forever: after the DMA timeout the device is failed, so that a transport
 * retrying from its pending queue gets an error instead of spinning */
TEST(base_fault, cs_queue_full_forever) {
    state_dir dir;

    run_in_child([&]() {
        std::vector<uint8_t> host(4096, 7);
        uct_gaudi_dma_chan_t chan;
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        ucs_status_t status;
        log_capture log;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:cs:1+:EAGAIN", 1);
        setenv("UCX_GAUDI_DMA_TIMEOUT", "0.2s", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, 4, 4, &chan));
        uct_gaudi_dma_xfer_t xfer = {mem.dva, (uintptr_t)host.data(),
                                     host.size()};
        ucs_time_t start = ucs_get_time();
        /* (the device fails after 0.2 s of retries; 5 s, 25 times that,
         * only bound the loop of an implementation that never fails it) */
        do {
            status = uct_gaudi_dma_chan_post(&chan, &xfer, 1, NULL);
        } while ((status == UCS_ERR_NO_RESOURCE) &&
                 (ucs_time_to_sec(ucs_get_time() - start) < 5));
        EXPECT_EQ(UCS_ERR_IO_ERROR, status);
        EXPECT_GE(ucs_time_to_sec(ucs_get_time() - start), 0.2);
        expect_failed(dev, "its command submission queue stayed full "
                           "for 0.2 s", log);
        uct_gaudi_dma_chan_cleanup(&chan);
        uct_gaudi_mem_free(dev, &mem);
        uct_gaudi_dev_release(dev);
    });
}

TEST(base_fault, cs_errors) {
    static const struct {
        const char   *faults;
        ucs_status_t status;
        const char   *reason;
    } cases[] = {
        {"fail:cs:1:EINVAL",      UCS_ERR_INVALID_PARAM,    NULL},
        {"fail:cs:1:EFAULT",      UCS_ERR_INVALID_ADDR,     NULL},
        {"fail:cs:1:ENOMEM",      UCS_ERR_NO_MEMORY,        NULL},
        /* the wait failed, not the submission: asked again, it completed */
        {"fail:wait_cs:1:EINVAL", UCS_OK,                   NULL},
        {"cs_timeout:1",          UCS_ERR_ENDPOINT_TIMEOUT, "WAIT_CS"},
        {"cs_abort:1",            UCS_ERR_IO_ERROR,         "WAIT_CS"},
        {"fail:wait_cs:1:ENODEV", UCS_ERR_NO_DEVICE,        "WAIT_CS"},
        {"fail:cs:1:EIO",         UCS_ERR_IO_ERROR,         "CS"}
    };

    for (const auto &c : cases) {
        state_dir dir;

        run_in_child([&]() {
            std::vector<uint8_t> host(4096, 7);
            uct_gaudi_dev_t *dev;
            uct_gaudi_mem_t mem;
            log_capture log;

            set_emu_env(1, dir);
            setenv("UCX_GAUDI_EMU_FAULTS", c.faults, 1);
            dev = acquire_device();
            ASSERT_TRUE(dev != NULL);
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
            EXPECT_EQ(c.status, uct_gaudi_dma_copy_host(dev, (void*)mem.dva,
                                                        host.data(),
                                                        host.size(),
                                                        UCT_GAUDI_DMA_H2D))
                    << c.faults;
            EXPECT_GE(log.messages().size(), 1u) << c.faults;
            if (c.reason != NULL) {
                expect_failed(dev, c.reason, log);
            } else {
                EXPECT_FALSE(dev->failed) << c.faults;
                EXPECT_EQ(UCS_OK, uct_gaudi_dma_copy_host(
                        dev, (void*)mem.dva, host.data(), host.size(),
                        UCT_GAUDI_DMA_H2D)) << c.faults;
            }
            uct_gaudi_mem_free(dev, &mem);
            uct_gaudi_dev_release(dev);
        });
    }
}

/* A wait that keeps failing without failing the device: the submission's
 * command buffer may still be the device's, so it is never reused; the
 * submission counts as running until UCX_GAUDI_DMA_TIMEOUT fails the
 * device */
TEST(base_fault, wait_errors_until_the_deadline) {
    state_dir dir;

    run_in_child([&]() {
        std::vector<uint8_t> host(4096, 7);
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        log_capture log;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_EMU_FAULTS", "fail:wait_cs:1+:EINVAL", 1);
        setenv("UCX_GAUDI_DMA_TIMEOUT", "0.3s", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(UCS_ERR_TIMED_OUT,
                  uct_gaudi_dma_copy_host(dev, (void*)mem.dva, host.data(),
                                          host.size(), UCT_GAUDI_DMA_H2D));
        expect_failed(dev, "DMA submission 1 did not complete within 0.3 s",
                      log);
        /* said once, not at every poll */
        EXPECT_EQ(1u, log.count("waiting for DMA submission 1 failed"));
        uct_gaudi_mem_free(dev, &mem);
        uct_gaudi_dev_release(dev);
    });
}

/* The device resets under us: EBUSY from a non-operational device */
TEST(base_fault, device_reset) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;

        set_emu_env(2, dir);
        setenv("UCX_GAUDI_EMU_FAULTS", "reset:7", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_FALSE(uct_gaudi_dev_is_operational(dev));
        log_capture log;

        EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_mem_alloc(dev, MB, &mem));
        expect_failed(dev, "MEMORY/ALLOC: device is not operational", log);
        uct_gaudi_dev_release(dev);
    });
}

/* A submission that never completes is bounded by UCX_GAUDI_DMA_TIMEOUT */
TEST(base_fault, dma_wait_is_bounded) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        log_capture log;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_EMU_LATENCY", "30s", 1);
        setenv("UCX_GAUDI_DMA_TIMEOUT", "0.2s", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(UCS_ERR_TIMED_OUT, uct_gaudi_dma_memset(dev, mem.dva, 0,
                                                          4096));
        EXPECT_EQ(1u, log.count("did not complete within 0.2 s"));
        expect_failed(dev, "DMA submission", log);
        uct_gaudi_dev_release(dev);
    });
}

TEST(base_fault, gaudi1_command_buffer) {
    static const char *faults[] = {"fail:cb:1:ENOMEM", "fail:mmap:1:EINVAL"};

    for (const char *fault : faults) {
        state_dir dir;

        run_in_child([&]() {
            uct_gaudi_dev_t *dev;
            log_capture log;

            set_emu_env(1, dir, "gaudi1", "misc");
            setenv("UCX_GAUDI_EMU_FAULTS", fault, 1);
            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            EXPECT_NE(UCS_OK, uct_gaudi_dev_acquire(&dev)) << fault;
            EXPECT_GE(log.messages().size(), 1u) << fault;
        });
    }
}
