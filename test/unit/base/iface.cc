/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The Gaudi transports' base iface (base/), through the UCT API as UCP uses
 * it: wake-up (an iface with a zero-copy operation in flight is armed, the
 * caller sleeps in poll() on the iface's event fd, and the end of the DMA
 * submission wakes it), and the bound on an operation's iov.
 */

#include "iface_test.h"

#include <climits>
#include <cstring>
#include <poll.h>

using namespace gaudi_drv_test;

namespace {

void comp_cb(uct_completion_t *self)
{
}

/* Readable within @a timeout_ms? */
int fd_readable(int fd, int timeout_ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};

    return poll(&pfd, 1, timeout_ms);
}

/* In a test's child: the copy iface and the device, a put of 64 KiB from
 * host memory in flight, and the iface armed for its end */
struct armed_put {
    static const size_t size = 64 * 1024;

    std::vector<char> src;
    uct_completion_t  comp = {comp_cb, 1, UCS_OK};
    uct_gaudi_dev_t   *dev = NULL;
    uct_gaudi_mem_t   mem  = {};
    copy_iface        c;
    int               fd   = -1;

    /* ASSERT-style: check HasFatalFailure() after */
    void start(char fill) {
        uct_iov_t iov;

        src.assign(size, fill);
        ASSERT_NO_FATAL_FAILURE(open_iface_and_device(&c, &dev));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &mem));
        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));

        set_iov(&iov, src.data(), size);
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva, 0, &comp));
        ASSERT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
    }
};

} /* namespace */

/* A worker that sleeps on the event fd is woken by the end of its DMA, and
 * only then: the fd stays quiet while the submission runs */
TEST(gaudi_iface, wakeup_on_dma_completion) {
    static const size_t size = 4ul << 20;
    emu_node node(1);

    /* each command takes 300 ms: in flight when the worker sleeps */
    node.env("UCX_GAUDI_EMU_LATENCY", "300ms");
    run_with_iface(node, size, [](copy_iface &c, uct_gaudi_dev_t *dev,
                                  uct_gaudi_mem_t &mem) {
        std::vector<char> src(size), dst(size);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_iov_t iov;
        size_t i;
        int fd;

        for (i = 0; i < size; ++i) {
            src[i] = (char)(i * 7 + 3);
        }

        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));
        /* nothing in flight: armed, and nothing will come */
        ASSERT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
        EXPECT_EQ(0, fd_readable(fd, 0));

        set_iov(&iov, src.data(), size);
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva, 0, &comp));

        ASSERT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
        EXPECT_EQ(0, fd_readable(fd, 0));      /* still running */
        EXPECT_EQ(1, fd_readable(fd, 10000));  /* sleep until it ends */
        EXPECT_EQ(1, comp.count);              /* progress reaps it */
        /* signalled since the last arm: progress first */
        EXPECT_EQ(UCS_ERR_BUSY, uct_iface_event_arm(c.iface,
                                                    UCT_EVENT_SEND_COMP));
        /* what woke it is the end of the submission: one progress reaps */
        EXPECT_EQ(1u, uct_worker_progress(c.worker));
        EXPECT_EQ(0, comp.count);
        EXPECT_EQ(UCS_OK, comp.status);
        EXPECT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));

        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, dst.data(),
                                                  (void*)mem.dva, size,
                                                  UCT_GAUDI_DMA_D2H));
        EXPECT_EQ(0, memcmp(src.data(), dst.data(), size));
    });
}

/* An arm with a submission that ended already says so (BUSY) instead of
 * letting the worker sleep through it */
TEST(gaudi_iface, arm_after_completion_is_busy) {
    static const size_t size = 64 * 1024;
    emu_node node(1, "gaudi2", "drm", "inline");

    run_with_iface(node, size, [](copy_iface &c, uct_gaudi_dev_t *dev,
                                  uct_gaudi_mem_t &mem) {
        std::vector<char> src(size, 1);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_iov_t iov;
        int fd;

        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));

        set_iov(&iov, src.data(), size);
        /* inline execution: done by the time the CS ioctl returns */
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva, 0, &comp));
        EXPECT_EQ(UCS_ERR_BUSY, uct_iface_event_arm(c.iface,
                                                    UCT_EVENT_SEND_COMP));
        while (comp.count > 0) {
            uct_worker_progress(c.worker);
        }
        EXPECT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
        EXPECT_EQ(0, fd_readable(fd, 0));
    });
}

/* More iov entries than MAX_IOV would overrun the operation (its copies and
 * its host mappings): refused in every build, not only where UCX checks
 * parameters */
