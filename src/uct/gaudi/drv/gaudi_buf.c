/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_buf.h"
#include "gaudi_lib.h"
#include "gaudi_own.h"
#include "gaudi_mem.h"
#include "gaudi_dma.h"

#include <ucs/datastruct/khash.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/string.h>
#include <ucs/type/spinlock.h>
#include <pthread.h>
#include <string.h>


KHASH_MAP_INIT_INT64(uct_gaudi_buf, uct_gaudi_mem_t);

/* Buffers handed out by address, and the device reference they hold */
static struct {
    /* guards bufs and dev; taken outside the ownership lock (the first
     * buffer acquires the device under it) */
    pthread_mutex_t         lock;
    khash_t(uct_gaudi_buf)  bufs;
    uct_gaudi_dev_t         *dev;
} uct_gaudi_buf_ctx = {
    .lock = PTHREAD_MUTEX_INITIALIZER
};


/* The owned device, acquired on first use and kept for the process */
static ucs_status_t uct_gaudi_buf_dev(uct_gaudi_dev_t **dev_p)
{
    ucs_status_t status = UCS_OK;

    pthread_mutex_lock(&uct_gaudi_buf_ctx.lock);
    if (uct_gaudi_buf_ctx.dev == NULL) {
        status = uct_gaudi_own_acquire(&uct_gaudi_buf_ctx.dev);
    }
    *dev_p = uct_gaudi_buf_ctx.dev;
    pthread_mutex_unlock(&uct_gaudi_buf_ctx.lock);
    return status;
}

int uct_gaudi_buf_is_supported(void)
{
    uct_gaudi_dev_t *dev;

    return (uct_gaudi_lib_init() == UCS_OK) &&
           (uct_gaudi_lib_num_usable() > 0) &&
           (uct_gaudi_buf_dev(&dev) == UCS_OK);
}

ucs_status_t uct_gaudi_buf_alloc(size_t size, void **ptr_p)
{
    uct_gaudi_dev_t *dev;
    uct_gaudi_mem_t mem;
    ucs_status_t status;
    khiter_t iter;
    int ret;

    status = uct_gaudi_buf_dev(&dev);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_mem_alloc(dev, size, &mem);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_lock(&uct_gaudi_buf_ctx.lock);
    iter = kh_put(uct_gaudi_buf, &uct_gaudi_buf_ctx.bufs, mem.dva, &ret);
    if (ret > 0) {
        kh_value(&uct_gaudi_buf_ctx.bufs, iter) = mem;
    }
    pthread_mutex_unlock(&uct_gaudi_buf_ctx.lock);

    if (ret <= 0) {
        ucs_error("gaudi buffer 0x%" PRIx64 " is already tracked", mem.dva);
        uct_gaudi_mem_free(dev, &mem);
        return UCS_ERR_ALREADY_EXISTS;
    }

    *ptr_p = (void*)(uintptr_t)mem.dva;
    return UCS_OK;
}

ucs_status_t uct_gaudi_buf_free(void *ptr)
{
    uct_gaudi_mem_t mem;
    khiter_t iter;

    if (ptr == NULL) {
        return UCS_OK;  /* like free(NULL): a zero-size buffer */
    }

    pthread_mutex_lock(&uct_gaudi_buf_ctx.lock);
    iter = kh_get(uct_gaudi_buf, &uct_gaudi_buf_ctx.bufs, (uintptr_t)ptr);
    if (iter == kh_end(&uct_gaudi_buf_ctx.bufs)) {
        pthread_mutex_unlock(&uct_gaudi_buf_ctx.lock);
        ucs_error("%p is not a Gaudi buffer of this process", ptr);
        return UCS_ERR_INVALID_PARAM;
    }

    mem = kh_value(&uct_gaudi_buf_ctx.bufs, iter);
    kh_del(uct_gaudi_buf, &uct_gaudi_buf_ctx.bufs, iter);
    pthread_mutex_unlock(&uct_gaudi_buf_ctx.lock);

    return uct_gaudi_mem_free(uct_gaudi_buf_ctx.dev, &mem);
}

ucs_status_t uct_gaudi_buf_memset(void *ptr, int c, size_t length)
{
    uct_gaudi_dev_t *dev;
    ucs_status_t status;

    status = uct_gaudi_buf_dev(&dev);
    if (status != UCS_OK) {
        return status;
    }

    return uct_gaudi_dma_memset(dev, (uintptr_t)ptr, (uint8_t)c, length);
}

ucs_status_t uct_gaudi_buf_copy(void *dst, int dst_is_dev, const void *src,
                                int src_is_dev, size_t length)
{
    uct_gaudi_dev_t *dev;
    ucs_status_t status;

    if (length == 0) {
        return UCS_OK;
    }

    status = uct_gaudi_buf_dev(&dev);
    if (status != UCS_OK) {
        return status;
    }

    if (dst_is_dev && src_is_dev) {
        return uct_gaudi_dma_copy(dev, (uintptr_t)dst, (uintptr_t)src, length);
    } else if (dst_is_dev) {
        return uct_gaudi_dma_copy_host(dev, dst, src, length,
                                       UCT_GAUDI_DMA_H2D);
    } else if (src_is_dev) {
        return uct_gaudi_dma_copy_host(dev, dst, src, length,
                                       UCT_GAUDI_DMA_D2H);
    }

    memcpy(dst, src, length);
    return UCS_OK;
}

int uct_gaudi_buf_device_failed(char *reason, size_t max)
{
    int failed;

    pthread_mutex_lock(&uct_gaudi_buf_ctx.lock);
    failed = (uct_gaudi_buf_ctx.dev != NULL) && uct_gaudi_buf_ctx.dev->failed;
    if (failed) {
        pthread_mutex_lock(&uct_gaudi_buf_ctx.dev->lock);
        ucs_strncpy_safe(reason, uct_gaudi_buf_ctx.dev->fail_reason, max);
        pthread_mutex_unlock(&uct_gaudi_buf_ctx.dev->lock);
    }
    pthread_mutex_unlock(&uct_gaudi_buf_ctx.lock);
    return failed;
}

/*
 * The process exits (or the module is unloaded) with the device it kept for
 * its buffers: give it back now. What watches the device's driver events is
 * a handler on UCS's async thread, which must be removed before UCS's own
 * cleanup (a library is finalized before those it depends on: this runs
 * first); and a Gaudi2's reset after release starts at once. The buffers
 * still allocated go with the device.
 */
UCS_STATIC_CLEANUP {
    pthread_mutex_lock(&uct_gaudi_buf_ctx.lock);
    if (uct_gaudi_buf_ctx.dev != NULL) {
        ucs_debug("%s: released with %u Gaudi buffers still allocated",
                  uct_gaudi_buf_ctx.dev->name,
                  kh_size(&uct_gaudi_buf_ctx.bufs));
        kh_destroy_inplace(uct_gaudi_buf, &uct_gaudi_buf_ctx.bufs);
        /* (zeroed, as the static initializer left it: a valid empty table) */
        memset(&uct_gaudi_buf_ctx.bufs, 0, sizeof(uct_gaudi_buf_ctx.bufs));
        uct_gaudi_own_release(uct_gaudi_buf_ctx.dev);
        uct_gaudi_buf_ctx.dev = NULL;
    }
    pthread_mutex_unlock(&uct_gaudi_buf_ctx.lock);
}
