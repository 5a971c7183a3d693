/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_mem.h"
#include "gaudi_health.h"
#include "gaudi_ioctl.h"
#include "gaudi_device.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/memory/memtype_cache.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>


/* Chunk rounding when the driver states no default ALLOC page */
#define UCT_GAUDI_MEM_DEFAULT_GRANULE (2 * UCS_MBYTE)


typedef struct {
    ucs_pgt_region_t  super;    /* [dva, dva + length) */
    uct_gaudi_chunk_t *chunk;   /* carved from it; NULL on Gaudi1 */
    int               exported; /* a DMA-BUF was exported from it */
    int               shared;   /* exported, or to be: its free calls the
                                   free callback */
    int               freeing;  /* uct_gaudi_mem_free() runs: no export
                                   may mark it any more */
} uct_gaudi_mem_region_t;


static ucs_pgt_dir_t *uct_gaudi_mem_pgd_alloc(const ucs_pgtable_t *pgtable)
{
    return ucs_malloc(sizeof(ucs_pgt_dir_t), "gaudi_mem_pgdir");
}

static void uct_gaudi_mem_pgd_release(const ucs_pgtable_t *pgtable,
                                      ucs_pgt_dir_t *dir)
{
    ucs_free(dir);
}

static int uct_gaudi_mem_is_gaudi1(const uct_gaudi_dev_t *dev)
{
    return dev->info->asic == UCT_GAUDI_ASIC_GAUDI1;
}

static int uct_gaudi_mem_in_range(uint64_t addr, size_t length, uint64_t base,
                                  uint64_t size)
{
    return (addr >= base) && (length <= size) &&
           ((addr - base) <= (size - length));
}

/* Whether the memtype cache already covers the range via the DRAM range */
static int uct_gaudi_mem_in_memtype_range(const uct_gaudi_dev_t *dev,
                                          uint64_t addr, size_t length)
{
    return dev->memtype_range &&
           uct_gaudi_mem_in_range(addr, length, dev->info->dram_base,
                                  dev->info->dram_size);
}

void uct_gaudi_mem_memtype_set(uint64_t addr, size_t length,
                               ucs_sys_device_t sys_dev)
{
    ucs_memory_info_t mem_info;

    /* a lookup creates the global cache, unless UCX_MEMTYPE_CACHE=n */
    ucs_memtype_cache_lookup((void*)addr, length, &mem_info);
    uct_gaudi_memtype_cache_update((void*)addr, length, sys_dev);
}

void uct_gaudi_mem_memtype_unset(uint64_t addr, size_t length)
{
    /* UCS 1.13.1 ucs_memtype_cache_remove() does not check for a cache */
    if (ucs_memtype_cache_global_instance != NULL) {
        ucs_memtype_cache_remove((void*)addr, length);
    }
}

static ucs_status_t uct_gaudi_mem_op(uct_gaudi_dev_t *dev,
                                     union hl_mem_args *args,
                                     ucs_log_level_t log_level)
{
    ucs_status_t status;

    status = uct_gaudi_health_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    return UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_MEMORY,
                                               args),
                          log_level);
}

ucs_status_t uct_gaudi_mem_init(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_ctx_t *ctx = dev->mem;
    ucs_status_t status;

    status = ucs_pgtable_init(&ctx->allocs, uct_gaudi_mem_pgd_alloc,
                              uct_gaudi_mem_pgd_release);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_init(&ctx->lock, NULL);

    ctx->count        = 0;
    ctx->num_chunks   = 0;
    ctx->num_deferred = 0;
    ctx->free_cb       = NULL;
    ctx->free_arg      = NULL;
    ctx->free_timeout  = 0;
    ctx->defer_timeout = 0;
    ctx->free_cb_users = 0;
    pthread_cond_init(&ctx->free_cb_idle, NULL);
    ucs_list_head_init(&ctx->chunks);
    ucs_list_head_init(&ctx->deferred);
    if (uct_gaudi_mem_is_gaudi1(dev)) {
        ctx->granule = UCT_GAUDI_CHUNK_ALIGN;
        status       = uct_gaudi_pool_init(&ctx->pool, dev->info->dram_base,
                                           dev->info->dram_size, ctx->granule);
        if (status != UCS_OK) {
            goto err_pgtable;
        }
    } else {
        ctx->granule = (dev->info->alloc_page_size != 0) ?
                       dev->info->alloc_page_size :
                       UCT_GAUDI_MEM_DEFAULT_GRANULE;
        uct_gaudi_pool_init(&ctx->pool, 0, 0, 1);
    }

    return UCS_OK;

err_pgtable:
    pthread_cond_destroy(&ctx->free_cb_idle);
    pthread_mutex_destroy(&ctx->lock);
    ucs_pgtable_cleanup(&ctx->allocs);
    return status;
}

static int uct_gaudi_mem_app_retire(uct_gaudi_dev_t *dev, uint64_t dva,
                                    size_t length);


/* Insert @a region (an application's chunk joins the chunk list at once:
 * an UNMAP of it may follow on another thread); called with the memory lock
 * held */
static ucs_status_t uct_gaudi_mem_insert(uct_gaudi_dev_t *dev,
                                         uct_gaudi_mem_region_t *region)
{
    ucs_status_t status;

    status = ucs_pgtable_insert(&dev->mem->allocs, &region->super);
    if (status != UCS_OK) {
        return status;
    }

    ++dev->mem->count;
    if ((region->chunk != NULL) && region->chunk->app) {
        ucs_list_add_tail(&dev->mem->chunks, &region->chunk->list);
        ++dev->mem->num_chunks;
    }

    return UCS_OK;
}

