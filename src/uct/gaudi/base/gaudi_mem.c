/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_mem.h"
#include "gaudi_err.h"
#include "gaudi_ioctl.h"
#include "gaudi_own.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/memory/memtype_cache.h>
#include <ucs/sys/math.h>
#include <inttypes.h>
#include <string.h>


/* Gaudi1 user-space HBM pool granularity (as hl-thunk's tests use) */
#define UCT_GAUDI_MEM_GAUDI1_GRANULE  (2 * UCS_MBYTE)
#define UCT_GAUDI_MEM_DEFAULT_GRANULE (2 * UCS_MBYTE)


typedef struct {
    ucs_pgt_region_t super;    /* [dva, dva + length) */
    uint64_t         handle;   /* ALLOC handle */
    int              exported; /* a DMA-BUF was exported from it */
} uct_gaudi_mem_region_t;


/* A freed allocation the driver still holds (exported and referenced by an
 * importer): its UNMAP + FREE are retried later */
typedef struct {
    ucs_list_link_t  list;
    uint64_t         dva;
    size_t           length;
    uint64_t         handle;
} uct_gaudi_mem_deferred_t;


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
    ucs_memtype_cache_update((void*)addr, length, UCS_MEMORY_TYPE_GAUDI,
                             sys_dev);
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

    status = uct_gaudi_dev_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    return UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_MEMORY,
                                               args),
                          log_level);
}

ucs_status_t uct_gaudi_mem_init(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_ctx_t *ctx = &dev->mem;
    ucs_status_t status;

    status = ucs_recursive_spinlock_init(&ctx->lock, 0);
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_pgtable_init(&ctx->allocs, uct_gaudi_mem_pgd_alloc,
                              uct_gaudi_mem_pgd_release);
    if (status != UCS_OK) {
        goto err_lock;
    }

    ctx->count        = 0;
    ctx->num_deferred = 0;
    ctx->free_cb      = NULL;
    ctx->free_arg     = NULL;
    ucs_list_head_init(&ctx->deferred);
    if (uct_gaudi_mem_is_gaudi1(dev)) {
        ctx->granule = UCT_GAUDI_MEM_GAUDI1_GRANULE;
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
    ucs_pgtable_cleanup(&ctx->allocs);
err_lock:
    ucs_recursive_spinlock_destroy(&ctx->lock);
    return status;
}

static ucs_status_t uct_gaudi_mem_track(uct_gaudi_dev_t *dev,
                                        const uct_gaudi_mem_t *mem)
{
    uct_gaudi_mem_region_t *region;
    ucs_status_t status;

    region = ucs_malloc(sizeof(*region), "gaudi_mem_region");
    if (region == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    region->super.start = mem->dva;
    region->super.end   = mem->dva + mem->length;
    region->handle      = mem->handle;
    region->exported    = 0;

    ucs_recursive_spin_lock(&dev->mem.lock);
    status = ucs_pgtable_insert(&dev->mem.allocs, &region->super);
    if (status == UCS_OK) {
        ++dev->mem.count;
    }
    ucs_recursive_spin_unlock(&dev->mem.lock);

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

    ucs_recursive_spin_lock(&dev->mem.lock);
    pgt_region = ucs_pgtable_lookup(&dev->mem.allocs, dva);
    if ((pgt_region == NULL) || (pgt_region->start != dva)) {
        ucs_recursive_spin_unlock(&dev->mem.lock);
        return NULL;
    }

    ucs_pgtable_remove(&dev->mem.allocs, pgt_region);
    --dev->mem.count;
    ucs_recursive_spin_unlock(&dev->mem.lock);

    if (!uct_gaudi_mem_in_memtype_range(dev, pgt_region->start,
                                        pgt_region->end - pgt_region->start)) {
        uct_gaudi_mem_memtype_unset(pgt_region->start,
                                    pgt_region->end - pgt_region->start);
    }

    return ucs_derived_of(pgt_region, uct_gaudi_mem_region_t);
}

static ucs_status_t uct_gaudi_mem_alloc_mapped(uct_gaudi_dev_t *dev,
                                               uct_gaudi_mem_t *mem)
{
    union hl_mem_args args;
    ucs_status_t status;

    memset(&args, 0, sizeof(args));
    args.in.op                = HL_MEM_OP_ALLOC;
    args.in.alloc.mem_size    = mem->length;
    args.in.alloc.page_size   = 0;  /* device default */
    status = uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_ERROR);
    if (status != UCS_OK) {
        return status;
    }

    mem->handle = args.out.handle;
    memset(&args, 0, sizeof(args));
    args.in.op                  = HL_MEM_OP_MAP;
    args.in.map_device.handle   = mem->handle;
    status = uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_ERROR);
    if (status != UCS_OK) {
        goto err_free;
    }

    mem->dva = args.out.device_virt_addr;
    return UCS_OK;

err_free:
    memset(&args, 0, sizeof(args));
    args.in.op          = HL_MEM_OP_FREE;
    args.in.free.handle = mem->handle;
    uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_DIAG);
    return status;
}

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

    ucs_recursive_spin_lock(&dev->mem.lock);
    status = uct_gaudi_pool_alloc(&dev->mem.pool, &size, &mem->dva);
    ucs_recursive_spin_unlock(&dev->mem.lock);
    if (status != UCS_OK) {
        ucs_error("%s: out of device memory for %zu bytes (%" PRIu64
                  " free)", dev->name, mem->length,
                  uct_gaudi_pool_free_size(&dev->mem.pool));
        return status;
    }

    mem->handle = 0;
    status      = uct_gaudi_mem_account(dev, HL_MEM_OP_ALLOC, mem->length);
    if (status != UCS_OK) {
        ucs_recursive_spin_lock(&dev->mem.lock);
        uct_gaudi_pool_free(&dev->mem.pool, mem->dva, size);
        ucs_recursive_spin_unlock(&dev->mem.lock);
    }

    return status;
}

