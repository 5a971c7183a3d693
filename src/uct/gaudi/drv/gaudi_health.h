/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_HEALTH_H_
#define UCT_GAUDI_HEALTH_H_

/*
 * The owned device's health: the failed state, entered once (the first
 * reason wins and is logged once) when a driver call says the device was
 * reset, removed or timed out, and reported by every later operation. The
 * driver calls on the device go through UCT_GAUDI_FUNC, the error idiom
 * (gaudi_err.h) with the device's error rule.
 */

#include "gaudi_device.h"
#include "gaudi_err.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/* Name to print for @a dev, or a generic name when there is no device */
const char *uct_gaudi_health_dev_name(const uct_gaudi_dev_t *dev);


/**
 * Turn a failed call on @a dev into a status: map @a err and, when @a dev
 * is given and the error means reset/removal (or EBUSY with a
 * non-operational device), move the device to the failed state.
 */
ucs_status_t uct_gaudi_health_handle_error(uct_gaudi_dev_t *dev,
                                           const char *call, int err);


/* A driver call on the owned device @a _dev (may be NULL: nothing to fail) */
#define UCT_GAUDI_FUNC(_dev, _call, _log_level) \
    UCT_GAUDI_FUNC_WHERE(uct_gaudi_health_dev_name(_dev), _call, _log_level, \
                         uct_gaudi_health_handle_error((_dev), _name, _err))


#define UCT_GAUDI_FUNC_LOG_ERR(_dev, _call) \
    UCT_GAUDI_FUNC(_dev, _call, UCS_LOG_LEVEL_ERROR)


/**
 * UCS_OK if @a dev is usable; otherwise log "device gaudiN failed: <reason>"
 * and return UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_gaudi_health_check(uct_gaudi_dev_t *dev);


/* Move @a dev to the failed state (first reason wins; logged once);
 * 1 if this call failed it, 0 if it had failed already */
int uct_gaudi_health_set_failed(uct_gaudi_dev_t *dev, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);


/* Ask the driver whether @a dev is operational (INFO DEVICE_STATUS) */
int uct_gaudi_health_is_operational(uct_gaudi_dev_t *dev);

END_C_DECLS

#endif
