/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_CHUNK_H_
#define UCT_GAUDI_CHUNK_H_

/*
 * Gaudi2+ device memory is allocated by the driver in pages of
 * device_mem_alloc_default_page_size (640 or 768 MiB on Gaudi2): one ALLOC
 * per UCX allocation would exhaust the HBM after ~128 allocations. A chunk
 * is one ALLOC + MAP of whole pages; UCX's allocations are carved out of
 * chunks (first fit, coalescing on free: uct_gaudi_pool_t) in host-page
 * units, the unit a DMA-BUF export offset and size need.
 * Bookkeeping only (no ioctl); not thread safe, the caller locks.
 */

#include "gaudi_pool.h"

#include <ucs/datastruct/list.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS


/* Granularity of allocations carved from a chunk: DMA-BUF exports need
 * page-aligned offsets and sizes */
#define UCT_GAUDI_CHUNK_ALIGN  4096ul


typedef struct uct_gaudi_chunk {
    ucs_list_link_t  list;      /* in the device's chunk or deferred list */
    uint64_t         dva;       /* MAP VA */
    size_t           length;    /* whole device pages */
    uint64_t         handle;    /* ALLOC handle */
    uct_gaudi_pool_t space;     /* what is not carved out */
    unsigned         num_live;  /* allocations carved out, not freed */
    unsigned         num_held;  /* freed while exported: kept out of
                                   space, since a peer may still read
                                   them, until the chunk is released */
    int              exported;  /* exported whole (6.1 handle form) */
    int              shared;    /* to be exported whole, or exported: its
                                   release calls the free callback */
    int              unmapped;  /* release: UNMAP done, FREE pending */
    int              app;       /* the application's own ALLOC + MAP
                                   (gaudi_app.h), carved out whole: the
                                   application releases it, never us */
} uct_gaudi_chunk_t;


/* A chunk over [dva, dva + length) of ALLOC handle @a handle, all free */
ucs_status_t uct_gaudi_chunk_create(uint64_t dva, size_t length,
                                    uint64_t handle,
                                    uct_gaudi_chunk_t **chunk_p);


void uct_gaudi_chunk_destroy(uct_gaudi_chunk_t *chunk);


/**
 * Carve @a length bytes (rounded up to UCT_GAUDI_CHUNK_ALIGN) out of
 * @a chunk.
 *
 * @return UCS_OK with the address and rounded length, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_gaudi_chunk_get(uct_gaudi_chunk_t *chunk, size_t length,
                                 uint64_t *dva_p, size_t *length_p);


/**
 * Carve @a length bytes (rounded up to UCT_GAUDI_CHUNK_ALIGN) out of the
 * first chunk of @a chunks that has room.
 *
 * @return UCS_OK with the chunk, address and rounded length, or
 *         UCS_ERR_NO_MEMORY when no chunk has room.
 */
ucs_status_t uct_gaudi_chunk_carve(ucs_list_link_t *chunks, size_t length,
                                   uct_gaudi_chunk_t **chunk_p,
                                   uint64_t *dva_p, size_t *length_p);


/**
 * Give [dva, dva + length) back to @a chunk; with @a hold it is kept out of
 * reuse (exported memory a peer may still hold) until the chunk goes.
 *
 * @return Whether the chunk has no live allocation left.
 */
int uct_gaudi_chunk_put(uct_gaudi_chunk_t *chunk, uint64_t dva,
                        size_t length, int hold);

END_C_DECLS

#endif