/*
 * Give the allocation back to the driver. Returns UCS_OK when it is gone,
 * an error while it still exists (e.g. UNMAP refused because it is exported).
 */
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

static ucs_status_t uct_gaudi_mem_release(uct_gaudi_dev_t *dev, uint64_t dva,
                                          size_t length, uint64_t handle,
                                          ucs_log_level_t log_level)
{
    union hl_mem_args args;
    ucs_status_t status;

    if (uct_gaudi_mem_is_gaudi1(dev)) {
        ucs_recursive_spin_lock(&dev->mem.lock);
        uct_gaudi_pool_free(&dev->mem.pool, dva, length);
        ucs_recursive_spin_unlock(&dev->mem.lock);
        /* a failure only skews the driver's usage counters */
        uct_gaudi_mem_account(dev, HL_MEM_OP_FREE, length);
        return UCS_OK;
    }

    status = uct_gaudi_mem_unmap_level(dev, dva, log_level);
    if (status != UCS_OK) {
        return status;
    }

    memset(&args, 0, sizeof(args));
    args.in.op          = HL_MEM_OP_FREE;
    args.in.free.handle = handle;
    /* unmapped already: a failed FREE leaks the handle until close */
    uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_ERROR);
    return UCS_OK;
}

ucs_status_t uct_gaudi_mem_alloc(uct_gaudi_dev_t *dev, size_t length,
                                 uct_gaudi_mem_t *mem)
{
    ucs_status_t status;

    if (length == 0) {
        return UCS_ERR_INVALID_PARAM;
    }

    /* memory importers released since can be given out again */
    uct_gaudi_mem_retry_deferred(dev);
    mem->length = ucs_align_up(length, dev->mem.granule);
    if (uct_gaudi_mem_is_gaudi1(dev)) {
        status = uct_gaudi_mem_alloc_phys(dev, mem);
    } else {
        status = uct_gaudi_mem_alloc_mapped(dev, mem);
    }

    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_mem_track(dev, mem);
    if (status != UCS_OK) {
        uct_gaudi_mem_release(dev, mem->dva, mem->length, mem->handle,
                              UCS_LOG_LEVEL_ERROR);
        return status;
    }

    ucs_trace("%s: allocated 0x%" PRIx64 "+%zu handle %" PRIu64, dev->name,
              mem->dva, mem->length, mem->handle);
    return UCS_OK;
}

