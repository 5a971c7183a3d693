/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_app.h"
#include "gaudi_ioctl.h"
#include "gaudi_mem.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/datastruct/khash.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>


/* Pauses between attempts of a request that waits for importers: from
 * 100 us, doubling, at most 10 ms */
#define UCT_GAUDI_APP_RETRY_MIN_US  100
#define UCT_GAUDI_APP_RETRY_MAX_US  10000


/* An ALLOC handle of the application */
typedef struct {
    size_t length;    /* what a MAP of it maps: its size in whole pages */
    int    exported;  /* unmapped while shared under the 6.1 handle form,
                         which refuses the FREE while a DMA-BUF lives: the
                         FREE waits for the importers */
} uct_gaudi_app_handle_t;


KHASH_MAP_INIT_INT64(uct_gaudi_app_handles, uct_gaudi_app_handle_t)


static struct {
    pthread_mutex_t                lock;    /* guards handles */
    khash_t(uct_gaudi_app_handles) handles; /* by ALLOC handle */
} uct_gaudi_app = {
    .lock = PTHREAD_MUTEX_INITIALIZER
};


static void uct_gaudi_app_handle_set(uint64_t handle,
                                     const uct_gaudi_app_handle_t *value)
{
    khiter_t iter;
    int ret;

    pthread_mutex_lock(&uct_gaudi_app.lock);
    iter = kh_put(uct_gaudi_app_handles, &uct_gaudi_app.handles, handle,
                  &ret);
    if (ret >= 0) {
        kh_val(&uct_gaudi_app.handles, iter) = *value;
    } else {
        ucs_debug("no memory to learn the application's handle %" PRIu64,
                  handle);
    }
    pthread_mutex_unlock(&uct_gaudi_app.lock);
}

/* What is known of @a handle: 1 and *value_p, or 0 */
static int uct_gaudi_app_handle_get(uint64_t handle,
                                    uct_gaudi_app_handle_t *value_p)
{
    khiter_t iter;
    int found;

    pthread_mutex_lock(&uct_gaudi_app.lock);
    iter  = kh_get(uct_gaudi_app_handles, &uct_gaudi_app.handles, handle);
    found = (iter != kh_end(&uct_gaudi_app.handles));
    if (found) {
        *value_p = kh_val(&uct_gaudi_app.handles, iter);
    }
    pthread_mutex_unlock(&uct_gaudi_app.lock);
    return found;
}

static void uct_gaudi_app_handle_del(uint64_t handle)
{
    khiter_t iter;

    pthread_mutex_lock(&uct_gaudi_app.lock);
    iter = kh_get(uct_gaudi_app_handles, &uct_gaudi_app.handles, handle);
    if (iter != kh_end(&uct_gaudi_app.handles)) {
        kh_del(uct_gaudi_app_handles, &uct_gaudi_app.handles, iter);
    }
    pthread_mutex_unlock(&uct_gaudi_app.lock);
}

/*
 * The application's request, to the driver. One that the driver refuses
 * (EINVAL) while a peer still holds a DMA-BUF of the memory (@a wait) is
 * retried until the importers let go, at most @a timeout seconds: the
 * application sees the driver's last answer.
 */
static int uct_gaudi_app_call(uct_gaudi_dev_t *dev, int fd,
                              unsigned long request, union hl_mem_args *args,
                              uct_gaudi_hook_next_t next, int wait,
                              const char *what, uint64_t value)
{
    union hl_mem_args in   = *args;
    double timeout         = wait ? uct_gaudi_mem_free_timeout(dev) : 0;
    ucs_time_t start       = ucs_get_time();
    unsigned pause_us      = UCT_GAUDI_APP_RETRY_MIN_US;
    unsigned attempts      = 1;
    int ret, err;

    while (((ret = next(fd, request, args)) < 0) && (errno == EINVAL) &&
           (ucs_time_to_sec(ucs_get_time() - start) < timeout)) {
        *args = in;
        usleep(pause_us);
        pause_us = ucs_min(pause_us * 2, UCT_GAUDI_APP_RETRY_MAX_US);
        ++attempts;
    }

    if (!wait) {
        return ret;
    }

    err = errno;
    if ((ret < 0) && (err == EINVAL)) {
        ucs_warn("%s: the application's %s 0x%" PRIx64 " still fails "
                 "after %.3f s (%u attempts): %s; its peers did not let go of "
                 "the memory within UCX_GAUDI_IPC_TIMEOUT", dev->name, what,
                 value, ucs_time_to_sec(ucs_get_time() - start), attempts,
                 strerror(err));
    } else if (ret == 0) {
        ucs_debug("%s: the application's %s 0x%" PRIx64 " (shared) done "
                  "after %u attempts, %.6f s", dev->name, what, value,
                  attempts, ucs_time_to_sec(ucs_get_time() - start));
    }
    errno = err;
    return ret;
}

/* Whether the device offers ALLOC pages of @a page bytes, which a user may
 * ask for (HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES: none where it may not) */
static int uct_gaudi_app_offers_page(uct_gaudi_dev_t *dev, int fd,
                                     uint64_t page)
{
    struct hl_info_dev_memalloc_page_sizes sizes;

    if ((page == 0) || !ucs_is_pow2(page)) {
        return 0;
    }

    memset(&sizes, 0, sizeof(sizes));
    if (uct_gaudi_ioctl_info(fd, HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES, &sizes,
                             sizeof(sizes)) != 0) {
        return 0;
    }

    return (sizes.page_order_bitmask & page) != 0;
}

