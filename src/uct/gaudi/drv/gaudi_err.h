/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ERR_H_
#define UCT_GAUDI_ERR_H_

#include "gaudi_device.h"
#include "gaudi_ioctl.h"

#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/preprocessor.h>
#include <ucs/type/status.h>
#include <errno.h>
#include <string.h>

BEGIN_C_DECLS




/**
 * Map an errno value of the habanalabs driver (driver-abi.md 10) to a
 * UCS status.
 */
ucs_status_t uct_gaudi_err_status(int err);


/**
 * Whether @a err means the device was reset, removed or timed out, so the
 * context on it is dead.
 */
int uct_gaudi_err_is_fatal(int err);


/* Name to print for @a dev, or a generic name when there is no device */
const char *uct_gaudi_err_dev_name(const uct_gaudi_dev_t *dev);


/**
 * Turn a failed call into a status: map @a err and, when @a dev is given and
 * the error means reset/removal (or EBUSY with a non-operational device),
 * move the device to the failed state.
 */
ucs_status_t uct_gaudi_err_handle(uct_gaudi_dev_t *dev, const char *call,
                                  int err);


/*
 * The one error idiom of the driver library. Every driver call (a seam or
 * ioctl call returning -1 with errno set on failure) is evaluated through
 * UCT_GAUDI_FUNC (on the owned device) or UCT_GAUDI_NODE_FUNC (on a node
 * this process does not own: discovery); on failure it logs the call, where
 * (device or node), the driver operation (for ioctls) and the error text at
 * @a _log_level, maps errno to a ucs_status_t, and, for the owned device,
 * moves it to the failed state on a reset, removal or timeout. The only
 * calls outside it are the probes whose errno is the answer itself
 * (gaudi_ioctl.c, uct_gaudi_share_can_import).
 */
#define UCT_GAUDI_FUNC_WHERE(_dev, _where, _call, _log_level) \
    ({ \
        ucs_status_t _status = UCS_OK; \
        const char *_op; \
        int _err; \
        \
        uct_gaudi_ioctl_op_reset(); \
        if (ucs_unlikely((_call) < 0)) { \
            _err = errno; \
            _op  = uct_gaudi_ioctl_failed_op(); \
            ucs_log((_log_level), "%s failed on %s%s%s%s: %s", \
                    UCS_PP_MAKE_STRING(_call), (_where), \
                    (_op[0] != '\0') ? " (" : "", _op, \
                    (_op[0] != '\0') ? ")" : "", strerror(_err)); \
            _status = uct_gaudi_err_handle((_dev), (_op[0] != '\0') ? _op : \
                                           UCS_PP_MAKE_STRING(_call), _err); \
        } \
        _status; \
    })


/* A driver call on the owned device @a _dev (may be NULL: nothing to fail) */
#define UCT_GAUDI_FUNC(_dev, _call, _log_level) \
    UCT_GAUDI_FUNC_WHERE(_dev, uct_gaudi_err_dev_name(_dev), _call, _log_level)


#define UCT_GAUDI_FUNC_LOG_ERR(_dev, _call) \
    UCT_GAUDI_FUNC(_dev, _call, UCS_LOG_LEVEL_ERROR)


/* A driver call on the node @a _path, which this process does not own */
#define UCT_GAUDI_NODE_FUNC(_path, _call, _log_level) \
    UCT_GAUDI_FUNC_WHERE(NULL, _path, _call, _log_level)


/**
 * UCS_OK if @a dev is usable; otherwise log "device gaudiN failed: <reason>"
 * and return UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_gaudi_dev_check(uct_gaudi_dev_t *dev);


/* Move @a dev to the failed state (first reason wins; logged once) */
void uct_gaudi_dev_set_failed(uct_gaudi_dev_t *dev, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);


/* Ask the driver whether @a dev is operational (INFO DEVICE_STATUS) */
int uct_gaudi_dev_is_operational(uct_gaudi_dev_t *dev);

END_C_DECLS

#endif
