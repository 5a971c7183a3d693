/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_reset.h"
#include "gaudi_dma.h"
#include "gaudi_health.h"
#include "gaudi_ioctl.h"
#include "gaudi_lib.h"
#include "gaudi_mem.h"
#include "gaudi_seam.h"

#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <inttypes.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>


/* The events after which the device must be released (the driver resets
 * it, or it is gone) */
#define UCT_GAUDI_RESET_EVENTS \
    (HL_NOTIFIER_EVENT_DEVICE_RESET | HL_NOTIFIER_EVENT_DEVICE_UNAVAILABLE)


static ucs_status_t uct_gaudi_reset_register(uct_gaudi_dev_t *dev, int efd)
{
    struct hl_info_args args;

    memset(&args, 0, sizeof(args));
    args.op      = HL_INFO_REGISTER_EVENTFD;
    args.eventfd = (uint32_t)efd;
    return UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_INFO,
                                               &args),
                          UCS_LOG_LEVEL_DIAG);
}

/* Read and clear the driver's events of the device; 0 if it cannot tell */
static uint64_t uct_gaudi_reset_get_events(uct_gaudi_dev_t *dev)
{
    uint64_t events = 0;

    if (UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl_info(dev->fd, HL_INFO_GET_EVENTS,
                                                 &events, sizeof(events)),
                       UCS_LOG_LEVEL_DIAG) != UCS_OK) {
        return 0;
    }

    return events;
}

/* What made the driver reset, as far as its events tell */
static const char *uct_gaudi_reset_cause(uint64_t events)
{
    if (events & HL_NOTIFIER_EVENT_PAGE_FAULT) {
        /* an engine reached a device address nothing maps: on a Gaudi2 the
         * firmware's page-fault event resets the device */
        return " after a DMA page fault (a device address that nothing "
               "maps)";
    } else if (events & HL_NOTIFIER_EVENT_CS_TIMEOUT) {
        return " after a command submission timed out";
    }

    return "";
}

static void uct_gaudi_reset_event(int fd, ucs_event_set_types_t ev_types,
                                  void *arg)
{
    uct_gaudi_dev_t *dev = arg;
    uint64_t count, events;
    int failed_now;

    /* non-blocking: clears it (the driver's writes and our kicks add up) */
    if ((read(fd, &count, sizeof(count)) < 0) && (errno != EAGAIN)) {
        ucs_diag("%s: reading its event fd %d failed: %m", dev->name, fd);
    }

    if (!dev->revoked) {
        events = uct_gaudi_reset_get_events(dev);
        if (events & UCT_GAUDI_RESET_EVENTS) {
            failed_now = uct_gaudi_health_set_failed(
                    dev, "the driver reports %s%s (events 0x%" PRIx64 "); "
                    "every descriptor of the device is released before the "
                    "driver's release watchdog kills this process",
                    (events & HL_NOTIFIER_EVENT_DEVICE_RESET) ?
                    "a reset" : "the device unavailable",
                    uct_gaudi_reset_cause(events), events);
            if (!failed_now && (events & HL_NOTIFIER_EVENT_PAGE_FAULT)) {
                /* the call that saw the failure first said it (an aborted
                 * submission); why, only the events tell */
                uct_gaudi_log_once(UCS_LOG_LEVEL_WARN, "reset-page-fault",
                                   "device %s: the driver reports a reset%s "
                                   "(events 0x%" PRIx64 ")", dev->name,
                                   uct_gaudi_reset_cause(events), events);
            }
        } else if (events != 0) {
            ucs_diag("%s: driver events 0x%" PRIx64, dev->name, events);
        }
    }

    if (dev->failed) {
        uct_gaudi_reset_release(dev);
    }
}

ucs_status_t uct_gaudi_reset_watch(uct_gaudi_dev_t *dev)
{
    ucs_status_t status;
    int efd;

    dev->event_fd = -1;
    efd           = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd < 0) {
        ucs_error("%s: failed to create an event fd: %m", dev->name);
        return UCS_ERR_IO_ERROR;
    }

    status = uct_gaudi_reset_register(dev, efd);
    if (status != UCS_OK) {
        /* without it a reset kills the process: say so once */
        ucs_warn("%s: the driver did not take an event fd (%s): a reset of "
                 "the device will kill this process", dev->name,
                 ucs_status_string(status));
        close(efd);
        return UCS_OK;
    }

    status = ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK, efd,
                                         UCS_EVENT_SET_EVREAD,
                                         uct_gaudi_reset_event, dev, NULL);
    if (status != UCS_OK) {
        ucs_error("%s: failed to watch its event fd from the async thread: "
                  "%s", dev->name, ucs_status_string(status));
        close(efd);   /* the driver drops its reference with the device */
        return status;
    }

    dev->event_fd = efd;
    return UCS_OK;
}

void uct_gaudi_reset_unwatch(uct_gaudi_dev_t *dev)
{
    if (dev->event_fd < 0) {
        return;
    }

    /* waits for a handler that runs */
    ucs_async_remove_handler(dev->event_fd, 1);
    close(dev->event_fd);
    dev->event_fd = -1;
}

void uct_gaudi_reset_release(uct_gaudi_dev_t *dev)
{
    ucs_assert(dev->failed);
    if (__atomic_exchange_n(&dev->revoked, 1, __ATOMIC_ACQ_REL)) {
        return;
    }

    /* the DMA-BUFs this process exported hold the device's file: they go
     * (and their importers are told), then the command buffers' mmaps and
     * the compute fd itself */
    uct_gaudi_mem_withdraw_exports(dev);
    uct_gaudi_dma_revoke(dev);
    if (!dev->adopted &&
        (uct_gaudi_seam_ops->revoke(dev->fd) != 0)) {
        ucs_error("%s: failed to close its compute node (fd %d) after its "
                  "failure: %m", dev->name, dev->fd);
        return;
    }

    ucs_diag("%s: released (fd %d) after its failure; it comes back when "
             "its last user releases it", dev->name, dev->fd);
}
