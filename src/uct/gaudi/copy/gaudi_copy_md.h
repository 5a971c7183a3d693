/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_COPY_MD_H_
#define UCT_GAUDI_COPY_MD_H_

#include <uct/base/uct_md.h>
#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/gaudi/drv/gaudi_own.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <ucs/memory/rcache.h>
#include <ucs/stats/stats.h>


extern uct_component_t uct_gaudi_copy_component;


typedef struct uct_gaudi_copy_md_config {
    uct_md_config_t        super;
    ucs_linear_func_t      reg_cost;     /* host registration cost estimate */
    int                    enable_rcache;/* UCS_YES/NO/TRY */
    uct_gaudi_rcache_config_t rcache;    /* registration cache knobs */
    int                    dmabuf;       /* provide DMA-BUFs of Gaudi
                                            memory (UCT_GAUDI_MD_DMABUF) */
} uct_gaudi_copy_md_config_t;


/* gaudi_cpy memory domain: one per open, all on the process's owned device */
typedef struct uct_gaudi_copy_md {
    uct_md_t               super;
    uct_gaudi_dev_t        *dev;         /* owned device (refcounted) */
    ucs_linear_func_t      reg_cost;     /* reported registration cost */
    ucs_rcache_t           *rcache;      /* host registrations, or NULL */
    int                    dmabuf;       /* a DMA-BUF provider of Gaudi
                                            memory */
    UCS_STATS_NODE_DECLARE(stats)
} uct_gaudi_copy_md_t;


enum {
    UCT_GAUDI_COPY_MD_STAT_HOST_REG,     /* host registrations asked for */
    UCT_GAUDI_COPY_MD_STAT_HOST_MAP,     /* of which mapped (rcache miss) */
    UCT_GAUDI_COPY_MD_STAT_LAST
};


/* Memory handle: a registered host range (mapped into the device MMU) or a
 * Gaudi range (registered in place, or allocated by mem_alloc) */
typedef struct uct_gaudi_copy_memh {
    ucs_memory_type_t      mem_type;
    void                   *address;     /* start of the registered range */
    size_t                 length;
    uint64_t               dva;          /* device VA of @a address */
    int                    allocated;    /* @a alloc is valid, free it */
    uct_gaudi_mem_t        alloc;        /* device allocation, if allocated */
} uct_gaudi_copy_memh_t;


/* A host registration in the rcache */
typedef struct uct_gaudi_copy_rcache_region {
    ucs_rcache_region_t    super;
    uct_gaudi_copy_memh_t  memh;
} uct_gaudi_copy_rcache_region_t;


/* Is [addr, addr+length) Gaudi memory of the MD's device? */
int uct_gaudi_copy_md_is_device_mem(uct_gaudi_copy_md_t *md, const void *addr,
                                    size_t length);


/**
 * Map host memory [address, address+length) for the DMA engine, through the
 * rcache when there is one, and return its handle (for
 * uct_gaudi_copy_md_host_put()).
 */
ucs_status_t uct_gaudi_copy_md_host_get(uct_gaudi_copy_md_t *md,
                                        void *address, size_t length,
                                        unsigned flags,
                                        uct_gaudi_copy_memh_t **memh_p);


/* Release a handle of uct_gaudi_copy_md_host_get(); without the rcache the
 * mapping goes at once and its unmap status is returned */
ucs_status_t uct_gaudi_copy_md_host_put(uct_gaudi_copy_md_t *md,
                                uct_gaudi_copy_memh_t *memh);

#endif
