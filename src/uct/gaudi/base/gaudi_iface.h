/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IFACE_H_
#define UCT_GAUDI_IFACE_H_

/*
 * The base class of the Gaudi transports (as src/uct/sm/scopy/base is for
 * cma and knem): the owned device, its DMA channel, the bounce buffer of
 * short operations, the operation pool, the pending and flush queues, the
 * wake-up event fd, progress, flush, query and estimate_perf. A transport
 * supplies its copy paths, its memory domain and the release of what its
 * operations hold (uct_gaudi_iface_ops_t).
 */

#include "gaudi_bounce.h"
#include "gaudi_event.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/base/uct_iface.h>
#include <uct/gaudi/drv/gaudi_device.h>
#include <uct/gaudi/drv/gaudi_dma.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/queue_types.h>
#include <ucs/stats/stats.h>
#include <ucs/type/class.h>


/* Knobs every Gaudi transport has, under its own prefix (UCX_GAUDI_COPY_,
 * UCX_GAUDI_IPC_); a transport's table overrides the defaults */
typedef struct uct_gaudi_iface_config {
    uct_iface_config_t super;
    double             bandwidth;    /* bytes/second, or auto
                                        (UCT_GAUDI_CONFIG_BW_IS_AUTO) */
    ucs_time_t         latency;      /* or UCS_TIME_AUTO */
    double             overhead;     /* seconds of CPU per operation */
    unsigned           max_inflight; /* DMA submissions in flight */
    unsigned           max_iov;      /* copies batched in one zcopy */
    unsigned           max_poll;     /* completions per progress call */
    size_t             bounce_size;  /* staging buffer of short operations */
} uct_gaudi_iface_config_t;


extern ucs_config_field_t uct_gaudi_iface_config_table[];


struct uct_gaudi_op;


/* A transport's synchronous copy of @a length bytes between @a local and
 * the remote address (its short operations) */
typedef ucs_status_t (*uct_gaudi_ep_rma_short_func_t)(uct_ep_h tl_ep,
                                                      void *local,
                                                      size_t length,
                                                      uint64_t remote_addr,
                                                      uct_rkey_t rkey,
                                                      int is_put);


/* A transport's zero-copy operation: resolve the addresses, then
 * uct_gaudi_op_post() (or complete in place) */
typedef ucs_status_t (*uct_gaudi_ep_zcopy_func_t)(uct_ep_h tl_ep,
                                                  const uct_iov_t *iov,
                                                  size_t iovcnt,
                                                  uint64_t remote_addr,
                                                  uct_rkey_t rkey,
                                                  uct_completion_t *comp,
                                                  int is_put);


struct uct_gaudi_iface;


/* Whether the peer of @a dev_addr / @a iface_addr (either may be NULL) is
 * reachable from @a iface; when not, says why with uct_gaudi_reach_fail()
 * into @a info */
typedef int (*uct_gaudi_iface_reachable_func_t)(
        struct uct_gaudi_iface *iface, const uct_device_addr_t *dev_addr,
        const uct_iface_addr_t *iface_addr, uct_gaudi_reach_info_t info);


/* Whether @a tl_ep, which reaches the peer of @a iface_addr, is the
 * endpoint of that peer */
typedef int (*uct_gaudi_ep_is_peer_func_t)(uct_ep_h tl_ep,
                                           const uct_iface_addr_t *iface_addr);


/* What a transport adds to the base class: its copy paths (the base class
 * wraps them into the UCT operations, with checks, statistics and traces),
 * the release of what its operations hold and its reachability (the base
 * class answers each UCX's form of the question with it) */
typedef struct uct_gaudi_iface_ops {
    uct_iface_internal_ops_t         super;
    uct_gaudi_ep_rma_short_func_t    ep_rma_short;
    uct_gaudi_ep_zcopy_func_t        ep_zcopy;
    /* Release what @a op holds beyond the base (host mappings, a peer's
     * mapping), before it returns to the pool; may be NULL */
    void                             (*op_release)(struct uct_gaudi_op *op);
    uct_gaudi_iface_reachable_func_t iface_reachable;
    /* NULL: an endpoint that reaches a peer is connected to it */
    uct_gaudi_ep_is_peer_func_t      ep_is_peer;
} uct_gaudi_iface_ops_t;


/* What a transport tells the base class at init */
typedef struct uct_gaudi_iface_params {
    const char *tl_name;      /* "gaudi_copy": messages, stats */
    const char *dev_name;     /* the one device it serves */
    const char *knob_prefix;  /* "UCX_GAUDI_COPY_": errors name knobs */
    double     auto_latency;  /* seconds, for LAT=auto if not measured */
    /* the remote memory is a peer device's, reached on the PCI queues
     * only (gaudi_ipc), never by the D2D engine, whatever the memory types
     * (gaudi_copy's Gaudi to Gaudi copies use it) */
    int        peer_queues;
    size_t     op_size;       /* size of its operation, >= uct_gaudi_op_t */
    /* a zero-copy operation the DMA queue has no room for waits in the
     * iface's backlog (UCS_INPROGRESS) instead of failing with
     * UCS_ERR_NO_RESOURCE: for a transport UCP uses to stage memory-type
     * copies where it has no pending path (UCT_GAUDI_COPY_QUEUES_WHEN_FULL) */
    int        queue_when_full;
} uct_gaudi_iface_params_t;