/* Keep a freed allocation that importers still hold, to release it later */
static ucs_status_t uct_gaudi_mem_defer(uct_gaudi_dev_t *dev,
                                        uct_gaudi_mem_region_t *region)
{
    uct_gaudi_mem_deferred_t *deferred;

    deferred = ucs_malloc(sizeof(*deferred), "gaudi_mem_deferred");
    if (deferred == NULL) {
        ucs_error("%s: failed to allocate a deferred release", dev->name);
        return UCS_ERR_NO_MEMORY;
    }

    deferred->dva    = region->super.start;
    deferred->length = region->super.end - region->super.start;
    deferred->handle = region->handle;
    ucs_recursive_spin_lock(&dev->mem.lock);
    ucs_list_add_tail(&dev->mem.deferred, &deferred->list);
    ++dev->mem.num_deferred;
    ucs_recursive_spin_unlock(&dev->mem.lock);
    ucs_debug("%s: 0x%" PRIx64 "+%zu is still imported by a peer: its "
              "release is deferred", dev->name, deferred->dva,
              deferred->length);
    return UCS_OK;
}

void uct_gaudi_mem_set_free_cb(uct_gaudi_dev_t *dev,
                               uct_gaudi_mem_free_cb_t cb, void *arg)
{
    ucs_recursive_spin_lock(&dev->mem.lock);
    dev->mem.free_cb  = cb;
    dev->mem.free_arg = arg;
    ucs_recursive_spin_unlock(&dev->mem.lock);
}

unsigned uct_gaudi_mem_retry_deferred(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_deferred_t *deferred, *tmp;
    unsigned remaining;

    if (dev->mem.num_deferred == 0) {
        return 0;
    }

    ucs_recursive_spin_lock(&dev->mem.lock);
    ucs_list_for_each_safe(deferred, tmp, &dev->mem.deferred, list) {
        if (!dev->failed &&
            (uct_gaudi_mem_release(dev, deferred->dva, deferred->length,
                                   deferred->handle, UCS_LOG_LEVEL_DEBUG) !=
             UCS_OK)) {
            continue;
        }

        ucs_debug("%s: released deferred 0x%" PRIx64 "+%zu", dev->name,
                  deferred->dva, deferred->length);
        ucs_list_del(&deferred->list);
        --dev->mem.num_deferred;
        ucs_free(deferred);
    }
    remaining = dev->mem.num_deferred;
    ucs_recursive_spin_unlock(&dev->mem.lock);

    return remaining;
}

ucs_status_t uct_gaudi_mem_free(uct_gaudi_dev_t *dev, uct_gaudi_mem_t *mem)
{
    uct_gaudi_mem_region_t *region;
    ucs_pgt_region_t *pgt_region;
    ucs_status_t status;
    int exported;

    /* a Gaudi1 pool would be corrupted by a range it never gave out */
    ucs_recursive_spin_lock(&dev->mem.lock);
    pgt_region = ucs_pgtable_lookup(&dev->mem.allocs, mem->dva);
    if ((pgt_region == NULL) || (pgt_region->start != mem->dva) ||
        (pgt_region->end - pgt_region->start != mem->length)) {
        ucs_recursive_spin_unlock(&dev->mem.lock);
        ucs_error("%s: 0x%" PRIx64 "+%zu is not a device allocation of this "
                  "process", dev->name, mem->dva, mem->length);
        return UCS_ERR_INVALID_PARAM;
    }

    exported = ucs_derived_of(pgt_region, uct_gaudi_mem_region_t)->exported;
    ucs_recursive_spin_unlock(&dev->mem.lock);

    if (exported && (dev->mem.free_cb != NULL)) {
        dev->mem.free_cb(dev->mem.free_arg, mem->dva, mem->length);
    }

    /* an exported allocation may still be imported by a peer: the driver
     * then refuses the UNMAP (EINVAL), which is not an error here */
    status = uct_gaudi_mem_release(dev, mem->dva, mem->length, mem->handle,
                                   exported ? UCS_LOG_LEVEL_DEBUG :
                                              UCS_LOG_LEVEL_ERROR);
    if ((status != UCS_OK) && !dev->failed && !exported) {
        return status;
    }

    /* gone, or deferred, or the device failed and its context is dead */
    region = uct_gaudi_mem_untrack(dev, mem->dva);
    if ((status != UCS_OK) && !dev->failed) {
        status = uct_gaudi_mem_defer(dev, region);
    }

    ucs_free(region);
    return status;
}

