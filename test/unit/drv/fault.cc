/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

extern "C" {
#include <uct/gaudi/drv/gaudi_share.h>
}

#include <ucs/time/time.h>

#include <errno.h>

using namespace gaudi_drv_test;

/*
 * Error paths through the real encoding, with the emulator's fault injection
 * (UCX_GAUDI_EMU_FAULTS, counters per process since the emulator's init).
 * Call counts of a fresh process with 2 Gaudi2 devices, DRM ABI:
 *   open:   probe 1 control node, discovery 2 control nodes, then compute
 *           nodes (#4 is the first compute open);
 *   memory: acquire maps the command buffer (#1), an allocation is ALLOC
 *           (#2) + MAP (#3);
 *   any:    INFO probe 1, discovery 2 x (HW_IP_INFO, DEVICE_STATUS),
 *           acquire's INFO check (#6), command buffer map (#7) and event
 *           fd registration (#8).
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


/* run_with_device() on a node of @a num_devices devices whose emulator
 * injects @a faults */
static void run_with_faults(unsigned num_devices, const std::string &faults,
                            const emu_node::dev_fn &fn)
{
    emu_node(num_devices).env("UCX_GAUDI_EMU_FAULTS", faults)
                         .run_with_device(fn);
}


/* The first reason of a device failure when the driver also resets the
 * device (as after a CS that timed out or an error from a halted device):
 * the error of the call, or the reset event, whichever came first */
static const char *reset_reason = "the driver reports a reset";


/* After a fatal error every call reports the failed device (@a reason, or
 * @a alt: another reason that may have come first, the driver's reset
 * event); the failure was logged once, when it happened, and the refused
 * calls log nothing more (issue 20: one abort logged 74 times, a perftest
 * 16,513 times) */
static void expect_failed(uct_gaudi_dev_t *dev, const char *reason,
                          log_capture &log, const char *alt = NULL)
{
    uct_gaudi_mem_t mem;
    unsigned before;

    EXPECT_TRUE(dev->failed);
    if ((alt != NULL) && (strstr(dev->fail_reason, alt) != NULL)) {
        reason = alt;
    }
    before = log.count("device gaudi0 failed: " + std::string(reason));
    EXPECT_NE(std::string::npos, std::string(dev->fail_reason).find(reason))
            << dev->fail_reason;
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_health_check(dev));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_mem_alloc(dev, MB, &mem));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_dma_memset(dev, dev->info->dram_base,
                                                     0, 64));
    {
        /* a host registration (staging, bounce buffers) says nothing
         * more either */
        size_t logged = log.messages().size();
        char host[64];
        uint64_t dva;

        EXPECT_EQ(UCS_ERR_IO_ERROR,
                  uct_gaudi_mem_map_host(dev, host, sizeof(host), &dva));
        EXPECT_EQ(logged, log.messages().size())
                << "a refused host mapping logged: "
                << log.messages().back();
    }
    EXPECT_EQ(1u, before);
    EXPECT_EQ(before, log.count("device gaudi0 failed: " +
                                std::string(reason)));
}

TEST(drv_fault, memory_errno_mapping) {
    for (const errno_case &ec : errno_cases) {
        SCOPED_TRACE(ec.name);
        run_with_faults(2, std::string("fail:memory:2:") + ec.name,
                        [&](uct_gaudi_dev_t *dev, log_capture &log) {
            uct_gaudi_mem_t mem;

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
        });
    }
}

TEST(drv_fault, eintr_is_retried) {
    run_with_faults(2, "fail:memory:2:EINTR",
                    [](uct_gaudi_dev_t *dev, log_capture &log) {
        uct_gaudi_mem_t mem;

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_TRUE(log.messages().empty());
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    });
}

/* A busy or broken device is skipped; a resetting one (EAGAIN) is waited
 * for, never left for the next one */
TEST(drv_fault, open_busy_broken_skipped_resetting_waited) {
    static const struct {
        const char *faults;
        unsigned    index;
    } cases[] = {
        {"fail:open:4:EBUSY",  1},
        {"fail:open:4:EAGAIN", 0},
        {"fail:open:4:EPERM",  1}
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(c.faults);
        run_with_faults(2, c.faults,
                        [&](uct_gaudi_dev_t *dev, log_capture &log) {
            EXPECT_EQ(c.index, dev->info->index) << c.faults;
            EXPECT_TRUE(log.messages().empty()) << c.faults;
        });
    }
}