TEST(gaudi_iface, zcopy_iov_bound) {
    static const size_t size = 4096;
    emu_node node(1);

    node.env("UCX_GAUDI_COPY_MAX_IOV", "2");
    run_with_iface(node, 3 * size, [](copy_iface &c, uct_gaudi_dev_t *dev,
                                      uct_gaudi_mem_t &mem) {
        std::vector<char> src(3 * size, 5);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_iov_t iov[3];
        ucs_status_t status;
        unsigned i;

        for (i = 0; i < 3; ++i) {
            set_iov(&iov[i], &src[i * size], size);
        }

        {
            log_capture log;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_put_zcopy(c.ep, iov, 3, mem.dva, 0, &comp));
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_get_zcopy(c.ep, iov, 3, mem.dva, 0, &comp));
            EXPECT_EQ(2u, log.count("more than MAX_IOV=2"));
        }

        status = uct_ep_put_zcopy(c.ep, iov, 2, mem.dva, 0, &comp);
        ASSERT_TRUE((status == UCS_INPROGRESS) || (status == UCS_OK));
        while ((status == UCS_INPROGRESS) && (comp.count > 0)) {
            uct_worker_progress(c.worker);
        }
        EXPECT_EQ(UCS_OK, comp.status);
    });
}

/* A worker that sleeps is woken when its submission outlives
 * UCX_GAUDI_DMA_TIMEOUT, as one that polls would see it fail, not when the
 * device gets to it (here: 60 s of modelled latency) */
TEST(gaudi_iface, wakeup_on_dma_timeout) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_LATENCY", "60s");
    node.env("UCX_GAUDI_DMA_TIMEOUT", "0.5s");
    /* the test's put is the one to time out, not the DMA measurement at
     * the iface's open (iface_perf.cc) */
    node.env("UCX_GAUDI_PERF_PROBE", "n");
    node.run([]() {
        armed_put p;

        ASSERT_NO_FATAL_FAILURE(p.start(9));
        EXPECT_EQ(1, fd_readable(p.fd, 20000));
        {
            log_capture log;
            uct_worker_progress(p.c.worker);
        }
        EXPECT_EQ(0, p.comp.count);
        EXPECT_EQ(UCS_ERR_TIMED_OUT, p.comp.status);
        EXPECT_TRUE(p.dev->failed);

        uct_gaudi_mem_free(p.dev, &p.mem);
        uct_gaudi_own_release(p.dev);
        {
            log_capture log;
            close_copy_iface(&p.c);
        }
    });
}

/* Closing an iface whose wake-up thread waits for a submission returns
 * (within the DMA timeout that bounds the submission) */
TEST(gaudi_iface, close_while_armed) {
    emu_node(1).env("UCX_GAUDI_EMU_LATENCY", "200ms").run([]() {
        armed_put p;

        ASSERT_NO_FATAL_FAILURE(p.start(3));
        close_copy_iface(&p.c);        /* completes the submission, too */
        EXPECT_EQ(0, p.comp.count);
        EXPECT_EQ(UCS_OK, p.comp.status);

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(p.dev, &p.mem));
        uct_gaudi_own_release(p.dev);
    });
}

/* One zero-copy operation may mix Gaudi and host memory in its iov: it goes
 * to a queue that reaches both (the device-to-device engine reaches only
 * the device's own memory) */
TEST(gaudi_iface, zcopy_mixed_iov) {
    static const size_t size = 64 * 1024;
    emu_node node(1);

    run_with_iface(node, 2 * size, [](copy_iface &c, uct_gaudi_dev_t *dev,
                                      uct_gaudi_mem_t &dst) {
        std::vector<char> host(size), pattern(size), out(2 * size);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        ucs_status_t status;
        uct_gaudi_mem_t src;
        uct_iov_t iov[2];
        size_t i;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &src));
        for (i = 0; i < size; ++i) {
            pattern[i] = (char)(i * 13 + 1);
            host[i]    = (char)(i * 5 + 2);
        }
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, (void*)src.dva,
                                                  pattern.data(), size,
                                                  UCT_GAUDI_DMA_H2D));

        /* Gaudi memory, then host memory, into Gaudi memory */
        set_iov(&iov[0], (void*)src.dva, size);
        set_iov(&iov[1], host.data(), size);
        status = uct_ep_put_zcopy(c.ep, iov, 2, dst.dva, 0, &comp);
        ASSERT_TRUE((status == UCS_INPROGRESS) || (status == UCS_OK))
                << ucs_status_string(status);
        while ((status == UCS_INPROGRESS) && (comp.count > 0)) {
            uct_worker_progress(c.worker);
        }
        EXPECT_EQ(UCS_OK, comp.status);
        EXPECT_FALSE(dev->failed);

        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, out.data(),
                                                  (void*)dst.dva, 2 * size,
                                                  UCT_GAUDI_DMA_D2H));
        EXPECT_EQ(0, memcmp(out.data(), pattern.data(), size));
        EXPECT_EQ(0, memcmp(out.data() + size, host.data(), size));

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &src));
    });
}