static ucs_status_t uct_gaudi_mem_track(uct_gaudi_dev_t *dev,
                                        const uct_gaudi_mem_t *mem,
                                        uct_gaudi_chunk_t *chunk)
{
    uct_gaudi_mem_region_t *region;
    ucs_status_t status;

    region = ucs_malloc(sizeof(*region), "gaudi_mem_region");
    if (region == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    region->super.start = mem->dva;
    region->super.end   = mem->dva + mem->length;
    region->chunk       = chunk;
    region->exported    = 0;
    region->shared      = 0;
    region->freeing     = 0;

    pthread_mutex_lock(&dev->mem->lock);
    status = uct_gaudi_mem_insert(dev, region);
    pthread_mutex_unlock(&dev->mem->lock);
    if ((status == UCS_ERR_ALREADY_EXISTS) &&
        uct_gaudi_mem_app_retire(dev, mem->dva, mem->length)) {
        /* the driver gave out a range we still thought the application's */
        pthread_mutex_lock(&dev->mem->lock);
        status = uct_gaudi_mem_insert(dev, region);
        pthread_mutex_unlock(&dev->mem->lock);
    }

    if (status != UCS_OK) {
        ucs_error("%s: failed to track allocation 0x%" PRIx64 "+%zu: %s",
                  dev->name, mem->dva, mem->length,
                  ucs_status_string(status));
        ucs_free(region);
        return status;
    }

    if (!uct_gaudi_mem_in_memtype_range(dev, mem->dva, mem->length)) {
        uct_gaudi_mem_memtype_set(mem->dva, mem->length, dev->info->sys_dev);
    }

    return UCS_OK;
}

/* Remove the tracking of the allocation starting exactly at @a dva */
static uct_gaudi_mem_region_t *uct_gaudi_mem_untrack(uct_gaudi_dev_t *dev,
                                                     uint64_t dva)
{
    ucs_pgt_region_t *pgt_region;

    pthread_mutex_lock(&dev->mem->lock);
    pgt_region = ucs_pgtable_lookup(&dev->mem->allocs, dva);
    if ((pgt_region == NULL) || (pgt_region->start != dva)) {
        pthread_mutex_unlock(&dev->mem->lock);
        return NULL;
    }

    ucs_pgtable_remove(&dev->mem->allocs, pgt_region);
    --dev->mem->count;
    pthread_mutex_unlock(&dev->mem->lock);

    if (!uct_gaudi_mem_in_memtype_range(dev, pgt_region->start,
                                        pgt_region->end - pgt_region->start)) {
        uct_gaudi_mem_memtype_unset(pgt_region->start,
                                    pgt_region->end - pgt_region->start);
    }

    return ucs_derived_of(pgt_region, uct_gaudi_mem_region_t);
}

static ucs_status_t uct_gaudi_mem_unmap_level(uct_gaudi_dev_t *dev,
                                              uint64_t dva,
                                              ucs_log_level_t log_level)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.op                     = HL_MEM_OP_UNMAP;
    args.in.unmap.device_virt_addr = dva;
    return uct_gaudi_mem_op(dev, &args, log_level);
}

static ucs_status_t uct_gaudi_mem_free_handle(uct_gaudi_dev_t *dev,
                                              uint64_t handle,
                                              ucs_log_level_t log_level)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.op          = HL_MEM_OP_FREE;
    args.in.free.handle = handle;
    return uct_gaudi_mem_op(dev, &args, log_level);
}

/* A new chunk of @a length bytes (whole device pages): ALLOC + MAP */
static ucs_status_t uct_gaudi_mem_chunk_new(uct_gaudi_dev_t *dev,
                                            size_t length,
                                            uct_gaudi_chunk_t **chunk_p)
{
    union hl_mem_args args;
    ucs_status_t status;
    uint64_t handle;

    memset(&args, 0, sizeof(args));
    args.in.op                = HL_MEM_OP_ALLOC;
    args.in.alloc.mem_size    = length;
    args.in.alloc.page_size   = 0;  /* device default */
    status = uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_ERROR);
    if (status != UCS_OK) {
        return status;
    }

    handle = args.out.handle;
    memset(&args, 0, sizeof(args));
    args.in.op                  = HL_MEM_OP_MAP;
    args.in.map_device.handle   = handle;
    status = uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_ERROR);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_gaudi_chunk_create(args.out.device_virt_addr, length,
                                    handle, chunk_p);
    if (status != UCS_OK) {
        uct_gaudi_mem_unmap_level(dev, args.out.device_virt_addr,
                                  UCS_LOG_LEVEL_DIAG);
        goto err_free;
    }

    ucs_debug("%s: new chunk 0x%" PRIx64 "+%zu handle %" PRIu64, dev->name,
              (*chunk_p)->dva, length, handle);
    return UCS_OK;

err_free:
    uct_gaudi_mem_free_handle(dev, handle, UCS_LOG_LEVEL_DIAG);
    return status;
}

