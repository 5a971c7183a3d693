/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_MEM_H_
#define UCT_GAUDI_MEM_H_

/*
 * Device memory of the owned device (Gaudi2+: allocations carved out of
 * HL_MEM_OP_ALLOC + MAP chunks, gaudi_chunk.h; Gaudi1: a user-space pool
 * over physical HBM) and userptr maps of host memory.
 * Addresses are device addresses (uint64_t): never dereference them.
 */

#include "gaudi_chunk.h"
#include "gaudi_device.h"
#include "gaudi_pool.h"

#include <ucs/datastruct/list.h>
#include <ucs/datastruct/pgtable.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS


/* One device allocation */
typedef struct uct_gaudi_mem {
    uint64_t handle;       /* ALLOC handle of its chunk (Gaudi2+); 0 on
                              Gaudi1 */
    uint64_t dva;          /* device VA (Gaudi2+) or physical address
                              (Gaudi1) */
    size_t   length;       /* rounded up to UCT_GAUDI_CHUNK_ALIGN */
    uint64_t chunk_dva;    /* MAP VA of its chunk (Gaudi1: dva) */
    size_t   chunk_length; /* length of its chunk (Gaudi1: length) */
} uct_gaudi_mem_t;


/* What uct_gaudi_mem_find() marks: shared (its free calls the free
 * callback), or exported (shared, and a peer may hold a DMA-BUF of it: its
 * range is not given out again while its chunk lives) */
typedef enum {
    UCT_GAUDI_MEM_EXPORT_NONE,   /* a lookup only */
    UCT_GAUDI_MEM_SHARE_ALLOC,   /* the allocation, to be exported later */
    UCT_GAUDI_MEM_SHARE_CHUNK,   /* its whole chunk, to be exported later */
    UCT_GAUDI_MEM_EXPORT_ALLOC,  /* the allocation (address + offset form) */
    UCT_GAUDI_MEM_EXPORT_CHUNK   /* its whole chunk (6.1 handle form) */
} uct_gaudi_mem_export_mark_t;


/* Called when an exported allocation is freed, before it is given back:
 * the exporter tells importers to let go (gaudi_ipc) */
typedef void (*uct_gaudi_mem_free_cb_t)(void *arg, uint64_t dva,
                                        size_t length);


/* Memory state of an owned device (part of uct_gaudi_dev_t) */
typedef struct uct_gaudi_mem_ctx {
    /* guards allocs, pool, chunks, deferred and the free callback; taken
     * inside the ownership lock, never with a DMA channel's; no callback
     * runs under it */
    pthread_mutex_t          lock;
    ucs_pgtable_t            allocs;    /* live allocations of this process */
    uct_gaudi_pool_t         pool;      /* Gaudi1 physical HBM pool */
    uint64_t                 granule;   /* chunk rounding: the ALLOC page */
    unsigned                 count;     /* number of live allocations */
    ucs_list_link_t          chunks;    /* Gaudi2+ chunks in use */
    unsigned                 num_chunks;
    ucs_list_link_t          deferred;  /* chunks whose release the driver
                                           refused: exported memory a peer
                                           still imports */
    unsigned                 num_deferred;
    uct_gaudi_mem_free_cb_t  free_cb;   /* exported allocation freed */
    void                     *free_arg;
    double                   free_timeout; /* how long the free callback's
                                              owner gives importers to let
                                              go (seconds) */
    double                   defer_timeout; /* the longest free_timeout
                                               set: what an adopted
                                               device's release waits for
                                               deferred chunks (seconds) */
    unsigned                 free_cb_users; /* calls of free_cb running:
                                               its owner may not go */
    pthread_cond_t           free_cb_idle;  /* free_cb_users dropped to 0 */
} uct_gaudi_mem_ctx_t;


/* Set up / tear down the memory state of @a dev (ownership layer) */
ucs_status_t uct_gaudi_mem_init(uct_gaudi_dev_t *dev);
void uct_gaudi_mem_cleanup(uct_gaudi_dev_t *dev);


/**
 * Allocate @a length bytes of device memory, aligned to and rounded up to
 * UCT_GAUDI_CHUNK_ALIGN: Gaudi2+ carved from a chunk (a new ALLOC + MAP of
 * whole device pages when no chunk has room); Gaudi1 a range of the
 * physical pool plus the driver's ALLOC accounting call.
 */
ucs_status_t uct_gaudi_mem_alloc(uct_gaudi_dev_t *dev, size_t length,
                                 uct_gaudi_mem_t *mem);


/**
 * Free an allocation of uct_gaudi_mem_alloc(). A chunk left with no live
 * allocation is given back to the driver (UNMAP + FREE). An exported
 * allocation stays out of reuse until its chunk goes, since a peer may
 * still import it; a chunk the driver refuses to release while a peer
 * holds an export of it (UNMAP refused; 6.1: FREE refused) is forgotten by
 * this process at once and its release retried later
 * (uct_gaudi_mem_retry_deferred()).
 */
ucs_status_t uct_gaudi_mem_free(uct_gaudi_dev_t *dev, uct_gaudi_mem_t *mem);


/* Set (or with NULL clear) the callback of exported allocations' frees,
 * and how long its importers may take to let go (@a timeout, seconds);
 * waits for the calls of the previous one that are running (so its owner
 * may go once this returns) */
void uct_gaudi_mem_set_free_cb(uct_gaudi_dev_t *dev,
                               uct_gaudi_mem_free_cb_t cb, void *arg,
                               double timeout);