TEST(drv_fault, open_all_unavailable) {
    emu_node(2).env("UCX_GAUDI_EMU_FAULTS", "fail:open:4+:EBUSY").run([]() {
        expect_acquire_fails(UCS_ERR_BUSY, {"all 2 Gaudi devices are busy "
                                            "(owned by other processes)"});
    });

    /* both devices reset longer than the wait (UCX_GAUDI_RESET_WAIT) */
    emu_node node(2);

    node.env("UCX_GAUDI_EMU_FAULTS", "fail:open:4+:EAGAIN");
    node.env("UCX_GAUDI_RESET_WAIT", "0.1s");
    node.run([]() {
        expect_acquire_fails(UCS_ERR_NO_DEVICE,
                             {"no Gaudi device could be opened: 0 busy, 2 "
                              "still resetting after 0.1 s "
                              "(UCX_GAUDI_RESET_WAIT), 0 unavailable (last "
                              "error: Resource temporarily unavailable)"});
    });
}

/* The device a rule forces keeps resetting: waited for the configured time,
 * then an error saying so; no other device is taken */
TEST(drv_fault, open_forced_device_resetting) {
    emu_node node(2);

    node.env("UCX_GAUDI_EMU_FAULTS", "fail:open:4+:EAGAIN");
    node.env("UCX_GAUDI_RESET_WAIT", "0.2s").env("UCX_GAUDI_DEVICE", "1");
    node.run([]() {
        ASSERT_NO_FATAL_FAILURE(expect_acquire_fails(
                UCS_ERR_NO_RESOURCE, {"is still resetting after 0.2 s "
                                      "(UCX_GAUDI_RESET_WAIT)"}));
        gaudi_emu_stats_t stats;
        ASSERT_TRUE(emu_stats(&stats));
        EXPECT_EQ(0u, stats.contexts);
        unsetenv("UCX_GAUDI_DEVICE");
    });
}

TEST(drv_fault, info_failure_skips_device) {
    /* INFO #2 is device 0's HW_IP_INFO */
    emu_node(2).env("UCX_GAUDI_EMU_FAULTS", "fail:info:2:EIO").run([]() {
        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        ASSERT_EQ(1u, uct_gaudi_lib_num_devices());
        EXPECT_EQ(1, uct_gaudi_lib_device(0)->minor);
        EXPECT_STREQ("gaudi0", uct_gaudi_lib_device(0)->name);
    });
}

TEST(drv_fault, cs_queue_full_is_back_pressure) {
    run_with_faults(1, "fail:cs:1:EAGAIN",
                    [](uct_gaudi_dev_t *dev, log_capture &log) {
        uct_gaudi_mem_t mem;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        /* the blocking helper rides out a full queue (bounded by the DMA
         * timeout), and says nothing: it is not an error */
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 1, MB));
        EXPECT_TRUE(log.messages().empty());
        EXPECT_FALSE(dev->failed);
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 1, MB));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    });
}

/* A queue that stays full (the device runs nothing) is not back-pressure
 * forever: after the DMA timeout the device is failed, so that a transport
 * retrying from its pending queue gets an error instead of spinning */
TEST(drv_fault, cs_queue_full_forever) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_FAULTS", "fail:cs:1+:EAGAIN");
    node.env("UCX_GAUDI_DMA_TIMEOUT", "0.2s");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        std::vector<uint8_t> host(4096, 7);
        uct_gaudi_dma_chan_t chan;
        uct_gaudi_mem_t mem;
        ucs_status_t status;

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
    });
}