/* Carve @a mem->length bytes out of a chunk, adding a chunk if needed */
static ucs_status_t uct_gaudi_mem_alloc_carved(uct_gaudi_dev_t *dev,
                                               uct_gaudi_mem_t *mem,
                                               uct_gaudi_chunk_t **chunk_p)
{
    size_t length = mem->length;
    uct_gaudi_chunk_t *chunk;
    ucs_status_t status;

    pthread_mutex_lock(&dev->mem->lock);
    status = uct_gaudi_chunk_carve(&dev->mem->chunks, length, &chunk,
                                   &mem->dva, &mem->length);
    pthread_mutex_unlock(&dev->mem->lock);
    if (status != UCS_OK) {
        if (length > SIZE_MAX - dev->mem->granule) {
            return UCS_ERR_NO_MEMORY;
        }

        status = uct_gaudi_mem_chunk_new(dev, ucs_align_up(length,
                                                           dev->mem->granule),
                                         &chunk);
        if (status != UCS_OK) {
            return status;
        }

        pthread_mutex_lock(&dev->mem->lock);
        ucs_list_add_tail(&dev->mem->chunks, &chunk->list);
        ++dev->mem->num_chunks;
        status = uct_gaudi_chunk_get(chunk, length, &mem->dva, &mem->length);
        pthread_mutex_unlock(&dev->mem->lock);
        ucs_assert_always(status == UCS_OK); /* a fresh chunk has room */
    }

    mem->handle       = chunk->handle;
    mem->chunk_dva    = chunk->dva;
    mem->chunk_length = chunk->length;
    *chunk_p          = chunk;
    return UCS_OK;
}

/* Gaudi1: ALLOC/FREE only account; the first union word is the size */
/* Gaudi1: ALLOC/FREE only account; the first union word is the size */
static ucs_status_t uct_gaudi_mem_account(uct_gaudi_dev_t *dev, uint32_t op,
                                          size_t length)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.op             = op;
    args.in.alloc.mem_size = length;
    return uct_gaudi_mem_op(dev, &args,
                            (op == HL_MEM_OP_ALLOC) ? UCS_LOG_LEVEL_ERROR :
                                                      UCS_LOG_LEVEL_DIAG);
}

static ucs_status_t uct_gaudi_mem_alloc_phys(uct_gaudi_dev_t *dev,
                                             uct_gaudi_mem_t *mem)
{
    uint64_t size = mem->length;
    ucs_status_t status;

    pthread_mutex_lock(&dev->mem->lock);
    status = uct_gaudi_pool_alloc(&dev->mem->pool, &size, &mem->dva);
    pthread_mutex_unlock(&dev->mem->lock);
    if (status != UCS_OK) {
        ucs_error("%s: out of device memory for %zu bytes (%" PRIu64
                  " free)", dev->name, mem->length,
                  uct_gaudi_pool_free_size(&dev->mem->pool));
        return status;
    }

    mem->length       = size;
    mem->handle       = 0;
    mem->chunk_dva    = mem->dva;
    mem->chunk_length = mem->length;
    status            = uct_gaudi_mem_account(dev, HL_MEM_OP_ALLOC,
                                              mem->length);
    if (status != UCS_OK) {
        pthread_mutex_lock(&dev->mem->lock);
        uct_gaudi_pool_free(&dev->mem->pool, mem->dva, size);
        pthread_mutex_unlock(&dev->mem->lock);
    }

    return status;
}

static void uct_gaudi_mem_release_phys(uct_gaudi_dev_t *dev, uint64_t dva,
                                       size_t length)
{
    pthread_mutex_lock(&dev->mem->lock);
    uct_gaudi_pool_free(&dev->mem->pool, dva, length);
    pthread_mutex_unlock(&dev->mem->lock);
    /* a failure only skews the driver's usage counters */
    uct_gaudi_mem_account(dev, HL_MEM_OP_FREE, length);
}

/*
 * Give a chunk back to the driver: UNMAP, then FREE. Returns UCS_OK when it
 * is gone, an error while the driver still holds it: UNMAP is refused while
 * a peer imports an export of the mapping (EINVAL), and with the 6.1 handle
 * form FREE is refused while the export is referenced; a retry resumes
 * where the last attempt stopped.
 */
static ucs_status_t uct_gaudi_mem_chunk_release(uct_gaudi_dev_t *dev,
                                                uct_gaudi_chunk_t *chunk,
                                                ucs_log_level_t log_level)
{
    ucs_status_t status;

    if (!chunk->unmapped) {
        status = uct_gaudi_mem_unmap_level(dev, chunk->dva, log_level);
        if (status != UCS_OK) {
            return status;
        }

        chunk->unmapped = 1;
    }

    return uct_gaudi_mem_free_handle(dev, chunk->handle, log_level);
}

/* Tell the free callback's owner (gaudi_ipc) that an exported range goes:
 * the callback is taken under the lock and called outside it, and its
 * owner cannot clear it (and go) while the call runs */
static void uct_gaudi_mem_call_free_cb(uct_gaudi_dev_t *dev, uint64_t dva,
                                       size_t length)
{
    uct_gaudi_mem_ctx_t *ctx = dev->mem;
    uct_gaudi_mem_free_cb_t cb;
    void *arg;

    pthread_mutex_lock(&ctx->lock);
    cb  = ctx->free_cb;
    arg = ctx->free_arg;
    ctx->free_cb_users += (cb != NULL);
    pthread_mutex_unlock(&ctx->lock);

    if (cb == NULL) {
        return;
    }

    cb(arg, dva, length);

    pthread_mutex_lock(&ctx->lock);
    if (--ctx->free_cb_users == 0) {
        pthread_cond_broadcast(&ctx->free_cb_idle);
    }
    pthread_mutex_unlock(&ctx->lock);
}

/* An allocation goes: registrations UCP cached for the range go before the
 * range can be handed out again (gaudi_ucx_compat.h); no lock held: UCP
 * deregisters from this call */
