/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_RESET_H_
#define UCT_GAUDI_RESET_H_

/*
 * Surviving a reset of the owned device (driver-abi.md §10.1). By default
 * the driver resets a device whose command submission timed out, or that
 * reported a fatal error, and kills (SIGKILL) every process that still has
 * it open; a process registered for the driver's events (an eventfd) is
 * told first and has the release watchdog (5 s, later 30 s) to close every
 * descriptor of the device: the compute fd, the mmaps of its command
 * buffers, the DMA-BUFs it exported (each holds the device's file).
 *
 * So the device is watched: an eventfd registered at open, served by UCS's
 * async thread. A reset event (or the device failing for any other reason)
 * fails every operation and releases all of the above at once, from that
 * thread, whatever the application's threads do meanwhile: the compute fd
 * is closed in place (the seam's revoke), so that a thread still inside an
 * ioctl never reaches a file that reused the number. The bookkeeping stays
 * until the last user releases the device; the next acquire opens it again.
 */

#include "gaudi_device.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/* Register for the driver's events on a device this process opened */
ucs_status_t uct_gaudi_reset_watch(uct_gaudi_dev_t *dev);


/* Stop watching (the last release; no handler runs once it returns) */
void uct_gaudi_reset_unwatch(uct_gaudi_dev_t *dev);




/* Release everything that keeps the device open, once (the device must be
 * failed already); called from the async thread */
void uct_gaudi_reset_release(uct_gaudi_dev_t *dev);

END_C_DECLS

#endif
