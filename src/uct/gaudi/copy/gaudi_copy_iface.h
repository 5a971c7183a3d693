/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_COPY_IFACE_H_
#define UCT_GAUDI_COPY_IFACE_H_

#include <uct/base/uct_iface.h>
#include <uct/gaudi/drv/gaudi_own.h>
#include <uct/gaudi/base/gaudi_bounce.h>
#include <uct/gaudi/drv/gaudi_dma.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/queue_types.h>
#include <ucs/stats/stats.h>


typedef uint64_t uct_gaudi_copy_iface_addr_t;


typedef struct uct_gaudi_copy_iface_config {
    uct_iface_config_t     super;
    double                 bandwidth;    /* UCS_CONFIG_BW_AUTO: by ASIC */
    ucs_time_t             latency;      /* UCS_TIME_AUTO: by ASIC */
    size_t                 bounce_size;  /* staging buffer for short ops */
    unsigned               max_inflight; /* DMA submissions in flight */
    unsigned               max_iov;      /* copies batched in one zcopy */
} uct_gaudi_copy_iface_config_t;


enum {
    UCT_GAUDI_COPY_IFACE_STAT_BYTES_H2D,
    UCT_GAUDI_COPY_IFACE_STAT_BYTES_D2H,
    UCT_GAUDI_COPY_IFACE_STAT_BYTES_D2D,
    UCT_GAUDI_COPY_IFACE_STAT_DMA_ERRORS,
    UCT_GAUDI_COPY_IFACE_STAT_NO_RESOURCE,
    UCT_GAUDI_COPY_IFACE_STAT_LAST
};


typedef struct uct_gaudi_copy_iface {
    uct_base_iface_t             super;
    uct_gaudi_copy_iface_addr_t  id;         /* reachable only to itself */
    uct_gaudi_dev_t              *dev;       /* the MD's owned device */
    uct_gaudi_dma_chan_t         chan;       /* zcopy submissions */
    ucs_mpool_t                  op_mp;      /* uct_gaudi_copy_op_t */
    ucs_queue_head_t             pending;    /* waiting for a free CB */
    ucs_queue_head_t             flushq;     /* uct_gaudi_copy_flush_t */
    UCS_STATS_NODE_DECLARE(stats)
    uct_gaudi_bounce_t           bounce;     /* stages short operations */
    struct {
        double                   bandwidth;  /* bytes/second */
        double                   latency;    /* seconds */
        unsigned                 max_iov;
    } config;
} uct_gaudi_copy_iface_t;


unsigned uct_gaudi_copy_iface_progress(uct_iface_h tl_iface);


/**
 * Flush what this iface submitted so far: UCS_OK if nothing is in flight
 * or pending; else UCS_INPROGRESS, and @a comp (if not NULL) is invoked
 * from progress once every submission made before the call has ended.
 */
ucs_status_t uct_gaudi_copy_iface_flush_comp(uct_gaudi_copy_iface_t *iface,
                                             uct_completion_t *comp);

#endif