static void uct_gaudi_mem_going(uct_gaudi_dev_t *dev, uint64_t dva,
                                size_t length)
{
    uct_gaudi_ucm_mem_type_free((void*)(uintptr_t)dva, length);
    if (uct_gaudi_mem_in_memtype_range(dev, dva, length)) {
        /* UCS's memory-type cache dropped the range on that event too: it
         * is still device memory (the next allocation there may not be
         * registered before UCP detects it) */
        uct_gaudi_mem_memtype_set(dva, length, dev->info->sys_dev);
    }
}

/* Release a chunk with no live allocation, or keep it to retry later */
static void uct_gaudi_mem_chunk_drop(uct_gaudi_dev_t *dev,
                                     uct_gaudi_chunk_t *chunk)
{
    int exported = chunk->exported || (chunk->num_held > 0);
    ucs_status_t status;

    if (chunk->shared) {
        uct_gaudi_mem_call_free_cb(dev, chunk->dva, chunk->length);
    }

    if (chunk->app) {
        /* the application's own: it unmaps and frees it */
        uct_gaudi_chunk_destroy(chunk);
        return;
    }

    /* an exported chunk may still be imported by a peer: the driver then
     * refuses its release, which is not an error here */
    status = dev->failed ? UCS_ERR_IO_ERROR :
             uct_gaudi_mem_chunk_release(dev, chunk,
                                         exported ? UCS_LOG_LEVEL_DEBUG :
                                                    UCS_LOG_LEVEL_ERROR);
    if ((status == UCS_OK) || dev->failed) {
        /* gone, or the device failed and its context is dead */
        uct_gaudi_chunk_destroy(chunk);
        return;
    }

    ucs_debug("%s: chunk 0x%" PRIx64 "+%zu is still held by the driver "
              "(imported by a peer?): its release is deferred", dev->name,
              chunk->dva, chunk->length);
    pthread_mutex_lock(&dev->mem->lock);
    ucs_list_add_tail(&dev->mem->deferred, &chunk->list);
    ++dev->mem->num_deferred;
    pthread_mutex_unlock(&dev->mem->lock);
}

/* Exported ranges being collected by uct_gaudi_mem_withdraw_exports() */
typedef struct {
    uct_gaudi_dev_t *dev;
    uint64_t        (*ranges)[2];
    unsigned        count;
    unsigned        max;
} uct_gaudi_mem_withdraw_t;


static void uct_gaudi_mem_withdraw_add(uct_gaudi_mem_withdraw_t *w,
                                       uint64_t dva, uint64_t length)
{
    if (w->count < w->max) {
        w->ranges[w->count][0] = dva;
        w->ranges[w->count][1] = length;
        ++w->count;
    }
}

static void uct_gaudi_mem_withdraw_cb(const ucs_pgtable_t *pgtable,
                                      ucs_pgt_region_t *pgt_region, void *arg)
{
    uct_gaudi_mem_region_t *region = ucs_derived_of(pgt_region,
                                                    uct_gaudi_mem_region_t);

    if (region->shared) {
        uct_gaudi_mem_withdraw_add(arg, pgt_region->start,
                                   pgt_region->end - pgt_region->start);
    }
}

void uct_gaudi_mem_withdraw_exports(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_ctx_t *ctx = dev->mem;
    uct_gaudi_mem_withdraw_t w;
    uct_gaudi_chunk_t *chunk;
    unsigned i;

    /* collected under the lock, called without it (the callback takes
     * gaudi_ipc's locks); an allocation freed meanwhile calls it itself,
     * and a second call for a range is a no-op there */
    pthread_mutex_lock(&ctx->lock);
    w.dev    = dev;
    w.count  = 0;
    w.max    = ctx->count + ctx->num_chunks;
    w.ranges = (w.max == 0) ? NULL :
               ucs_malloc(w.max * sizeof(*w.ranges), "gaudi_withdraw");
    if (w.ranges == NULL) {
        w.max = 0;
    }
    /* the whole span of the table, as ucs_pgtable_purge() walks it */
    if (ctx->count > 0) {
        ucs_pgtable_search_range(&ctx->allocs, ctx->allocs.base,
                                 ctx->allocs.base +
                                 ((1ul << ctx->allocs.shift) &
                                  ctx->allocs.mask) - 1,
                                 uct_gaudi_mem_withdraw_cb, &w);
    }
    ucs_list_for_each(chunk, &ctx->chunks, list) {
        if (chunk->shared) {
            uct_gaudi_mem_withdraw_add(&w, chunk->dva, chunk->length);
        }
    }
    pthread_mutex_unlock(&ctx->lock);

    if ((w.max == 0) && (ctx->count + ctx->num_chunks > 0)) {
        ucs_error("%s: no memory to withdraw its exports", dev->name);
    }

    for (i = 0; i < w.count; ++i) {
        uct_gaudi_mem_call_free_cb(dev, w.ranges[i][0], w.ranges[i][1]);
    }

    ucs_debug("%s: withdrew %u exports", dev->name, w.count);
    ucs_free(w.ranges);
}

