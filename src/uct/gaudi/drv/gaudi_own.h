/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_OWN_H_
#define UCT_GAUDI_OWN_H_

/*
 * Ownership of one Gaudi per process. The compute node admits one process
 * (a second open gets EBUSY), so the device is opened once, shared by all
 * users in the process (refcounted) and closed by the last release. A
 * compute node the application already opened is adopted, never reopened.
 */

#include "gaudi_device.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/**
 * Get the device of this process, opening it on first use: adopt a compute
 * node this process already holds, else the device UCX_GAUDI_DEVICE selects,
 * else the one the rules of Habana's runtime assign (gaudi_assign.h). The
 * choice and its rule are logged at info level.
 *
 * @return UCS_OK; UCS_ERR_BUSY when every candidate device, or the one
 *         device a rule forces, is owned by other processes (with one
 *         message saying so; no other device is taken); UCS_ERR_NO_DEVICE
 *         when there is no Gaudi or the rules name none;
 *         UCS_ERR_INVALID_PARAM for malformed assignment variables;
 *         UCS_ERR_UNSUPPORTED when only unsupported (Gaudi3) devices exist;
 *         other errors, logged.
 */
ucs_status_t uct_gaudi_own_acquire(uct_gaudi_dev_t **dev_p);


/* Drop a reference; the last one releases memory and DMA state and closes
 * the compute node (an adopted one stays open) */
void uct_gaudi_own_release(uct_gaudi_dev_t *dev);

END_C_DECLS

#endif
