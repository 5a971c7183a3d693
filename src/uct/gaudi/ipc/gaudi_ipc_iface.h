/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_IFACE_H_
#define UCT_GAUDI_IPC_IFACE_H_

#include "gaudi_ipc_md.h"

#include <uct/base/uct_iface.h>
#include <uct/gaudi/base/gaudi_bounce.h>
#include <uct/gaudi/drv/gaudi_dma.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/queue_types.h>
#include <ucs/time/time_def.h>


#define UCT_GAUDI_IPC_DEV_NAME "gaudi_ipc"


/* Device address: the system and, outside the default one, the network
 * namespace (the fd server's abstract socket lives in one); interface
 * address: the process */
typedef uct_iface_local_addr_ns_t uct_gaudi_ipc_device_addr_t;
typedef uint64_t uct_gaudi_ipc_iface_addr_t;


typedef struct uct_gaudi_ipc_iface_config {
    uct_iface_config_t super;
    double             bandwidth;     /* bytes/second, or auto */
    ucs_time_t         latency;       /* or UCS_TIME_AUTO */
    double             overhead;      /* seconds */
    unsigned           max_inflight;
    unsigned           max_iov;
    size_t             max_bcopy;     /* bounce buffer size */
} uct_gaudi_ipc_iface_config_t;


typedef struct uct_gaudi_ipc_iface {
    uct_base_iface_t   super;
    uct_gaudi_ipc_md_t *md;
    uct_gaudi_dev_t    *dev;
    uct_gaudi_dma_chan_t chan;        /* D2D submissions */
    ucs_mpool_t        op_mp;         /* uct_gaudi_ipc_op_t */
    ucs_queue_head_t   pending;       /* waiting for a free CB */
    ucs_queue_head_t   flushq;
    uct_gaudi_bounce_t bounce;        /* stages host data of short/bcopy */
    struct {
        double         bandwidth;
        double         latency;
        double         overhead;
        unsigned       max_iov;
    } config;
} uct_gaudi_ipc_iface_t;


/* One zero-copy operation in flight: holds the remote mapping */
typedef struct uct_gaudi_ipc_op {
    uct_completion_t      comp;       /* of the DMA submission */
    uct_completion_t      *user_comp;
    uct_gaudi_ipc_iface_t *iface;
    uct_gaudi_ipc_map_t   *map;
} uct_gaudi_ipc_op_t;


ucs_status_t uct_gaudi_ipc_iface_flush_comp(uct_gaudi_ipc_iface_t *iface,
                                            uct_completion_t *comp);

#endif