ucs_status_t uct_gaudi_mem_alloc(uct_gaudi_dev_t *dev, size_t length,
                                 uct_gaudi_mem_t *mem)
{
    uct_gaudi_chunk_t *chunk = NULL;
    ucs_status_t status;
    int empty;

    if ((length == 0) || (length > SIZE_MAX - UCT_GAUDI_CHUNK_ALIGN)) {
        return UCS_ERR_INVALID_PARAM;
    }

    /* carving from a chunk issues no ioctl that would tell */
    status = uct_gaudi_health_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    /* memory importers released since can be given out again */
    uct_gaudi_mem_retry_deferred(dev);
    mem->length = ucs_align_up_pow2(length, UCT_GAUDI_CHUNK_ALIGN);
    if (uct_gaudi_mem_is_gaudi1(dev)) {
        status = uct_gaudi_mem_alloc_phys(dev, mem);
    } else {
        status = uct_gaudi_mem_alloc_carved(dev, mem, &chunk);
    }

    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_mem_track(dev, mem, chunk);
    if (status != UCS_OK) {
        if (chunk == NULL) {
            uct_gaudi_mem_release_phys(dev, mem->dva, mem->length);
            return status;
        }

        pthread_mutex_lock(&dev->mem->lock);
        empty = uct_gaudi_chunk_put(chunk, mem->dva, mem->length, 0);
        if (empty) {
            ucs_list_del(&chunk->list);
            --dev->mem->num_chunks;
        }
        pthread_mutex_unlock(&dev->mem->lock);
        if (empty) {
            uct_gaudi_mem_chunk_drop(dev, chunk);
        }
        return status;
    }

    ucs_trace("%s: allocated 0x%" PRIx64 "+%zu in chunk 0x%" PRIx64
              " handle %" PRIu64, dev->name, mem->dva, mem->length,
              mem->chunk_dva, mem->handle);
    return UCS_OK;
}

void uct_gaudi_mem_set_free_cb(uct_gaudi_dev_t *dev,
                               uct_gaudi_mem_free_cb_t cb, void *arg,
                               double timeout)
{
    pthread_mutex_lock(&dev->mem->lock);
    while (dev->mem->free_cb_users > 0) {
        pthread_cond_wait(&dev->mem->free_cb_idle, &dev->mem->lock);
    }

    dev->mem->free_cb      = cb;
    dev->mem->free_arg     = arg;
    dev->mem->free_timeout = timeout;
    if (cb != NULL) {
        dev->mem->defer_timeout = ucs_max(dev->mem->defer_timeout, timeout);
    }
    pthread_mutex_unlock(&dev->mem->lock);
}

unsigned uct_gaudi_mem_retry_deferred(uct_gaudi_dev_t *dev)
{
    uct_gaudi_chunk_t *chunk, *tmp;
    unsigned remaining;

    if (dev->mem->num_deferred == 0) {
        return 0;
    }

    pthread_mutex_lock(&dev->mem->lock);
    ucs_list_for_each_safe(chunk, tmp, &dev->mem->deferred, list) {
        if (!dev->failed &&
            (uct_gaudi_mem_chunk_release(dev, chunk, UCS_LOG_LEVEL_DEBUG) !=
             UCS_OK)) {
            continue;
        }

        ucs_debug("%s: released deferred chunk 0x%" PRIx64 "+%zu",
                  dev->name, chunk->dva, chunk->length);
        ucs_list_del(&chunk->list);
        --dev->mem->num_deferred;
        uct_gaudi_chunk_destroy(chunk);
    }
    remaining = dev->mem->num_deferred;
    pthread_mutex_unlock(&dev->mem->lock);

    return remaining;
}

ucs_status_t uct_gaudi_mem_free(uct_gaudi_dev_t *dev, uct_gaudi_mem_t *mem)
{
    uct_gaudi_mem_region_t *region;
    ucs_pgt_region_t *pgt_region;
    uct_gaudi_chunk_t *chunk;
    int exported, shared, empty;

    /* a pool would be corrupted by a range it never gave out */
    pthread_mutex_lock(&dev->mem->lock);
    pgt_region = ucs_pgtable_lookup(&dev->mem->allocs, mem->dva);
    if ((pgt_region == NULL) || (pgt_region->start != mem->dva) ||
        (pgt_region->end - pgt_region->start != mem->length)) {
        pthread_mutex_unlock(&dev->mem->lock);
        ucs_error("%s: 0x%" PRIx64 "+%zu is not a device allocation of this "
                  "process", dev->name, mem->dva, mem->length);
        return UCS_ERR_INVALID_PARAM;
    }

    region = ucs_derived_of(pgt_region, uct_gaudi_mem_region_t);
    if ((region->chunk != NULL) && region->chunk->app) {
        pthread_mutex_unlock(&dev->mem->lock);
        ucs_error("%s: 0x%" PRIx64 "+%zu is the application's own device "
                  "memory, which its runtime frees", dev->name, mem->dva,
                  mem->length);
        return UCS_ERR_INVALID_PARAM;
    }

    /* from here no export marks it (gaudi_ipc exports when a peer asks,
     * from another thread): what is read now decides whether its range is
     * held back or handed out again */
    region->freeing = 1;
    exported        = region->exported;
    shared          = region->shared;
    pthread_mutex_unlock(&dev->mem->lock);

    uct_gaudi_mem_going(dev, mem->dva, mem->length);
    if (shared) {
        uct_gaudi_mem_call_free_cb(dev, mem->dva, mem->length);
    }

    region = uct_gaudi_mem_untrack(dev, mem->dva);
    if (region == NULL) {
        return UCS_ERR_INVALID_PARAM; /* freed meanwhile by another thread */
    }

    chunk = region->chunk;
    ucs_free(region);
    if (chunk == NULL) {
        uct_gaudi_mem_release_phys(dev, mem->dva, mem->length);
        return UCS_OK;
    }

    pthread_mutex_lock(&dev->mem->lock);
    empty = uct_gaudi_chunk_put(chunk, mem->dva, mem->length, exported);
    if (empty) {
        ucs_list_del(&chunk->list);
        --dev->mem->num_chunks;
    }
    pthread_mutex_unlock(&dev->mem->lock);

    /* an empty chunk goes back to the HBM at once: it is a large piece of
     * it, and a process holding one idle would starve the others */
    if (empty) {
        uct_gaudi_mem_chunk_drop(dev, chunk);
    }

    return UCS_OK;
}

