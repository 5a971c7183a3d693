/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_VA_H_
#define GAUDI_EMU_VA_H_

#include "emu_ctx.h"

/* Device VA space bookkeeping of a context (caller holds ctx->lock) */

/* Find a free block of @size bytes aligned to @align in [start, end); a
 * usable @hint wins; -ENOMEM if none (or if @force and the hint is not
 * usable) */
int emu_va_reserve(const emu_va_t *va, uint64_t start, uint64_t end,
                   uint64_t size, uint64_t align, uint64_t hint, int force,
                   uint64_t *addr_p);

int emu_va_insert(emu_va_t *va, const emu_map_t *map);

/* The mapping containing @addr, or NULL */
emu_map_t *emu_va_find(const emu_va_t *va, uint64_t addr);

void emu_va_remove(emu_va_t *va, emu_map_t *map);

void emu_va_cleanup(emu_va_t *va);

/* Translate a device address of @ctx to a process pointer: sets the number
 * of bytes contiguous from there. Takes ctx->lock. -EFAULT if unmapped. */
int emu_va_translate(emu_ctx_t *ctx, uint64_t addr, uint8_t **ptr_p,
                     uint64_t *avail_p);

/* Is @addr inside a device address range of the ASIC (DRAM, host, SRAM)? */
int emu_va_in_device_range(uint64_t addr);

#endif
