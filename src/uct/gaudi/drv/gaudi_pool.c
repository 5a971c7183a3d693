/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_pool.h"

#include <uct/gaudi/gaudi_ucx_compat.h>

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <inttypes.h>


typedef struct {
    ucs_list_link_t list;
    uint64_t        start;
    uint64_t        size;
} uct_gaudi_pool_extent_t;


static uct_gaudi_pool_extent_t *uct_gaudi_pool_extent_new(uint64_t start,
                                                          uint64_t size)
{
    uct_gaudi_pool_extent_t *extent;

    extent = ucs_malloc(sizeof(*extent), "gaudi_pool_extent");
    if (extent == NULL) {
        return NULL;
    }

    extent->start = start;
    extent->size  = size;
    return extent;
}

ucs_status_t uct_gaudi_pool_init(uct_gaudi_pool_t *pool, uint64_t base,
                                 uint64_t size, uint64_t align)
{
    uct_gaudi_pool_extent_t *extent;
    uint64_t start, end;

    ucs_assert(ucs_is_pow2(align));
    ucs_list_head_init(&pool->free_list);
    start       = ucs_align_up_pow2(base, align);
    end         = ucs_align_down_pow2(base + size, align);
    pool->base  = start;
    pool->size  = (end > start) ? (end - start) : 0;
    pool->align = align;
    if (pool->size == 0) {
        return UCS_OK;
    }

    extent = uct_gaudi_pool_extent_new(pool->base, pool->size);
    if (extent == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    ucs_list_add_tail(&pool->free_list, &extent->list);
    return UCS_OK;
}

void uct_gaudi_pool_cleanup(uct_gaudi_pool_t *pool)
{
    uct_gaudi_pool_extent_t *extent, *tmp;

    ucs_list_for_each_safe(extent, tmp, &pool->free_list, list) {
        ucs_list_del(&extent->list);
        ucs_free(extent);
    }
}

ucs_status_t uct_gaudi_pool_alloc(uct_gaudi_pool_t *pool, uint64_t *size_p,
                                  uint64_t *addr_p)
{
    uint64_t size = ucs_align_up_pow2(*size_p, pool->align);
    uct_gaudi_pool_extent_t *extent;

    if ((size == 0) || (size < *size_p)) {
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_list_for_each(extent, &pool->free_list, list) {
        if (extent->size < size) {
            continue;
        }

        *addr_p        = extent->start;
        *size_p        = size;
        extent->start += size;
        extent->size  -= size;
        if (extent->size == 0) {
            ucs_list_del(&extent->list);
            ucs_free(extent);
        }

        return UCS_OK;
    }

    return UCS_ERR_NO_MEMORY;
}

void uct_gaudi_pool_free(uct_gaudi_pool_t *pool, uint64_t addr, uint64_t size)
{
    uct_gaudi_pool_extent_t *next, *prev, *extent;
    ucs_list_link_t *insert_after;

    ucs_assert(addr >= pool->base);
    ucs_assert(addr + size <= pool->base + pool->size);

    /* find the first free extent after addr */
    insert_after = &pool->free_list;
    next         = NULL;
    ucs_list_for_each(extent, &pool->free_list, list) {
        if (extent->start > addr) {
            next = extent;
            break;
        }

        insert_after = &extent->list;
    }

    prev = (insert_after == &pool->free_list) ? NULL :
           ucs_container_of(insert_after, uct_gaudi_pool_extent_t, list);

    if ((prev != NULL) && (prev->start + prev->size == addr)) {
        prev->size += size;
        if ((next != NULL) && (prev->start + prev->size == next->start)) {
            prev->size += next->size;
            ucs_list_del(&next->list);
            ucs_free(next);
        }
        return;
    }

    if ((next != NULL) && (addr + size == next->start)) {
        next->start = addr;
        next->size += size;
        return;
    }

    extent = uct_gaudi_pool_extent_new(addr, size);
    if (extent == NULL) {
        /* the range is lost to this process; the driver accounting and the
         * other allocations stay correct */
        ucs_warn("failed to return 0x%" PRIx64 "+%" PRIu64 " to the Gaudi1 "
                 "DRAM pool", addr, size);
        return;
    }

    ucs_list_insert_after(insert_after, &extent->list);
}

uint64_t uct_gaudi_pool_free_size(const uct_gaudi_pool_t *pool)
{
    const uct_gaudi_pool_extent_t *extent;
    uint64_t total = 0;

    ucs_list_for_each(extent, &pool->free_list, list) {
        total += extent->size;
    }

    return total;
}