ucs_status_t uct_gaudi_mem_find(uct_gaudi_dev_t *dev, uint64_t addr,
                                size_t length,
                                uct_gaudi_mem_export_mark_t mark,
                                uct_gaudi_mem_t *mem)
{
    uct_gaudi_mem_region_t *region;
    ucs_pgt_region_t *pgt_region;
    ucs_status_t status;

    pthread_mutex_lock(&dev->mem->lock);
    pgt_region = ucs_pgtable_lookup(&dev->mem->allocs, addr);
    region     = (pgt_region == NULL) ? NULL :
                 ucs_derived_of(pgt_region, uct_gaudi_mem_region_t);
    if ((region != NULL) &&
        uct_gaudi_mem_in_range(addr, length, pgt_region->start,
                               pgt_region->end - pgt_region->start) &&
        ((mark == UCT_GAUDI_MEM_EXPORT_NONE) || !region->freeing)) {
        mem->dva    = pgt_region->start;
        mem->length = pgt_region->end - pgt_region->start;
        if (region->chunk != NULL) {
            mem->handle       = region->chunk->handle;
            mem->chunk_dva    = region->chunk->dva;
            mem->chunk_length = region->chunk->length;
            region->chunk->exported |= (mark == UCT_GAUDI_MEM_EXPORT_CHUNK);
            region->chunk->shared   |= (mark == UCT_GAUDI_MEM_EXPORT_CHUNK) ||
                                       (mark == UCT_GAUDI_MEM_SHARE_CHUNK);
        } else {
            mem->handle       = 0;
            mem->chunk_dva    = mem->dva;
            mem->chunk_length = mem->length;
        }
        region->exported |= (mark == UCT_GAUDI_MEM_EXPORT_ALLOC);
        region->shared   |= (mark == UCT_GAUDI_MEM_EXPORT_ALLOC) ||
                            (mark == UCT_GAUDI_MEM_SHARE_ALLOC);
        status            = UCS_OK;
    } else {
        status = UCS_ERR_NO_ELEM;
    }
    pthread_mutex_unlock(&dev->mem->lock);

    return status;
}

ucs_status_t uct_gaudi_mem_find_chunk(uct_gaudi_dev_t *dev, uint64_t dva,
                                     size_t length, uct_gaudi_mem_t *mem)
{
    uct_gaudi_chunk_t *chunk;
    ucs_status_t status = UCS_ERR_NO_ELEM;

    /* a chunk leaves this list, under the lock, before it is dropped */
    pthread_mutex_lock(&dev->mem->lock);
    ucs_list_for_each(chunk, &dev->mem->chunks, list) {
        if ((chunk->dva == dva) && (chunk->length == length)) {
            chunk->exported   = 1;
            chunk->shared     = 1;
            mem->dva          = chunk->dva;
            mem->length       = chunk->length;
            mem->handle       = chunk->handle;
            mem->chunk_dva    = chunk->dva;
            mem->chunk_length = chunk->length;
            status            = UCS_OK;
            break;
        }
    }
    pthread_mutex_unlock(&dev->mem->lock);

    return status;
}

