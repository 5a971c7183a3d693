/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Wake-up of the Gaudi transports' base iface (base/gaudi_event.c), through
 * the UCT API as UCP uses it: an iface with a zero-copy operation in flight
 * is armed, the caller sleeps in poll() on the iface's event fd, and the end
 * of the DMA submission wakes it.
 */

#include "iface_common.h"

#include <climits>
#include <cstring>
#include <poll.h>

using namespace gaudi_base_test;

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
        while (comp.count > 0) {
            uct_worker_progress(c.worker);
        }
        EXPECT_EQ(UCS_OK, comp.status);
        EXPECT_EQ(UCS_OK, uct_iface_event_arm(c.iface, UCT_EVENT_SEND_COMP));

        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, dst.data(),
                                                  (void*)mem.dva, size,
                                                  UCT_GAUDI_DMA_D2H));
        EXPECT_EQ(0, memcmp(src.data(), dst.data(), size));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_dev_release(dev);
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
        uct_gaudi_dev_release(dev);
        close_copy_iface(&c);
    });
}
