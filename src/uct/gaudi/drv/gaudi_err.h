/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ERR_H_
#define UCT_GAUDI_ERR_H_

/*
 * The one error idiom of the driver library. Every driver call (a seam or
 * ioctl call returning -1 with errno set on failure) is evaluated through
 * UCT_GAUDI_FUNC (on the owned device, gaudi_health.h) or
 * UCT_GAUDI_NODE_FUNC (on a node this process does not own: discovery);
 * on failure it logs the call, where (device or node), the driver operation
 * (for ioctls) and the error text at the given level, maps errno to a
 * ucs_status_t, and, for the owned device, moves it to the failed state on
 * a reset, removal or timeout. The only calls outside it are the probes
 * whose errno is the answer itself (gaudi_ioctl.c,
 * uct_gaudi_share_can_import). This part knows no device: discovery, below
 * the device object, uses it too.
 */

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


/*
 * Evaluate @a _call; on failure log it with @a _where, and yield the status
 * @a _on_error computes, which may use _name (the driver operation, or the
 * call's text) and _err (errno)
 */
#define UCT_GAUDI_FUNC_WHERE(_where, _call, _log_level, _on_error) \
    ({ \
        ucs_status_t _status = UCS_OK; \
        const char *_op, *_name; \
        int _err; \
        \
        uct_gaudi_ioctl_op_reset(); \
        if (ucs_unlikely((_call) < 0)) { \
            _err  = errno; \
            _op   = uct_gaudi_ioctl_failed_op(); \
            _name = (_op[0] != '\0') ? _op : UCS_PP_MAKE_STRING(_call); \
            ucs_log((_log_level), "%s failed on %s%s%s%s: %s", \
                    UCS_PP_MAKE_STRING(_call), (_where), \
                    (_op[0] != '\0') ? " (" : "", _op, \
                    (_op[0] != '\0') ? ")" : "", strerror(_err)); \
            (void)_name; \
            _status = (_on_error); \
        } \
        _status; \
    })


/* A driver call on the node @a _path, which this process does not own */
#define UCT_GAUDI_NODE_FUNC(_path, _call, _log_level) \
    UCT_GAUDI_FUNC_WHERE(_path, _call, _log_level, uct_gaudi_err_status(_err))

END_C_DECLS

#endif