ucs_status_t uct_gaudi_mem_app_track(uct_gaudi_dev_t *dev, uint64_t handle,
                                     uint64_t dva, size_t length)
{
    uct_gaudi_chunk_t *chunk;
    uct_gaudi_mem_t mem;
    ucs_status_t status;

    status = uct_gaudi_chunk_create(dva, length, handle, &chunk);
    if (status != UCS_OK) {
        return status;
    }

    /* carved out whole: nothing of it is ever given to UCX's allocations */
    chunk->app = 1;
    status     = uct_gaudi_chunk_get(chunk, length, &mem.dva, &mem.length);
    if ((status != UCS_OK) || (mem.dva != dva) || (mem.length != length)) {
        ucs_error("%s: the application's mapping 0x%" PRIx64 "+%zu is not "
                  "in whole pages", dev->name, dva, length);
        uct_gaudi_chunk_destroy(chunk);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_gaudi_mem_track(dev, &mem, chunk);
    if (status != UCS_OK) {
        uct_gaudi_chunk_destroy(chunk);
    }

    return status;
}

/* The region of the application's own mapping at exactly @a dva; called
 * with the memory lock held */
static uct_gaudi_mem_region_t *uct_gaudi_mem_app_region(uct_gaudi_dev_t *dev,
                                                        uint64_t dva)
{
    ucs_pgt_region_t *pgt_region;
    uct_gaudi_mem_region_t *region;

    pgt_region = ucs_pgtable_lookup(&dev->mem->allocs, dva);
    if ((pgt_region == NULL) || (pgt_region->start != dva)) {
        return NULL;
    }

    region = ucs_derived_of(pgt_region, uct_gaudi_mem_region_t);
    return ((region->chunk != NULL) && region->chunk->app) ? region : NULL;
}

ucs_status_t uct_gaudi_mem_app_unmap_begin(uct_gaudi_dev_t *dev,
                                           uint64_t dva, uint64_t *handle_p,
                                           int *shared_p)
{
    uct_gaudi_mem_region_t *region;
    size_t length;
    int shared;

    pthread_mutex_lock(&dev->mem->lock);
    region = uct_gaudi_mem_app_region(dev, dva);
    if ((region == NULL) || region->freeing) {
        /* not ours to know, or another thread unmaps it now */
        pthread_mutex_unlock(&dev->mem->lock);
        return UCS_ERR_NO_ELEM;
    }

    /* from here no export marks it */
    region->freeing = 1;
    shared          = region->shared || region->chunk->shared;
    length          = region->super.end - region->super.start;
    *handle_p       = region->chunk->handle;
    pthread_mutex_unlock(&dev->mem->lock);

    uct_gaudi_mem_going(dev, dva, length);
    if (shared) {
        uct_gaudi_mem_call_free_cb(dev, dva, length);
    }

    *shared_p = shared;
    return UCS_OK;
}

void uct_gaudi_mem_app_unmap_end(uct_gaudi_dev_t *dev, uint64_t dva,
                                 int unmapped)
{
    uct_gaudi_mem_region_t *region;
    uct_gaudi_chunk_t *chunk;

    if (!unmapped) {
        /* still the application's: it may be registered and shared again
         * (a new export, with a new identity) */
        pthread_mutex_lock(&dev->mem->lock);
        region = uct_gaudi_mem_app_region(dev, dva);
        if (region != NULL) {
            region->freeing = 0;
        }
        pthread_mutex_unlock(&dev->mem->lock);
        return;
    }

    region = uct_gaudi_mem_untrack(dev, dva);
    if (region == NULL) {
        return;
    }

    chunk = region->chunk;
    ucs_free(region);
    pthread_mutex_lock(&dev->mem->lock);
    ucs_list_del(&chunk->list);
    --dev->mem->num_chunks;
    pthread_mutex_unlock(&dev->mem->lock);
    uct_gaudi_chunk_destroy(chunk);
}

/* The application's mappings found overlapping a range, to retire */
typedef struct {
    uint64_t dva[8];
    unsigned count;
    int      other;  /* something else overlaps: nothing is retired */
} uct_gaudi_mem_stale_t;


static void uct_gaudi_mem_stale_cb(const ucs_pgtable_t *pgtable,
                                   ucs_pgt_region_t *pgt_region, void *arg)
{
    uct_gaudi_mem_region_t *region = ucs_derived_of(pgt_region,
                                                    uct_gaudi_mem_region_t);
    uct_gaudi_mem_stale_t *stale   = arg;

    if ((region->chunk == NULL) || !region->chunk->app || region->freeing ||
        (stale->count == ucs_static_array_size(stale->dva))) {
        stale->other = 1;
    } else {
        stale->dva[stale->count++] = pgt_region->start;
    }
}

/*
 * The driver gave out [dva, dva + length) while the application's mappings
 * there were still tracked: they were unmapped behind the hook (a request
 * it did not see: a raw syscall, a dup of the fd). Retire them as at their
 * UNMAP (the importers are told), so the new mapping can be tracked.
 * Returns whether the range is free now.
 */
static int uct_gaudi_mem_app_retire(uct_gaudi_dev_t *dev, uint64_t dva,
                                    size_t length)
{
    uct_gaudi_mem_stale_t stale = {.count = 0, .other = 0};
    uct_gaudi_mem_region_t *region;
    unsigned i;
    int shared;

    pthread_mutex_lock(&dev->mem->lock);
    ucs_pgtable_search_range(&dev->mem->allocs, dva, dva + length - 1,
                             uct_gaudi_mem_stale_cb, &stale);
    for (i = 0; !stale.other && (i < stale.count); ++i) {
        uct_gaudi_mem_app_region(dev, stale.dva[i])->freeing = 1;
    }
    pthread_mutex_unlock(&dev->mem->lock);
    if (stale.other) {
        return 0;
    }

    for (i = 0; i < stale.count; ++i) {
        pthread_mutex_lock(&dev->mem->lock);
        region = uct_gaudi_mem_app_region(dev, stale.dva[i]);
        shared = region->shared || region->chunk->shared;
        length = region->super.end - region->super.start;
        pthread_mutex_unlock(&dev->mem->lock);

        ucs_diag("%s: the application's mapping 0x%" PRIx64 "+%zu is gone "
                 "without an UNMAP through ioctl() (its range was given out "
                 "again): forgotten%s", dev->name, stale.dva[i], length,
                 shared ? ", its importers told" : "");
        uct_gaudi_mem_going(dev, stale.dva[i], length);
        if (shared) {
            uct_gaudi_mem_call_free_cb(dev, stale.dva[i], length);
        }
        uct_gaudi_mem_app_unmap_end(dev, stale.dva[i], 1);
    }

    return 1;
}

double uct_gaudi_mem_free_timeout(uct_gaudi_dev_t *dev)
{
    double timeout;

    pthread_mutex_lock(&dev->mem->lock);
    timeout = (dev->mem->free_cb != NULL) ? dev->mem->free_timeout : 0;
    pthread_mutex_unlock(&dev->mem->lock);
    return timeout;
}

ucs_status_t uct_gaudi_mem_map_host(uct_gaudi_dev_t *dev, const void *addr,
                                    size_t length, uint64_t *dva_p)
{
    union hl_mem_args args;
    ucs_status_t status;

    if (length == 0) {
        return UCS_ERR_INVALID_PARAM;
    }

    memset(&args, 0, sizeof(args));
    args.in.op                      = HL_MEM_OP_MAP;
    args.in.flags                   = HL_MEM_USERPTR;
    args.in.map_host.host_virt_addr = (uintptr_t)addr;
    args.in.map_host.mem_size       = length;
    status = uct_gaudi_health_check(dev);
    if (status != UCS_OK) {
        return status;      /* said once, when the device failed */
    }

    status = uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_DEBUG);
    if (status != UCS_OK) {
        /* EFAULT: pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM) failed,
         * which a user meets most with a file mapped shared (6.5 on) */
        ucs_error("%s: cannot map host memory %p+%zu for DMA: %s%s",
                  dev->name, addr, length, ucs_status_string(status),
                  (status != UCS_ERR_INVALID_ADDR) ? "" :
                  " (the driver could not pin it: not mapped, read-only, "
                  "or a writable shared mapping of a file on a disk "
                  "filesystem, which kernels from 6.5 do not pin)");
        return status;
    }

    *dva_p = args.out.device_virt_addr;
    ucs_trace("%s: mapped host %p+%zu at 0x%" PRIx64, dev->name, addr,
              length, *dva_p);
    return UCS_OK;
}