/**
 * Retry the deferred releases of @a dev until none is left or the longest
 * timeout a free callback's owner ever set has passed (its importers were
 * told to let go when the memory was freed): the number left. For the last
 * release of an adopted device, whose fd stays open (the application's), so
 * that closing it does not drop them. Takes only the memory lock.
 */
unsigned uct_gaudi_mem_wait_deferred(uct_gaudi_dev_t *dev);


/* The timeout of the free callback (0 without one) */
double uct_gaudi_mem_free_timeout(uct_gaudi_dev_t *dev);


/**
 * The application's runtime mapped its ALLOC handle @a handle at
 * [dva, dva + length) (gaudi_app.h): from now on it is a live allocation of
 * its own chunk, found, exported and revoked like UCX's, and never released
 * by the library.
 */
ucs_status_t uct_gaudi_mem_app_track(uct_gaudi_dev_t *dev, uint64_t handle,
                                     uint64_t dva, size_t length);


/**
 * The application is about to UNMAP its mapping at @a dva: no export marks
 * it from now on; UCP's cached registrations and (if it was shared, said in
 * @a shared_p) the importers are told it goes, as at a free. @a handle_p is
 * its ALLOC handle.
 *
 * @return UCS_ERR_NO_ELEM if it is no tracked mapping of the application
 *         (or another thread unmaps it now).
 */
ucs_status_t uct_gaudi_mem_app_unmap_begin(uct_gaudi_dev_t *dev,
                                           uint64_t dva, uint64_t *handle_p,
                                           int *shared_p);


/* The application's UNMAP of @a dva returned: forget the mapping if it is
 * gone (@a unmapped), else it is live again */
void uct_gaudi_mem_app_unmap_end(uct_gaudi_dev_t *dev, uint64_t dva,
                                 int unmapped);


/**
 * The failed device is being released (gaudi_reset.h): every exported
 * range of live allocations goes through the free callback now, as if
 * freed (each DMA-BUF holds the device's file; gaudi_ipc closes its
 * descriptors and tells the importers to let go). The allocations stay
 * tracked until they are freed.
 */
void uct_gaudi_mem_withdraw_exports(uct_gaudi_dev_t *dev);


/* Retry the deferred releases; returns how many are still deferred */
unsigned uct_gaudi_mem_retry_deferred(uct_gaudi_dev_t *dev);


/**
 * The live allocation of this process that contains [addr, addr + length),
 * in @a mem (start, length, chunk). @a mark tells what is being exported
 * (the allocation or its whole chunk): its release then waits for peers.
 *
 * @return UCS_OK or UCS_ERR_NO_ELEM.
 */
ucs_status_t uct_gaudi_mem_find(uct_gaudi_dev_t *dev, uint64_t addr,
                                size_t length,
                                uct_gaudi_mem_export_mark_t mark,
                                uct_gaudi_mem_t *mem);

/**
 * Find the chunk that starts at @a dva and is @a length long, and mark it
 * exported whole (UCT_GAUDI_MEM_EXPORT_CHUNK), whichever of its allocations
 * still live: @a mem describes the chunk itself. For an export that covers
 * a whole chunk, made after the allocation first registered may be gone.
 *
 * @return UCS_ERR_NO_ELEM if this process has no such chunk (any more).
 */
ucs_status_t uct_gaudi_mem_find_chunk(uct_gaudi_dev_t *dev, uint64_t dva,
                                     size_t length, uct_gaudi_mem_t *mem);


/**
 * Map host memory [addr, addr + length) for DMA (HL_MEM_USERPTR; pins the
 * pages). The returned device VA keeps the sub-page offset of @a addr.
 * The memory must be writable.
 */
ucs_status_t uct_gaudi_mem_map_host(uct_gaudi_dev_t *dev, const void *addr,
                                    size_t length, uint64_t *dva_p);


/* Undo uct_gaudi_mem_map_host(); @a dva exactly as returned */
ucs_status_t uct_gaudi_mem_unmap(uct_gaudi_dev_t *dev, uint64_t dva);


/**
 * Whether [addr, addr + length) lies in one live allocation of this
 * process.
 *
 * @return UCS_OK with the allocation's start and length, or
 *         UCS_ERR_NO_ELEM.
 */
ucs_status_t uct_gaudi_mem_lookup(uct_gaudi_dev_t *dev, uint64_t addr,
                                  size_t length, uint64_t *base_p,
                                  size_t *alloc_length_p);


/**
 * Whether [addr, addr + length) is device memory of @a dev: inside a live
 * allocation, or (Gaudi2+, where DRAM addresses are device VAs that cannot
 * be host addresses) inside the device's DRAM VA range.
 */
int uct_gaudi_mem_is_device_address(uct_gaudi_dev_t *dev, uint64_t addr,
                                    size_t length);

/**
 * Mark [addr, addr + length) as Gaudi memory in UCS's memtype cache, so
 * buffers the application allocated are detected too. In UCS 1.13.1 an
 * update before the cache exists is dropped, so this creates it first.
 */
void uct_gaudi_mem_memtype_set(uint64_t addr, size_t length,
                               ucs_sys_device_t sys_dev);


/* Undo uct_gaudi_mem_memtype_set() */
void uct_gaudi_mem_memtype_unset(uint64_t addr, size_t length);

END_C_DECLS

#endif
