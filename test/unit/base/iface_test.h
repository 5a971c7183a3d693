/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_IFACE_TEST_H_
#define GAUDI_IFACE_TEST_H_

/*
 * For the tests of the base iface class through the UCT API, as UCP uses
 * it: an iface of the copy transport on the process's device, with one ep
 * to itself.
 */

#include "../drv/drv_test.h"

extern "C" {
#include <uct/api/uct.h>
#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/async/async.h>
}

namespace gaudi_drv_test {

struct copy_iface {
    ucs_async_context_t *async     = NULL;
    uct_worker_h        worker     = NULL;
    uct_component_h     component  = NULL;
    uct_md_h            md         = NULL;
    uct_iface_h         iface      = NULL;
    uct_ep_h            ep         = NULL;
};


/* Open it (gtest assertions: check HasFatalFailure() after); with
 * @a expected other than UCS_OK, check that the iface open fails so and
 * leave no iface */
void open_copy_iface(copy_iface *c, ucs_status_t expected = UCS_OK);


void close_copy_iface(copy_iface *c);


/* In a child: open_copy_iface(), then acquire the process's device (for
 * the test's own allocations and copies); ASSERT-style */
void open_iface_and_device(copy_iface *c, uct_gaudi_dev_t **dev);


/**
 * In a forked child of @a node: the copy iface, the process's device and
 * @a size bytes of its memory for @a fn. After @a fn (unless it failed
 * fatally) the memory is freed (EXPECTing success), the device released and
 * the iface closed, as the tests end.
 */
typedef std::function<void(copy_iface&, uct_gaudi_dev_t*, uct_gaudi_mem_t&)>
        iface_fn;
void run_with_iface(const emu_node &node, size_t size, const iface_fn &fn);


/* One buffer (host or device memory) without a memory handle */
void set_iov(uct_iov_t *iov, void *buffer, size_t length);

} /* namespace gaudi_drv_test */

#endif
