/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_va.h"
#include "emu_global.h"

#include <stdlib.h>
#include <string.h>


/* Index of the first mapping whose block ends after @addr */
static size_t emu_va_lower(const emu_va_t *va, uint64_t addr)
{
    size_t lo = 0, hi = va->count, mid;

    while (lo < hi) {
        mid = (lo + hi) / 2;
        if (va->maps[mid].va + va->maps[mid].size <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }

    return lo;
}

static int emu_va_is_free(const emu_va_t *va, uint64_t addr, uint64_t size)
{
    size_t i = emu_va_lower(va, addr);

    return (i == va->count) || (va->maps[i].va >= addr + size);
}

int emu_va_reserve(const emu_va_t *va, uint64_t start, uint64_t end,
                   uint64_t size, uint64_t align, uint64_t hint, int force,
                   uint64_t *addr_p)
{
    uint64_t addr;
    size_t i;

    if ((size == 0) || (size > end - start)) {
        return -ENOMEM;
    }

    if ((hint != 0) && ((hint % align) == 0) && (hint >= start) &&
        (hint <= end - size) && emu_va_is_free(va, hint, size)) {
        *addr_p = hint;
        return 0;
    } else if (force) {
        return -ENOMEM;
    }

    addr = emu_align_up(start, align);
    for (i = emu_va_lower(va, start); i < va->count; ++i) {
        if (va->maps[i].va >= end) {
            break;
        }
        if (va->maps[i].va >= addr + size) {
            break;
        }
        addr = emu_align_up(va->maps[i].va + va->maps[i].size, align);
    }

    if ((addr < start) || (addr > end - size)) {
        return -ENOMEM;
    }

    *addr_p = addr;
    return 0;
}

int emu_va_insert(emu_va_t *va, const emu_map_t *map)
{
    emu_map_t *maps;
    size_t i, cap;

    if (va->count == va->cap) {
        cap  = emu_max(va->cap * 2, 64);
        maps = realloc(va->maps, cap * sizeof(*maps));
        if (maps == NULL) {
            return -ENOMEM;
        }
        va->maps = maps;
        va->cap  = cap;
    }

    i = emu_va_lower(va, map->va);
    memmove(&va->maps[i + 1], &va->maps[i],
            (va->count - i) * sizeof(*va->maps));
    va->maps[i] = *map;
    ++va->count;
    return 0;
}

emu_map_t *emu_va_find(const emu_va_t *va, uint64_t addr)
{
    size_t i = emu_va_lower(va, addr);

    if ((i < va->count) && (va->maps[i].va <= addr)) {
        return &va->maps[i];
    }

    return NULL;
}

void emu_va_remove(emu_va_t *va, emu_map_t *map)
{
    size_t i = map - va->maps;

    memmove(&va->maps[i], &va->maps[i + 1],
            (va->count - i - 1) * sizeof(*va->maps));
    --va->count;
}

void emu_va_cleanup(emu_va_t *va)
{
    free(va->maps);
    memset(va, 0, sizeof(*va));
}

int emu_va_translate(emu_ctx_t *ctx, uint64_t addr, uint8_t **ptr_p,
                     uint64_t *avail_p)
{
    const emu_asic_t *asic = emu_g.asic;
    emu_map_t *map;
    int ret = -EFAULT;

    if (!asic->dram_vm && (addr >= asic->dram_base) &&
        (addr - asic->dram_base < emu_g.dram_size) && (ctx->hbm != NULL)) {
        /* Gaudi1: physical HBM address */
        *ptr_p   = ctx->hbm + (addr - asic->dram_base);
        *avail_p = emu_g.dram_size - (addr - asic->dram_base);
        return 0;
    }

    pthread_mutex_lock(&ctx->lock);
    map = emu_va_find(&ctx->va, addr);
    if (map != NULL) {
        *ptr_p   = map->host + (addr - map->va);
        *avail_p = map->va + map->size - addr;
        ret      = map->unrouted ? -EHOSTUNREACH : 0;
    }
    pthread_mutex_unlock(&ctx->lock);

    return ret;
}

int emu_va_in_device_range(uint64_t addr)
{
    const emu_asic_t *asic = emu_g.asic;
    uint64_t dram_end;

    dram_end = asic->dram_base +
               (asic->dram_vm ? asic->dram_va_size : emu_g.dram_size);

    return ((addr >= asic->dram_base) && (addr < dram_end)) ||
           ((addr >= asic->host_va_start) && (addr < asic->host_va_end)) ||
           ((addr >= asic->huge_va_start) && (addr < asic->huge_va_end)) ||
           ((addr >= asic->sram_base) &&
            (addr < asic->sram_base + asic->sram_size));
}