TEST(drv_fault, cs_errors) {
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
        SCOPED_TRACE(c.faults);
        run_with_faults(1, c.faults,
                        [&](uct_gaudi_dev_t *dev, log_capture &log) {
            std::vector<uint8_t> host(4096, 7);
            uct_gaudi_mem_t mem;

            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
            EXPECT_EQ(c.status, uct_gaudi_dma_copy_host(dev, (void*)mem.dva,
                                                        host.data(),
                                                        host.size(),
                                                        UCT_GAUDI_DMA_H2D))
                    << c.faults;
            EXPECT_GE(log.messages().size(), 1u) << c.faults;
            if (c.reason != NULL) {
                /* every fatal error of CS or WAIT_CS means the driver
                 * resets the device, which tells us too */
                expect_failed(dev, c.reason, log, reset_reason);
            } else {
                EXPECT_FALSE(dev->failed) << c.faults;
                EXPECT_EQ(UCS_OK, uct_gaudi_dma_copy_host(
                        dev, (void*)mem.dva, host.data(), host.size(),
                        UCT_GAUDI_DMA_H2D)) << c.faults;
            }
            uct_gaudi_mem_free(dev, &mem);
        });
    }
}

/* A wait that keeps failing without failing the device: the submission's
 * command buffer may still be the device's, so it is never reused; the
 * submission counts as running until UCX_GAUDI_DMA_TIMEOUT fails the
 * device */
TEST(drv_fault, wait_errors_until_the_deadline) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_FAULTS", "fail:wait_cs:1+:EINVAL");
    node.env("UCX_GAUDI_DMA_TIMEOUT", "0.3s");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        std::vector<uint8_t> host(4096, 7);
        uct_gaudi_mem_t mem;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(UCS_ERR_TIMED_OUT,
                  uct_gaudi_dma_copy_host(dev, (void*)mem.dva, host.data(),
                                          host.size(), UCT_GAUDI_DMA_H2D));
        expect_failed(dev, "DMA submission 1 did not complete within 0.3 s",
                      log);
        /* said once, not at every poll */
        EXPECT_EQ(1u, log.count("waiting for DMA submission 1 failed"));
        uct_gaudi_mem_free(dev, &mem);
    });
}

/* The device resets while we open it, before we could register for its
 * events: the open fails and closes it at once (the driver kills whoever
 * keeps a device it resets), and a later acquire gets it back */
TEST(drv_fault, device_reset_during_open) {
    /* #7: the command buffer map; #8 would register the event fd */
    emu_node(2).env("UCX_GAUDI_EMU_FAULTS", "reset:7").run([]() {
        gaudi_emu_stats_t stats;
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        log_capture log;

        ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
        EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_own_acquire(&dev));
        EXPECT_EQ(1u, log.count("device gaudi0 failed: "));
        ASSERT_TRUE(emu_stats(&stats));
        EXPECT_EQ(0u, stats.contexts);

        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_TRUE(uct_gaudi_health_is_operational(dev));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 0, 4096));
        uct_gaudi_mem_free(dev, &mem);
        uct_gaudi_own_release(dev);
    });
}

/* What the free callback saw: the driver library withdraws the exports of
 * a device it releases after a reset through it */
static struct {
    int      fd;
    uint64_t dva;
    size_t   length;
    unsigned calls;
} reset_export;

static void reset_export_free_cb(void *arg, uint64_t dva, size_t length)
{
    reset_export.dva    = dva;
    reset_export.length = length;
    ++reset_export.calls;
    close(reset_export.fd);     /* the exported DMA-BUF holds the device */
    reset_export.fd = -1;
}

/* Wait (bounded) until this process holds nothing of the device */
static bool wait_released()
{
    gaudi_emu_stats_t stats;

    for (int i = 0; i < 2000; ++i) {
        if (!emu_stats(&stats)) {
            return false;
        }
        if ((stats.contexts == 0) && (stats.exports == 0)) {
            return true;
        }
        usleep(5000);
    }

    ADD_FAILURE() << stats.contexts << " contexts, " << stats.exports
                  << " exports still open";
    return false;
}

/* The driver's default after a CS timeout: a reset. We registered for its
 * events, so it waits for us to release the device (the release watchdog)
 * and kills the process otherwise. The event fails the device, and
 * everything that keeps it open goes at once, from the async thread, while
 * the users keep their references: the compute fd, the exported DMA-BUFs.
 * The next acquire gets the device back. */
