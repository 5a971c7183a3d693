/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_err.h"


ucs_status_t uct_gaudi_err_status(int err)
{
    switch (err) {
    case 0:
        return UCS_OK;
    case EBUSY:
        return UCS_ERR_BUSY;         /* owned by another process, or reset */
    case EAGAIN:
        return UCS_ERR_NO_RESOURCE;  /* CS queue full; device resetting */
    case ENOMEM:
    case ENOSPC:
        return UCS_ERR_NO_MEMORY;
    case EINVAL:
        return UCS_ERR_INVALID_PARAM;
    case EFAULT:
        return UCS_ERR_INVALID_ADDR;
    case EPERM:
    case EACCES:
        return UCS_ERR_REJECTED;     /* 1.13.1 has no UCS_ERR_PERMISSION */
    case ENODEV:
    case ENXIO:
    case ENOENT:
        return UCS_ERR_NO_DEVICE;
    case ETIMEDOUT:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    case ENOTTY:
    case EOPNOTSUPP:
    case ENOSYS:
        return UCS_ERR_UNSUPPORTED;
    case EEXIST:
        return UCS_ERR_ALREADY_EXISTS;
    case EMFILE:
    case ENFILE:
        return UCS_ERR_EXCEEDS_LIMIT;
    case ERANGE:
    case EOVERFLOW:
    case E2BIG:
        return UCS_ERR_OUT_OF_RANGE;
    case EINTR:
        return UCS_ERR_CANCELED;
    case EIO:
    default:
        return UCS_ERR_IO_ERROR;
    }
}

int uct_gaudi_err_is_fatal(int err)
{
    return (err == EIO) || (err == ENODEV) || (err == ETIMEDOUT);
}