enum {
    UCT_GAUDI_IFACE_STAT_BYTES_H2D,
    UCT_GAUDI_IFACE_STAT_BYTES_D2H,
    UCT_GAUDI_IFACE_STAT_BYTES_D2D,
    UCT_GAUDI_IFACE_STAT_DMA_ERRORS,
    UCT_GAUDI_IFACE_STAT_NO_RESOURCE,
    UCT_GAUDI_IFACE_STAT_REFUSED,
    UCT_GAUDI_IFACE_STAT_WAKEUPS,
    UCT_GAUDI_IFACE_STAT_LAST
};


typedef struct uct_gaudi_iface {
    uct_base_iface_t        super;
    const char              *tl_name;
    const char              *dev_name;
    uct_gaudi_dev_t         *dev;      /* the MD's owned device */
    uct_gaudi_dma_chan_t    chan;      /* this iface's submissions */
    uct_gaudi_bounce_t      bounce;    /* stages short operations */
    ucs_mpool_t             op_mp;     /* the transport's operations */
    ucs_queue_head_t        pending;   /* waiting for a free command buffer */
    ucs_queue_head_t        flushq;    /* uct_gaudi_dma_flush_t */
    ucs_queue_head_t        backlog;   /* uct_gaudi_backlog_elem_t: posted
                                          in order as command buffers free
                                          (queue_when_full) */
    int                     queue_when_full;
    size_t                  op_xfers_offset; /* of an op's saved copies */
    uct_gaudi_event_t       event;     /* wake-up of a sleeping worker */
    ucs_time_t              next_retry; /* of deferred memory releases */
    UCS_STATS_NODE_DECLARE(stats)
    int                     peer_queues;
    struct {
        double              bandwidth; /* bytes/second: the PCI
                                          queues' */
        double              d2d_bw;    /* the D2D engine's (gaudi_copy
                                          between two Gaudi buffers) */
        double              latency;   /* seconds */
        double              overhead;  /* seconds */
        unsigned            max_iov;
        unsigned            max_poll;
    } config;
} uct_gaudi_iface_t;


/* An entry of an iface's backlog: a zero-copy operation waiting for room,
 * or a flush issued behind such operations */
typedef struct uct_gaudi_backlog_elem {
    ucs_queue_elem_t  queue;
    uct_completion_t  *flush_comp; /* a flush's; NULL: an operation */
} uct_gaudi_backlog_elem_t;


/* A zero-copy operation in flight; a transport's operation starts with it */
typedef struct uct_gaudi_op {
    uct_completion_t         comp;       /* of its DMA submission */
    uct_completion_t         *user_comp; /* may be NULL */
    uct_gaudi_iface_t        *iface;
    /* in the backlog: its copies, saved after the transport's part */
    uct_gaudi_backlog_elem_t backlog;
    uct_gaudi_dma_xfer_t     *xfers;
    unsigned                 count;
    uct_gaudi_dma_dir_t      dir;
} uct_gaudi_op_t;


/* A pending request's private data */
typedef struct {
    uct_pending_req_priv_queue_t super;
    uct_ep_h                     ep;
} uct_gaudi_pending_priv_t;


UCS_CLASS_DECLARE(uct_gaudi_iface_t, uct_iface_ops_t*, uct_gaudi_iface_ops_t*,
                  uct_md_h, uct_gaudi_dev_t*, uct_worker_h,
                  const uct_iface_params_t*, const uct_iface_config_t*,
                  const uct_gaudi_iface_params_t*);


/* Fill what the base class knows: RMA caps, flags, performance. The
 * transport adds its address lengths and its own flags. */
void uct_gaudi_iface_query(uct_gaudi_iface_t *iface,
                           uct_iface_attr_t *iface_attr);


unsigned uct_gaudi_iface_progress(uct_iface_h tl_iface);


ucs_status_t uct_gaudi_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                   uct_completion_t *comp);


/* Flush what the iface submitted and holds in its backlog (the flush of its
 * endpoints too: they share the iface's DMA channel) */
ucs_status_t uct_gaudi_iface_flush_all(uct_gaudi_iface_t *iface,
                                       uct_completion_t *comp);


/* Return @a op (and what it holds) to the pool without completing it */
void uct_gaudi_op_release(uct_gaudi_op_t *op);


ucs_status_t uct_gaudi_iface_estimate_perf(uct_iface_h tl_iface,
                                           uct_perf_attr_t *perf_attr);


ucs_status_t uct_gaudi_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p);


ucs_status_t uct_gaudi_iface_event_arm(uct_iface_h tl_iface, unsigned events);


/* Reachability as UCX 1.13.1 asks it, through the transport's
 * iface_reachable (the newer forms: gaudi_ucx_compat.h) */
int uct_gaudi_iface_is_reachable(const uct_iface_h tl_iface,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_iface_addr_t *iface_addr);


#endif