TEST(drv_fault, reset_event_releases_the_device) {
    static const char *faults[] = {"cs_timeout:1", "reset:10"};

    for (const char *fault : faults) {
        emu_node node(1);

        node.env("UCX_GAUDI_EMU_RELEASE_WATCHDOG", "0.2s");
        node.env("UCX_GAUDI_EMU_FAULTS", fault);
        node.run([&]() {
            std::vector<uint8_t> host(4096, 7);
            uct_gaudi_export_t exp;
            uct_gaudi_dev_t *dev;
            uct_gaudi_mem_t mem;
            ucs_status_t status;
            log_capture log;

            dev = acquire_device();
            ASSERT_TRUE(dev != NULL);
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
            ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, mem.dva, MB, &exp));
            reset_export.fd = exp.fd;
            uct_gaudi_mem_set_free_cb(dev, reset_export_free_cb, NULL, 1.0);

            /* the CS times out (or the 10th ioctl, the copy's first, resets
             * the device) */
            status = uct_gaudi_dma_copy_host(dev, (void*)mem.dva,
                                             host.data(), host.size(),
                                             UCT_GAUDI_DMA_H2D);
            EXPECT_NE(UCS_OK, status) << fault;
            ASSERT_TRUE(wait_released()) << fault;
            EXPECT_TRUE(dev->failed) << fault;
            EXPECT_EQ(1u, reset_export.calls) << fault;
            EXPECT_EQ(mem.dva, reset_export.dva) << fault;
            EXPECT_EQ(-1, reset_export.fd) << fault;
            uct_gaudi_mem_t mem2;
            EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_mem_alloc(dev, MB, &mem2));
            EXPECT_EQ(UCS_ERR_IO_ERROR,
                      uct_gaudi_dma_memset(dev, mem.dva, 0, 64));

            uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0);
            uct_gaudi_mem_free(dev, &mem);
            uct_gaudi_own_release(dev);

            /* back after the reset */
            dev = acquire_device();
            ASSERT_TRUE(dev != NULL);
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
            EXPECT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, (void*)mem.dva,
                                                      host.data(),
                                                      host.size(),
                                                      UCT_GAUDI_DMA_H2D));
            uct_gaudi_mem_free(dev, &mem);
            uct_gaudi_own_release(dev);
        });
    }
}

/* A DMA to a device address nothing maps (here: freed memory) resets a
 * Gaudi2 (the driver's page-fault event): the device fails once, the cause
 * is named once (in the failure line, or after it when the aborted
 * submission said the failure first), and everything that holds the device
 * is released within the release watchdog, so the process is not killed */
TEST(drv_fault, dma_page_fault_resets) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_RELEASE_WATCHDOG", "2s");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        uct_gaudi_mem_t mem;
        uint64_t dva;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        dva = mem.dva;
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));

        EXPECT_NE(UCS_OK, uct_gaudi_dma_memset(dev, dva, 0, 4096));
        for (int i = 0; (i < 500) && (log.count("DMA page fault") == 0);
             ++i) {
            usleep(10000);
        }
        EXPECT_TRUE(dev->failed);
        EXPECT_EQ(1u, log.count("after a DMA page fault (a device address "
                                "that nothing maps")) << dev->fail_reason;
        EXPECT_EQ(1u, log.count("device gaudi0 failed:"));
        /* past the watchdog: released in time, not killed */
        usleep(2500000);
        EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_health_check(dev));
    });
}

/* A submission that never completes is bounded by UCX_GAUDI_DMA_TIMEOUT */
TEST(drv_fault, dma_wait_is_bounded) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_LATENCY", "30s");
    node.env("UCX_GAUDI_DMA_TIMEOUT", "0.2s");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        uct_gaudi_mem_t mem;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(UCS_ERR_TIMED_OUT, uct_gaudi_dma_memset(dev, mem.dva, 0,
                                                          4096));
        EXPECT_EQ(1u, log.count("did not complete within 0.2 s"));
        expect_failed(dev, "DMA submission", log);
    });
}

TEST(drv_fault, gaudi1_command_buffer) {
    static const char *faults[] = {"fail:cb:1:ENOMEM", "fail:mmap:1:EINVAL"};

    for (const char *fault : faults) {
        emu_node node(1, "gaudi1", "misc");

        node.env("UCX_GAUDI_EMU_FAULTS", fault).run([&]() {
            uct_gaudi_dev_t *dev;
            log_capture log;

            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            EXPECT_NE(UCS_OK, uct_gaudi_own_acquire(&dev)) << fault;
            EXPECT_GE(log.messages().size(), 1u) << fault;
        });
    }
}