ucs_status_t uct_gaudi_mem_unmap(uct_gaudi_dev_t *dev, uint64_t dva)
{
    return uct_gaudi_mem_unmap_level(dev, dva, UCS_LOG_LEVEL_ERROR);
}

ucs_status_t uct_gaudi_mem_lookup(uct_gaudi_dev_t *dev, uint64_t addr,
                                  size_t length, uint64_t *base_p,
                                  size_t *alloc_length_p)
{
    ucs_pgt_region_t *region;
    ucs_status_t status;

    pthread_mutex_lock(&dev->mem->lock);
    region = ucs_pgtable_lookup(&dev->mem->allocs, addr);
    if ((region != NULL) &&
        uct_gaudi_mem_in_range(addr, length, region->start,
                               region->end - region->start)) {
        *base_p         = region->start;
        *alloc_length_p = region->end - region->start;
        status          = UCS_OK;
    } else {
        status = UCS_ERR_NO_ELEM;
    }
    pthread_mutex_unlock(&dev->mem->lock);

    return status;
}

int uct_gaudi_mem_is_device_address(uct_gaudi_dev_t *dev, uint64_t addr,
                                    size_t length)
{
    uint64_t base;
    size_t alloc_length;

    if (!uct_gaudi_mem_is_gaudi1(dev) &&
        uct_gaudi_mem_in_range(addr, length, dev->info->dram_base,
                               dev->info->dram_size)) {
        return 1;
    }

    return uct_gaudi_mem_lookup(dev, addr, length, &base, &alloc_length) ==
           UCS_OK;
}

static void uct_gaudi_mem_purge_cb(const ucs_pgtable_t *pgtable,
                                   ucs_pgt_region_t *pgt_region, void *arg)
{
    uct_gaudi_mem_region_t *region = ucs_derived_of(pgt_region,
                                                    uct_gaudi_mem_region_t);
    uct_gaudi_dev_t *dev           = arg;
    size_t length                  = pgt_region->end - pgt_region->start;

    ucs_debug("%s: releasing leaked allocation 0x%" PRIx64 "+%zu", dev->name,
              (uint64_t)pgt_region->start, length);
    if (!uct_gaudi_mem_in_memtype_range(dev, pgt_region->start, length)) {
        uct_gaudi_mem_memtype_unset(pgt_region->start, length);
    }

    /* chunks are released after all their allocations */
    if ((region->chunk == NULL) && !dev->failed) {
        uct_gaudi_mem_release_phys(dev, pgt_region->start, length);
    }

    ucs_free(region);
}

unsigned uct_gaudi_mem_wait_deferred(uct_gaudi_dev_t *dev)
{
    ucs_time_t deadline;
    unsigned remaining;

    pthread_mutex_lock(&dev->mem->lock);
    deadline = ucs_get_time() + ucs_time_from_sec(dev->mem->defer_timeout);
    pthread_mutex_unlock(&dev->mem->lock);

    while (((remaining = uct_gaudi_mem_retry_deferred(dev)) > 0) &&
           (ucs_get_time() < deadline)) {
        usleep(1000);
    }

    return remaining;
}

void uct_gaudi_mem_cleanup(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_ctx_t *ctx = dev->mem;
    uct_gaudi_chunk_t *chunk, *tmp;

    ucs_pgtable_purge(&ctx->allocs, uct_gaudi_mem_purge_cb, dev);
    ucs_list_for_each_safe(chunk, tmp, &ctx->chunks, list) {
        ucs_list_del(&chunk->list);
        uct_gaudi_mem_chunk_drop(dev, chunk);
    }
    ctx->num_chunks = 0;

    if (uct_gaudi_mem_retry_deferred(dev) > 0) {
        /* closing the device drops them with everything else; an adopted
         * one stays open */
        ucs_list_for_each_safe(chunk, tmp, &ctx->deferred, list) {
            if (dev->adopted) {
                ucs_warn("%s: %zu bytes of device memory at 0x%" PRIx64
                         " that UCX freed stay allocated in the "
                         "application's context until it closes its device "
                         "fd: a peer still imports them", dev->name,
                         chunk->length, chunk->dva);
            }
            ucs_list_del(&chunk->list);
            uct_gaudi_chunk_destroy(chunk);
        }
        ucs_debug("%s: %u freed chunks still imported by peers at close",
                  dev->name, ctx->num_deferred);
        ctx->num_deferred = 0;
    }
    ucs_pgtable_cleanup(&ctx->allocs);
    uct_gaudi_pool_cleanup(&ctx->pool);
    pthread_cond_destroy(&ctx->free_cb_idle);
    pthread_mutex_destroy(&ctx->lock);
}
