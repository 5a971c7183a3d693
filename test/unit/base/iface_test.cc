/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "iface_test.h"

#include <alloca.h>
#include <cstring>

namespace gaudi_drv_test {

void open_copy_iface(copy_iface *c, ucs_status_t expected)
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
    ucs_status_t status;
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

    ASSERT_EQ(UCS_OK, uct_md_iface_config_read(c->md, UCT_GAUDI_COPY_TL_NAME,
                                               NULL, NULL, &iface_config));
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = UCT_GAUDI_COPY_TL_NAME;
    params.mode.device.dev_name = "gaudi0";
    status = uct_iface_open(c->md, c->worker, &params, iface_config,
                            &c->iface);
    uct_config_release(iface_config);
    ASSERT_EQ(expected, status);
    if (status != UCS_OK) {
        c->iface = NULL;
        return;
    }

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
    if (c->ep != NULL) {
        uct_ep_destroy(c->ep);
    }
    if (c->iface != NULL) {
        uct_iface_close(c->iface);
    }
    uct_md_close(c->md);
    uct_worker_destroy(c->worker);
    ucs_async_context_destroy(c->async);
}

void open_iface_and_device(copy_iface *c, uct_gaudi_dev_t **dev)
{
    open_copy_iface(c);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    *dev = acquire_device();
    ASSERT_TRUE(*dev != NULL);
}

void run_with_iface(const emu_node &node, size_t size, const iface_fn &fn)
{
    node.run([&]() {
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_iface_and_device(&c, &dev));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, size, &mem));
        fn(c, dev, mem);
        if (::testing::Test::HasFatalFailure()) {
            return;
        }

        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
        close_copy_iface(&c);
    });
}

void set_iov(uct_iov_t *iov, void *buffer, size_t length)
{
    iov->buffer = buffer;
    iov->length = length;
    iov->memh   = UCT_MEM_HANDLE_NULL;
    iov->stride = 0;
    iov->count  = 1;
}

} /* namespace gaudi_drv_test */
