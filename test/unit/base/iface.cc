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

} /* namespace */

/* A worker that sleeps on the event fd is woken by the end of its DMA, and
 * only then: the fd stays quiet while the submission runs */
TEST(gaudi_iface, wakeup_on_dma_completion) {
    state_dir dir;

    run_in_child([&]() {
        static const size_t size = 4ul << 20;
        std::vector<char> src(size), dst(size);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        uct_iov_t iov;
        copy_iface c;
        size_t i;
        int fd;

        set_emu_env(1, dir);
        /* each command takes 300 ms: in flight when the worker sleeps */
        setenv("UCX_GAUDI_EMU_LATENCY", "300ms", 1);
        open_copy_iface(&c);
        ASSERT_FALSE(HasFatalFailure());
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &mem));
        for (i = 0; i < size; ++i) {
            src[i] = (char)(i * 7 + 3);
        }

        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));
        /* nothing in flight: armed, and nothing will come */
        ASSERT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
        EXPECT_EQ(0, fd_readable(fd, 0));

        iov.buffer = src.data();
        iov.length = size;
        iov.memh   = UCT_MEM_HANDLE_NULL;
        iov.stride = 0;
        iov.count  = 1;
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
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
        close_copy_iface(&c);
    });
}

/* An arm with a submission that ended already says so (BUSY) instead of
 * letting the worker sleep through it */
TEST(gaudi_iface, arm_after_completion_is_busy) {
    state_dir dir;

    run_in_child([&]() {
        static const size_t size = 64 * 1024;
        std::vector<char> src(size, 1);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        uct_iov_t iov;
        copy_iface c;
        int fd;

        set_emu_env(1, dir, "gaudi2", "drm", "inline");
        open_copy_iface(&c);
        ASSERT_FALSE(HasFatalFailure());
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &mem));
        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));

        iov.buffer = src.data();
        iov.length = size;
        iov.memh   = UCT_MEM_HANDLE_NULL;
        iov.stride = 0;
        iov.count  = 1;
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

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
        close_copy_iface(&c);
    });
}

/* More iov entries than MAX_IOV would overrun the operation (its copies and
 * its host mappings): refused in every build, not only where UCX checks
 * parameters */
TEST(gaudi_iface, zcopy_iov_bound) {
    state_dir dir;

    run_in_child([&]() {
        static const size_t size = 4096;
        std::vector<char> src(3 * size, 5);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        uct_iov_t iov[3];
        copy_iface c;
        ucs_status_t status;
        unsigned i;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_COPY_MAX_IOV", "2", 1);
        open_copy_iface(&c);
        ASSERT_FALSE(HasFatalFailure());
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 3 * size, &mem));
        for (i = 0; i < 3; ++i) {
            iov[i].buffer = &src[i * size];
            iov[i].length = size;
            iov[i].memh   = UCT_MEM_HANDLE_NULL;
            iov[i].stride = 0;
            iov[i].count  = 1;
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

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
        close_copy_iface(&c);
    });
}

/* A worker that sleeps is woken when its submission outlives
 * UCX_GAUDI_DMA_TIMEOUT, as one that polls would see it fail, not when the
 * device gets to it (here: 60 s of modelled latency) */
TEST(gaudi_iface, wakeup_on_dma_timeout) {
    state_dir dir;

    run_in_child([&]() {
        static const size_t size = 64 * 1024;
        std::vector<char> src(size, 9);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        uct_iov_t iov;
        copy_iface c;
        int fd;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_EMU_LATENCY", "60s", 1);
        setenv("UCX_GAUDI_DMA_TIMEOUT", "0.5s", 1);
        open_copy_iface(&c);
        ASSERT_FALSE(HasFatalFailure());
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &mem));
        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));

        iov.buffer = src.data();
        iov.length = size;
        iov.memh   = UCT_MEM_HANDLE_NULL;
        iov.stride = 0;
        iov.count  = 1;
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva, 0, &comp));
        ASSERT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
        EXPECT_EQ(1, fd_readable(fd, 20000));
        {
            log_capture log;
            uct_worker_progress(c.worker);
        }
        EXPECT_EQ(0, comp.count);
        EXPECT_EQ(UCS_ERR_TIMED_OUT, comp.status);
        EXPECT_TRUE(dev->failed);

        uct_gaudi_mem_free(dev, &mem);
        uct_gaudi_own_release(dev);
        {
            log_capture log;
            close_copy_iface(&c);
        }
    });
}

/* Closing an iface whose wake-up thread waits for a submission returns
 * (within the DMA timeout that bounds the submission) */
TEST(gaudi_iface, close_while_armed) {
    state_dir dir;

    run_in_child([&]() {
        static const size_t size = 64 * 1024;
        std::vector<char> src(size, 3);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        uct_iov_t iov;
        copy_iface c;
        int fd;

        set_emu_env(1, dir);
        setenv("UCX_GAUDI_EMU_LATENCY", "200ms", 1);
        open_copy_iface(&c);
        ASSERT_FALSE(HasFatalFailure());
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &mem));
        ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(c.iface, &fd));

        iov.buffer = src.data();
        iov.length = size;
        iov.memh   = UCT_MEM_HANDLE_NULL;
        iov.stride = 0;
        iov.count  = 1;
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva, 0, &comp));
        ASSERT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));
        close_copy_iface(&c);        /* completes the submission, too */
        EXPECT_EQ(0, comp.count);
        EXPECT_EQ(UCS_OK, comp.status);

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
    });
}

/* One zero-copy operation may mix Gaudi and host memory in its iov: it goes
 * to a queue that reaches both (the device-to-device engine reaches only
 * the device's own memory) */
TEST(gaudi_iface, zcopy_mixed_iov) {
    state_dir dir;

    run_in_child([&]() {
        static const size_t size = 64 * 1024;
        std::vector<char> host(size), pattern(size), out(2 * size);
        uct_completion_t comp = {comp_cb, 1, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t dst, src;
        ucs_status_t status;
        uct_iov_t iov[2];
        copy_iface c;
        size_t i;

        set_emu_env(1, dir);
        open_copy_iface(&c);
        ASSERT_FALSE(HasFatalFailure());
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 2 * size, &dst));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &src));
        for (i = 0; i < size; ++i) {
            pattern[i] = (char)(i * 13 + 1);
            host[i]    = (char)(i * 5 + 2);
        }
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, (void*)src.dva,
                                                  pattern.data(), size,
                                                  UCT_GAUDI_DMA_H2D));

        /* Gaudi memory, then host memory, into Gaudi memory */
        iov[0].buffer = (void*)src.dva;
        iov[1].buffer = host.data();
        for (i = 0; i < 2; ++i) {
            iov[i].length = size;
            iov[i].memh   = UCT_MEM_HANDLE_NULL;
            iov[i].stride = 0;
            iov[i].count  = 1;
        }
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
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &dst));
        uct_gaudi_own_release(dev);
        close_copy_iface(&c);
    });
}
