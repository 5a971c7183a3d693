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

#include "base_common.h"

#include <uct/api/uct.h>
#include <ucs/async/async.h>
#include <climits>
#include <cstring>
#include <poll.h>

using namespace gaudi_base_test;

namespace {

/* An iface of gaudi_copy on the process's device, with one ep to itself */
struct copy_iface {
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_component_h     component;
    uct_md_h            md;
    uct_iface_h         iface;
    uct_ep_h            ep;
};

void open_copy_iface(copy_iface *c)
{
    uct_component_h *components;
    uct_component_attr_t attr;
    uct_md_config_t *md_config;
    uct_iface_config_t *iface_config;
    uct_iface_params_t params;
    uct_ep_params_t ep_params;
    uct_iface_addr_t *addr;
    uct_device_addr_t *dev_addr;
    uct_iface_attr_t iface_attr;
    unsigned i, num;

    ASSERT_EQ(UCS_OK, ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                               &c->async));
    ASSERT_EQ(UCS_OK, uct_worker_create(c->async, UCS_THREAD_MODE_SINGLE,
                                        &c->worker));
    ASSERT_EQ(UCS_OK, uct_query_components(&components, &num));
    c->component = NULL;
    for (i = 0; i < num; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        ASSERT_EQ(UCS_OK, uct_component_query(components[i], &attr));
        if (!strcmp(attr.name, "gaudi_cpy")) {
            c->component = components[i];
        }
    }
    uct_release_component_list(components);
    ASSERT_TRUE(c->component != NULL);

    ASSERT_EQ(UCS_OK, uct_md_config_read(c->component, NULL, NULL,
                                         &md_config));
    ASSERT_EQ(UCS_OK, uct_md_open(c->component, "gaudi_cpy", md_config,
                                  &c->md));
    uct_config_release(md_config);

    ASSERT_EQ(UCS_OK, uct_md_iface_config_read(c->md, "gaudi_copy", NULL,
                                               NULL, &iface_config));
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "gaudi_copy";
    params.mode.device.dev_name = "gaudi0";
    ASSERT_EQ(UCS_OK, uct_iface_open(c->md, c->worker, &params, iface_config,
                                     &c->iface));
    uct_config_release(iface_config);
    uct_iface_progress_enable(c->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    ASSERT_EQ(UCS_OK, uct_iface_query(c->iface, &iface_attr));
    EXPECT_TRUE(iface_attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_SEND_COMP);
    EXPECT_TRUE(iface_attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD);

    addr     = (uct_iface_addr_t*)alloca(iface_attr.iface_addr_len);
    dev_addr = (uct_device_addr_t*)alloca(iface_attr.device_addr_len + 1);
    ASSERT_EQ(UCS_OK, uct_iface_get_address(c->iface, addr));
    ASSERT_EQ(UCS_OK, uct_iface_get_device_address(c->iface, dev_addr));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = c->iface;
    ep_params.dev_addr   = dev_addr;
    ep_params.iface_addr = addr;
    ASSERT_EQ(UCS_OK, uct_ep_create(&ep_params, &c->ep));
}

void close_copy_iface(copy_iface *c)
{
    uct_ep_destroy(c->ep);
    uct_iface_close(c->iface);
    uct_md_close(c->md);
    uct_worker_destroy(c->worker);
    ucs_async_context_destroy(c->async);
}

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
        uct_gaudi_dev_release(dev);
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
        uct_gaudi_dev_release(dev);
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
        uct_gaudi_dev_release(dev);
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
        uct_gaudi_dev_release(dev);
        close_copy_iface(&c);
    });
}
