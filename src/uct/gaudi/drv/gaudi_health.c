/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_health.h"

#include <ucs/arch/cpu.h>
#include <ucs/sys/string.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>


const char *uct_gaudi_health_dev_name(const uct_gaudi_dev_t *dev)
{
    return (dev == NULL) ? "gaudi" : dev->name;
}

ucs_status_t uct_gaudi_health_handle_error(uct_gaudi_dev_t *dev,
                                           const char *call, int err)
{
    ucs_status_t status = uct_gaudi_err_status(err);
    char what[64];

    if (dev == NULL) {
        return status;
    }

    if (uct_gaudi_err_is_fatal(err)) {
        uct_gaudi_health_set_failed(dev, "%s: %s", call, strerror(err));
    } else if (err == EBUSY) {
        /* on an owned fd, EBUSY means the device is not operational; asking
         * is a driver call of its own, which reuses the buffer @a call may
         * point to */
        ucs_strncpy_safe(what, call, sizeof(what));
        if (!uct_gaudi_health_is_operational(dev)) {
            uct_gaudi_health_set_failed(dev, "%s: device is not operational",
                                        what);
            status = UCS_ERR_IO_ERROR;
        }
    }

    return status;
}

ucs_status_t uct_gaudi_health_check(uct_gaudi_dev_t *dev)
{
    if (ucs_likely(!dev->failed)) {
        return UCS_OK;
    }

    /* the failure was logged once, when it happened; every later call is
     * refused (and counted by its caller), not logged again */
    ucs_debug("device %s failed: %s", dev->name, dev->fail_reason);
    return UCS_ERR_IO_ERROR;
}

/* Wake the async handler that watches the driver's events of @a dev
 * (gaudi_reset.c): it releases what keeps a failed device open. Written
 * here, not called there, so that the health of a device, which everything
 * in drv/ reports to, depends on nothing (a no-op on a device not watched) */
static void uct_gaudi_dev_wake_watcher(uct_gaudi_dev_t *dev)
{
    uint64_t one = 1;

    if ((dev->event_fd >= 0) &&
        (write(dev->event_fd, &one, sizeof(one)) != sizeof(one))) {
        ucs_diag("%s: failed to signal its event fd: %m", dev->name);
    }
}

int uct_gaudi_health_set_failed(uct_gaudi_dev_t *dev, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&dev->lock);
    if (dev->failed) {
        pthread_mutex_unlock(&dev->lock);
        return 0;
    }

    va_start(ap, fmt);
    vsnprintf(dev->fail_reason, sizeof(dev->fail_reason), fmt, ap);
    va_end(ap);
    /* said before the flag is up and under the lock: whoever sees the
     * device failed (a racing caller of this function, or the data path's
     * unlocked check) returns its error after the reason was logged */
    ucs_error("device %s failed: %s", dev->name, dev->fail_reason);
    ucs_memory_cpu_store_fence();
    dev->failed = 1;
    pthread_mutex_unlock(&dev->lock);

    /* what keeps it open goes now, from the async thread */
    uct_gaudi_dev_wake_watcher(dev);
    return 1;
}

int uct_gaudi_health_is_operational(uct_gaudi_dev_t *dev)
{
    struct hl_info_device_status dev_status;

    /* no device to fail: this is the question whether to fail it */
    memset(&dev_status, 0, sizeof(dev_status));
    if (UCT_GAUDI_FUNC(NULL, uct_gaudi_ioctl_info(dev->fd,
                                                  HL_INFO_DEVICE_STATUS,
                                                  &dev_status,
                                                  sizeof(dev_status)),
                       UCS_LOG_LEVEL_DEBUG) != UCS_OK) {
        return 0;
    }

    return dev_status.status == HL_DEVICE_STATUS_OPERATIONAL;
}