ucs_status_t uct_gaudi_mem_find(uct_gaudi_dev_t *dev, uint64_t addr,
                                size_t length, int exporting,
                                uct_gaudi_mem_t *mem)
{
    uct_gaudi_mem_region_t *region;
    ucs_pgt_region_t *pgt_region;
    ucs_status_t status;

    ucs_recursive_spin_lock(&dev->mem.lock);
    pgt_region = ucs_pgtable_lookup(&dev->mem.allocs, addr);
    if ((pgt_region != NULL) &&
        uct_gaudi_mem_in_range(addr, length, pgt_region->start,
                               pgt_region->end - pgt_region->start)) {
        region         = ucs_derived_of(pgt_region, uct_gaudi_mem_region_t);
        mem->dva       = pgt_region->start;
        mem->length    = pgt_region->end - pgt_region->start;
        mem->handle    = region->handle;
        region->exported |= exporting;
        status         = UCS_OK;
    } else {
        status = UCS_ERR_NO_ELEM;
    }
    ucs_recursive_spin_unlock(&dev->mem.lock);

    return status;
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
    status = uct_gaudi_mem_op(dev, &args, UCS_LOG_LEVEL_ERROR);
    if (status != UCS_OK) {
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

    ucs_recursive_spin_lock(&dev->mem.lock);
    region = ucs_pgtable_lookup(&dev->mem.allocs, addr);
    if ((region != NULL) &&
        uct_gaudi_mem_in_range(addr, length, region->start,
                               region->end - region->start)) {
        *base_p         = region->start;
        *alloc_length_p = region->end - region->start;
        status          = UCS_OK;
    } else {
        status = UCS_ERR_NO_ELEM;
    }
    ucs_recursive_spin_unlock(&dev->mem.lock);

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

static void uct_gaudi_mem_drop_deferred(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_deferred_t *deferred, *tmp;

    ucs_list_for_each_safe(deferred, tmp, &dev->mem.deferred, list) {
        ucs_list_del(&deferred->list);
        ucs_free(deferred);
    }
    dev->mem.num_deferred = 0;
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

    if (!dev->failed) {
        uct_gaudi_mem_release(dev, pgt_region->start, length, region->handle,
                              UCS_LOG_LEVEL_ERROR);
    }

    ucs_free(region);
}

void uct_gaudi_mem_cleanup(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_ctx_t *ctx = &dev->mem;

    ucs_pgtable_purge(&ctx->allocs, uct_gaudi_mem_purge_cb, dev);
    if (uct_gaudi_mem_retry_deferred(dev) > 0) {
        /* closing the device drops them with everything else */
        ucs_debug("%s: %u freed allocations still imported by peers at "
                  "close", dev->name, ctx->num_deferred);
        uct_gaudi_mem_drop_deferred(dev);
    }
    ucs_pgtable_cleanup(&ctx->allocs);
    uct_gaudi_pool_cleanup(&ctx->pool);
    ucs_recursive_spinlock_destroy(&ctx->lock);
}
