/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_chunk.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>


ucs_status_t uct_gaudi_chunk_create(uint64_t dva, size_t length,
                                    uint64_t handle,
                                    uct_gaudi_chunk_t **chunk_p)
{
    uct_gaudi_chunk_t *chunk;
    ucs_status_t status;

    chunk = ucs_calloc(1, sizeof(*chunk), "gaudi_chunk");
    if (chunk == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_gaudi_pool_init(&chunk->space, dva, length,
                                 UCT_GAUDI_CHUNK_ALIGN);
    if (status != UCS_OK) {
        ucs_free(chunk);
        return status;
    }

    chunk->dva    = dva;
    chunk->length = length;
    chunk->handle = handle;
    *chunk_p      = chunk;
    return UCS_OK;
}

void uct_gaudi_chunk_destroy(uct_gaudi_chunk_t *chunk)
{
    uct_gaudi_pool_cleanup(&chunk->space);
    ucs_free(chunk);
}

ucs_status_t uct_gaudi_chunk_get(uct_gaudi_chunk_t *chunk, size_t length,
                                 uint64_t *dva_p, size_t *length_p)
{
    uint64_t size = length;
    ucs_status_t status;

    status = uct_gaudi_pool_alloc(&chunk->space, &size, dva_p);
    if (status != UCS_OK) {
        return status;
    }

    ++chunk->num_live;
    *length_p = size;
    return UCS_OK;
}

ucs_status_t uct_gaudi_chunk_carve(ucs_list_link_t *chunks, size_t length,
                                   uct_gaudi_chunk_t **chunk_p,
                                   uint64_t *dva_p, size_t *length_p)
{
    uct_gaudi_chunk_t *chunk;

    ucs_list_for_each(chunk, chunks, list) {
        if (uct_gaudi_chunk_get(chunk, length, dva_p, length_p) == UCS_OK) {
            *chunk_p = chunk;
            return UCS_OK;
        }
    }

    return UCS_ERR_NO_MEMORY;
}

int uct_gaudi_chunk_put(uct_gaudi_chunk_t *chunk, uint64_t dva,
                        size_t length, int hold)
{
    ucs_assert(chunk->num_live > 0);
    if (hold) {
        ++chunk->num_held;
    } else {
        uct_gaudi_pool_free(&chunk->space, dva, length);
    }

    return --chunk->num_live == 0;
}