static int uct_gaudi_app_alloc(uct_gaudi_dev_t *dev, int fd,
                               unsigned long request, union hl_mem_args *args,
                               uct_gaudi_hook_next_t next)
{
    uint64_t size = args->in.alloc.mem_size;
    uint64_t page = args->in.alloc.page_size;
    uct_gaudi_app_handle_t value;
    int ret;

    ret = next(fd, request, args);
    if (ret < 0) {
        return ret;
    }

    /* the driver allocates whole pages, and a MAP maps them all: of the
     * asked size where the device lets the user choose it (a size it
     * offers), else silently of its default (set_alloc_page_size) */
    page = uct_gaudi_app_offers_page(dev, fd, page) ? page :
           dev->mem->granule;
    if ((page == 0) || (size > UINT64_MAX - page)) {
        return ret;
    }

    value.length   = ucs_align_up(size, page);
    value.exported = 0;
    uct_gaudi_app_handle_set(args->out.handle, &value);
    return ret;
}

static int uct_gaudi_app_map(uct_gaudi_dev_t *dev, int fd,
                             unsigned long request, union hl_mem_args *args,
                             uct_gaudi_hook_next_t next)
{
    uint64_t handle = args->in.map_device.handle;
    uct_gaudi_app_handle_t value;
    ucs_status_t status;
    uint64_t dva;
    int ret, err;

    ret = next(fd, request, args);
    if ((ret < 0) || !uct_gaudi_app_handle_get(handle, &value)) {
        /* refused, or allocated before the hook was in: never shared */
        return ret;
    }

    err    = errno;
    dva    = args->out.device_virt_addr;
    status = uct_gaudi_mem_app_track(dev, handle, dva, value.length);
    if (status != UCS_OK) {
        ucs_diag("%s: the application's mapping 0x%" PRIx64 "+%zu of handle "
                 "%" PRIu64 " is not tracked (%s): peers will stage its "
                 "transfers", dev->name, dva, value.length, handle,
                 ucs_status_string(status));
    } else {
        ucs_trace("%s: the application mapped handle %" PRIu64 " at "
                  "0x%" PRIx64 "+%zu", dev->name, handle, dva, value.length);
    }
    errno = err;
    return ret;
}

static int uct_gaudi_app_unmap(uct_gaudi_dev_t *dev, int fd,
                               unsigned long request, union hl_mem_args *args,
                               uct_gaudi_hook_next_t next)
{
    uint64_t dva = args->in.unmap.device_virt_addr;
    uct_gaudi_app_handle_t value;
    uint64_t handle;
    int shared, by_handle, ret, err;

    if (uct_gaudi_mem_app_unmap_begin(dev, dva, &handle, &shared) !=
        UCS_OK) {
        return next(fd, request, args);
    }

    /* the driver refuses the UNMAP of an exported mapping; the 6.1 handle
     * form refuses its handle's FREE instead */
    by_handle = uct_gaudi_ioctl_abi_desc()->export_handle;
    ret       = uct_gaudi_app_call(dev, fd, request, args, next,
                                   shared && !by_handle, "UNMAP of", dva);
    err       = errno;
    uct_gaudi_mem_app_unmap_end(dev, dva, ret == 0);
    if ((ret == 0) && shared && by_handle &&
        uct_gaudi_app_handle_get(handle, &value)) {
        value.exported = 1;
        uct_gaudi_app_handle_set(handle, &value);
    }

    errno = err;
    return ret;
}

static int uct_gaudi_app_free(uct_gaudi_dev_t *dev, int fd,
                              unsigned long request, union hl_mem_args *args,
                              uct_gaudi_hook_next_t next)
{
    uint64_t handle = args->in.free.handle;
    uct_gaudi_app_handle_t value;
    int ret;

    if (!uct_gaudi_app_handle_get(handle, &value)) {
        return next(fd, request, args);
    }

    ret = uct_gaudi_app_call(dev, fd, request, args, next, value.exported,
                             "FREE of handle", handle);
    if (ret == 0) {
        uct_gaudi_app_handle_del(handle);
    }

    return ret;
}

int uct_gaudi_app_mem_ioctl(uct_gaudi_dev_t *dev, int fd,
                            unsigned long request, union hl_mem_args *args,
                            uct_gaudi_hook_next_t next)
{
    switch (args->in.op) {
    case HL_MEM_OP_ALLOC:
        return uct_gaudi_app_alloc(dev, fd, request, args, next);
    case HL_MEM_OP_MAP:
        /* a host mapping is no device memory */
        return (args->in.flags & HL_MEM_USERPTR) ?
               next(fd, request, args) :
               uct_gaudi_app_map(dev, fd, request, args, next);
    case HL_MEM_OP_UNMAP:
        return uct_gaudi_app_unmap(dev, fd, request, args, next);
    case HL_MEM_OP_FREE:
        return uct_gaudi_app_free(dev, fd, request, args, next);
    default:
        return next(fd, request, args);
    }
}

void uct_gaudi_app_forget(void)
{
    pthread_mutex_lock(&uct_gaudi_app.lock);
    kh_destroy_inplace(uct_gaudi_app_handles, &uct_gaudi_app.handles);
    memset(&uct_gaudi_app.handles, 0, sizeof(uct_gaudi_app.handles));
    pthread_mutex_unlock(&uct_gaudi_app.lock);
}
