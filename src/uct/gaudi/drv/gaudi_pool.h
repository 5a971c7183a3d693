/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_POOL_H_
#define UCT_GAUDI_POOL_H_

/*
 * First-fit allocator over an address range, for Gaudi1 HBM: its driver does
 * not allocate device memory, the user manages the physical range
 * [dram_base, dram_base + dram_size) itself (driver-abi.md 4.3).
 * Not thread safe; the caller locks.
 */

#include <ucs/datastruct/list.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS


typedef struct uct_gaudi_pool {
    ucs_list_link_t free_list;  /* free extents, sorted by address */
    uint64_t        base;       /* start of the managed range */
    uint64_t        size;       /* length of the managed range */
    uint64_t        align;      /* granularity, power of 2 */
} uct_gaudi_pool_t;


/* Manage [base, base + size) in @a align units (power of 2) */
ucs_status_t uct_gaudi_pool_init(uct_gaudi_pool_t *pool, uint64_t base,
                                 uint64_t size, uint64_t align);


void uct_gaudi_pool_cleanup(uct_gaudi_pool_t *pool);


/**
 * Allocate @a size bytes (rounded up to the granularity).
 *
 * @return UCS_OK with the address in @a addr_p and the rounded length in
 *         @a size_p, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_gaudi_pool_alloc(uct_gaudi_pool_t *pool, uint64_t *size_p,
                                  uint64_t *addr_p);


/* Return [addr, addr + size) as returned by uct_gaudi_pool_alloc() */
void uct_gaudi_pool_free(uct_gaudi_pool_t *pool, uint64_t addr, uint64_t size);


/* Total free bytes */
uint64_t uct_gaudi_pool_free_size(const uct_gaudi_pool_t *pool);

END_C_DECLS

#endif
