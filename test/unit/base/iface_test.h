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
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_component_h     component;
    uct_md_h            md;
    uct_iface_h         iface;
    uct_ep_h            ep;
};


/* Open it (gtest assertions: check HasFatalFailure() after) */
void open_copy_iface(copy_iface *c);


void close_copy_iface(copy_iface *c);

} /* namespace gaudi_drv_test */

#endif
