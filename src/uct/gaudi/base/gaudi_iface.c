/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_iface.h"
#include "gaudi_knob.h"
#include "gaudi_probe.h"

#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <ucs/time/time.h>
#include <limits.h>
#include <math.h>
#include <string.h>


/* How often progress retries releases the driver refused (memory a peer
 * still imports), in seconds */
#define UCT_GAUDI_IFACE_RETRY_DEFERRED 0.01

/* Copies one operation may batch: its stack and its host mappings grow
 * with it */
#define UCT_GAUDI_IFACE_MAX_IOV_LIMIT  256

/* BW=auto where the DMA was not measured: the PCIe Gen4 x16 link of
 * Gaudi1/Gaudi2 that the DMA engine's traffic crosses */
#define UCT_GAUDI_IFACE_AUTO_BW        (24000.0 * UCS_MBYTE)

/* DMA submissions in flight: one pre-mapped command buffer each */
#define UCT_GAUDI_IFACE_MAX_INFLIGHT   1024


ucs_config_field_t uct_gaudi_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gaudi_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"BW", "auto",
     "Effective DMA bandwidth of the transport. \"auto\" takes what the\n"
     "device's DMA was measured to do on its PCI queues when the first\n"
     "interface opened (UCX_GAUDI_PERF_PROBE); unmeasured, 24GBs, the\n"
     "PCIe Gen4 x16 link of Gaudi1/Gaudi2. Device to device (never\n"
     "measured): 24GBs or the measured figure, the larger.",
     ucs_offsetof(uct_gaudi_iface_config_t, bandwidth),
     UCS_CONFIG_TYPE_BW},

    {"LAT", "auto",
     "Latency of one DMA command submission until its completion is seen.\n"
     "\"auto\" takes the latency measured when the first interface opened\n"
     "(UCX_GAUDI_PERF_PROBE); unmeasured, the transport's default\n"
     "(gaudi_copy 8us, gaudi_ipc 10us).",
     ucs_offsetof(uct_gaudi_iface_config_t, latency),
     UCS_CONFIG_TYPE_TIME_UNITS},

    {"OVERHEAD", "0",
     "CPU time spent to post one operation (writing the DMA packets and\n"
     "submitting them).",
     ucs_offsetof(uct_gaudi_iface_config_t, overhead),
     UCS_CONFIG_TYPE_TIME},

    {"MAX_INFLIGHT", "64",
     "Maximal number of DMA command submissions in flight per interface; one\n"
     "pre-mapped command buffer each. A zero-copy operation beyond it returns\n"
     "UCS_ERR_NO_RESOURCE and waits in the pending queue, or, where UCP\n"
     "stages memory-type copies through the transport without a pending\n"
     "queue (UCX newer than 1.13), waits in the interface's own queue.",
     ucs_offsetof(uct_gaudi_iface_config_t, max_inflight),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_IOV", "16",
     "Maximal number of iov entries of one zero-copy operation; they are\n"
     "batched into one DMA command submission.",
     ucs_offsetof(uct_gaudi_iface_config_t, max_iov),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_POLL", "16",
     "Maximal number of completed DMA submissions one call of progress\n"
     "reaps, so that a burst of completions does not starve the worker's\n"
     "other interfaces.",
     ucs_offsetof(uct_gaudi_iface_config_t, max_poll),
     UCS_CONFIG_TYPE_UINT},

    {"BOUNCE_SIZE", "1m",
     "Size of the pre-registered host buffer through which short (and, for\n"
     "gaudi_ipc, bcopy) operations and unregistered host memory are staged;\n"
     "also gaudi_ipc's largest bcopy operation.",
     ucs_offsetof(uct_gaudi_iface_config_t, bounce_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {NULL}
};


#ifdef ENABLE_STATS
static ucs_stats_class_t uct_gaudi_iface_stats_class = {
    .name          = "gaudi_iface",
    .num_counters  = UCT_GAUDI_IFACE_STAT_LAST,
    .class_id      = UCS_STATS_CLASS_ID_INVALID,
    .counter_names = {
        [UCT_GAUDI_IFACE_STAT_BYTES_H2D]   = "bytes_h2d",
        [UCT_GAUDI_IFACE_STAT_BYTES_D2H]   = "bytes_d2h",
        [UCT_GAUDI_IFACE_STAT_BYTES_D2D]   = "bytes_d2d",
        [UCT_GAUDI_IFACE_STAT_DMA_ERRORS]  = "dma_errors",
        [UCT_GAUDI_IFACE_STAT_NO_RESOURCE] = "no_resource",
        [UCT_GAUDI_IFACE_STAT_REFUSED]     = "refused",
        [UCT_GAUDI_IFACE_STAT_WAKEUPS]     = "wakeups"
    }
};
#endif


static void uct_gaudi_iface_set_rma_caps(uct_gaudi_iface_t *iface,
                                         uct_iface_attr_t *attr)
{
    attr->cap.put.max_short       = UINT_MAX;
    attr->cap.put.max_bcopy       = 0;
    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.max_zcopy       = SIZE_MAX;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu       = 1;
    attr->cap.put.max_iov         = iface->config.max_iov;
    attr->cap.get.max_short       = UINT_MAX;
    attr->cap.get.max_bcopy       = 0;
    attr->cap.get.min_zcopy       = 0;
    attr->cap.get.max_zcopy       = SIZE_MAX;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;
    attr->cap.get.max_iov         = iface->config.max_iov;
}

void uct_gaudi_iface_query(uct_gaudi_iface_t *iface,
                           uct_iface_attr_t *iface_attr)
{
    uct_base_iface_query(&iface->super, iface_attr);

    iface_attr->ep_addr_len         = 0;
    iface_attr->cap.flags           = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                                      UCT_IFACE_FLAG_PUT_SHORT |
                                      UCT_IFACE_FLAG_GET_SHORT |
                                      UCT_IFACE_FLAG_PUT_ZCOPY |
                                      UCT_IFACE_FLAG_GET_ZCOPY |
                                      UCT_IFACE_FLAG_PENDING;
    /* a completion wakes a worker that sleeps (gaudi_event.h). Receive
     * events never come (nothing is received), but UCP 1.13 takes a
     * transport for its rendezvous and active-message lanes of a worker
     * that may sleep only if it has both kinds */
    iface_attr->cap.event_flags     = UCT_IFACE_FLAG_EVENT_SEND_COMP |
                                      UCT_IFACE_FLAG_EVENT_RECV |
                                      UCT_IFACE_FLAG_EVENT_FD;
    uct_gaudi_iface_set_rma_caps(iface, iface_attr);
    iface_attr->cap.am.opt_zcopy_align = 1;
    iface_attr->cap.am.align_mtu    = 1;
    iface_attr->cap.am.max_iov      = 1;
    iface_attr->latency             = ucs_linear_func_make(
                                              iface->config.latency, 0);
    iface_attr->bandwidth.dedicated = 0;
    iface_attr->bandwidth.shared    = iface->config.bandwidth;
    iface_attr->overhead            = iface->config.overhead;
    iface_attr->priority            = 0;
}

static const uct_gaudi_iface_ops_t *
uct_gaudi_iface_ops_of(const uct_gaudi_iface_t *iface)
{
    return ucs_derived_of(iface->super.internal_ops, uct_gaudi_iface_ops_t);
}

void uct_gaudi_op_release(uct_gaudi_op_t *op)
{
    const uct_gaudi_iface_ops_t *ops = uct_gaudi_iface_ops_of(op->iface);

    if (ops->op_release != NULL) {
        ops->op_release(op);
    }

    ucs_mpool_put_inline(op);
}

/* @a elem left the backlog without a DMA submission: complete it */
static void uct_gaudi_backlog_complete(uct_gaudi_backlog_elem_t *elem,
                                       ucs_status_t status)
{
    uct_completion_t *comp = elem->flush_comp;
    uct_gaudi_op_t *op;

    if (comp == NULL) {
        op   = ucs_container_of(elem, uct_gaudi_op_t, backlog);
        comp = op->user_comp;
        uct_gaudi_op_release(op);
    } else {
        ucs_free(elem);
    }

    if (comp != NULL) {
        uct_invoke_completion(comp, status);
    }
}

/* Post the backlog's operations the DMA channel has room for, in order.
 * The backlog, the op pool and the op's release are the iface's own: its
 * progress and cleanup use them, the endpoints (gaudi_ep.c) only add to
 * them */
static void uct_gaudi_iface_backlog_progress(uct_gaudi_iface_t *iface)
{
    uct_gaudi_backlog_elem_t *elem;
    uct_completion_t *flush_comp;
    uct_gaudi_op_t *op;
    ucs_status_t status;

    while (!ucs_queue_is_empty(&iface->backlog)) {
        elem = ucs_queue_head_elem_non_empty(&iface->backlog,
                                             uct_gaudi_backlog_elem_t, queue);
        if (elem->flush_comp != NULL) {
            /* every operation before it is submitted: a flush of what the
             * channel has in flight now covers them */
            ucs_queue_pull_non_empty(&iface->backlog);
            flush_comp = elem->flush_comp;
            ucs_free(elem);
            status = uct_gaudi_dma_chan_flush(&iface->chan, &iface->flushq, 1,
                                              flush_comp);
            if (status != UCS_INPROGRESS) {
                uct_invoke_completion(flush_comp, status);
            }
            continue;
        }

        op     = ucs_container_of(elem, uct_gaudi_op_t, backlog);
        status = uct_gaudi_dma_chan_post_dir(&iface->chan, op->xfers,
                                             op->count, op->dir, &op->comp);
        if (status == UCS_ERR_NO_RESOURCE) {
            return; /* still full: its turn comes with the next room */
        }

        ucs_queue_pull_non_empty(&iface->backlog);
        if (status != UCS_INPROGRESS) {
            /* nothing to copy, or the device failed */
            uct_gaudi_backlog_complete(elem, status);
        }
    }
}

/* Complete what waits in the backlog with UCS_ERR_CANCELED (the iface
 * closes) */
static void uct_gaudi_iface_backlog_cancel(uct_gaudi_iface_t *iface)
{
    uct_gaudi_backlog_elem_t *elem;

    while (!ucs_queue_is_empty(&iface->backlog)) {
        elem = ucs_queue_pull_elem_non_empty(&iface->backlog,
                                             uct_gaudi_backlog_elem_t, queue);
        uct_gaudi_backlog_complete(elem, UCS_ERR_CANCELED);
    }
}

ucs_status_t uct_gaudi_iface_flush_all(uct_gaudi_iface_t *iface,
                                       uct_completion_t *comp)
{
    uct_gaudi_backlog_elem_t *flush;

    if (ucs_queue_is_empty(&iface->backlog)) {
        return uct_gaudi_dma_chan_flush(&iface->chan, &iface->flushq,
                                        ucs_queue_is_empty(&iface->pending),
                                        comp);
    }

    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    /* behind the operations not submitted yet: it becomes a flush of the
     * channel once they are (uct_gaudi_iface_backlog_progress) */
    flush = ucs_malloc(sizeof(*flush), "gaudi_backlog_flush");
    if (flush == NULL) {
        ucs_error("%s: failed to allocate a flush request", iface->tl_name);
        return UCS_ERR_NO_MEMORY;
    }

    flush->flush_comp = comp;
    ucs_queue_push(&iface->backlog, &flush->queue);
    return UCS_INPROGRESS;
}

ucs_status_t uct_gaudi_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                   uct_completion_t *comp)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);
    ucs_status_t status;

    status = uct_gaudi_iface_flush_all(iface, comp);
    if (status == UCS_OK) {
        UCT_TL_IFACE_STAT_FLUSH(&iface->super);
    } else if (status == UCS_INPROGRESS) {
        UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
    }

    return status;
}

/* The statistics mirror the DMA channel's own counters (UCT_GAUDI_DMA_*
 * and the STAT_BYTES_* entries are in the same order) */
static void uct_gaudi_iface_stats_update(uct_gaudi_iface_t *iface)
{
#ifdef ENABLE_STATS
    const uct_gaudi_dma_counters_t *counters = &iface->chan.counters;
    unsigned dir;

    UCS_STATIC_ASSERT(UCT_GAUDI_IFACE_STAT_BYTES_D2H ==
                      UCT_GAUDI_IFACE_STAT_BYTES_H2D + UCT_GAUDI_DMA_D2H);
    UCS_STATIC_ASSERT(UCT_GAUDI_IFACE_STAT_BYTES_D2D ==
                      UCT_GAUDI_IFACE_STAT_BYTES_H2D + UCT_GAUDI_DMA_D2D);
    for (dir = 0; dir < UCT_GAUDI_DMA_DIR_LAST; ++dir) {
        UCS_STATS_SET_COUNTER(iface->stats,
                              UCT_GAUDI_IFACE_STAT_BYTES_H2D + dir,
                              counters->bytes[dir]);
    }
    UCS_STATS_SET_COUNTER(iface->stats, UCT_GAUDI_IFACE_STAT_DMA_ERRORS,
                          counters->errors);
    UCS_STATS_SET_COUNTER(iface->stats, UCT_GAUDI_IFACE_STAT_NO_RESOURCE,
                          counters->no_resource);
    UCS_STATS_SET_COUNTER(iface->stats, UCT_GAUDI_IFACE_STAT_REFUSED,
                          counters->refused);
    UCS_STATS_SET_COUNTER(iface->stats, UCT_GAUDI_IFACE_STAT_WAKEUPS,
                          iface->event.wakeups);
#endif
}

static void uct_gaudi_iface_retry_deferred(uct_gaudi_iface_t *iface)
{
    ucs_time_t now = ucs_get_time();

    if (now >= iface->next_retry) {
        iface->next_retry = now +
                            ucs_time_from_sec(UCT_GAUDI_IFACE_RETRY_DEFERRED);
        uct_gaudi_mem_retry_deferred(iface->dev);
    }
}

unsigned uct_gaudi_iface_progress(uct_iface_h tl_iface)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);
    uct_gaudi_pending_priv_t *priv;
    unsigned count;

    count = uct_gaudi_dma_chan_progress(&iface->chan, iface->config.max_poll);
    uct_gaudi_iface_backlog_progress(iface);
    uct_pending_queue_dispatch(priv, &iface->pending,
                               uct_gaudi_dma_chan_has_room(&iface->chan));
    uct_gaudi_dma_chan_flush_progress(&iface->chan, &iface->flushq);
    if (count > 0) {
        uct_gaudi_iface_stats_update(iface);
    }

    /* memory freed while a peer imported it, released since: asked of the
     * driver (a FREE per chunk) at most every UCT_GAUDI_IFACE_RETRY_DEFERRED
     * seconds, not at every progress */
    if (ucs_unlikely(iface->dev->mem->num_deferred > 0)) {
        uct_gaudi_iface_retry_deferred(iface);
    }

    return count;
}

/* Both ends named, and both host memory: no device in the way */
static int uct_gaudi_iface_perf_is_host_copy(const uct_perf_attr_t *perf_attr)
{
    return (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_LOCAL_MEMORY_TYPE) &&
           (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_REMOTE_MEMORY_TYPE) &&
           (perf_attr->local_memory_type == UCS_MEMORY_TYPE_HOST) &&
           (perf_attr->remote_memory_type == UCS_MEMORY_TYPE_HOST);
}

/* The bandwidth of the engine an operation goes through: the D2D engine's
 * for gaudi_copy between two Gaudi buffers, where UCP says so; else the PCI
 * queues' (one figure, see gaudi_probe.h) */
static double uct_gaudi_iface_perf_bw(const uct_gaudi_iface_t *iface,
                                      const uct_perf_attr_t *perf_attr)
{
    uint64_t both = UCT_PERF_ATTR_FIELD_LOCAL_MEMORY_TYPE |
                    UCT_PERF_ATTR_FIELD_REMOTE_MEMORY_TYPE;

    if (!iface->peer_queues && ((perf_attr->field_mask & both) == both) &&
        (perf_attr->local_memory_type == UCS_MEMORY_TYPE_GAUDI) &&
        (perf_attr->remote_memory_type == UCS_MEMORY_TYPE_GAUDI)) {
        return iface->config.d2d_bw;
    }

    return iface->config.bandwidth;
}

ucs_status_t uct_gaudi_iface_estimate_perf(uct_iface_h tl_iface,
                                           uct_perf_attr_t *perf_attr)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);
    uct_ppn_bandwidth_t bandwidth;

    /* where UCP asks per memory-type pair (gaudi_ucx_compat.h), host to
     * host is not ours to move */
    if (UCT_GAUDI_PERF_CHECKS_MEM_TYPES &&
        uct_gaudi_iface_perf_is_host_copy(perf_attr)) {
        return UCS_ERR_UNSUPPORTED;
    }

    bandwidth.dedicated = 0;
    bandwidth.shared    = uct_gaudi_iface_perf_bw(iface, perf_attr);
    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_BANDWIDTH) {
        perf_attr->bandwidth = bandwidth;
    }

    /* one DMA engine end to end: the path's bandwidth is the lane's */
    uct_gaudi_perf_attr_set_extra(perf_attr, bandwidth);

    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_SEND_PRE_OVERHEAD) {
        perf_attr->send_pre_overhead = iface->config.overhead;
    }

    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_SEND_POST_OVERHEAD) {
        perf_attr->send_post_overhead = 0;
    }

    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_RECV_OVERHEAD) {
        perf_attr->recv_overhead = 0;
    }

    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_LATENCY) {
        perf_attr->latency = ucs_linear_func_make(iface->config.latency, 0);
    }

    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_MAX_INFLIGHT_EPS) {
        perf_attr->max_inflight_eps = SIZE_MAX;
    }

    return UCS_OK;
}

ucs_status_t uct_gaudi_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);

    return uct_gaudi_event_fd(&iface->event, fd_p);
}

ucs_status_t uct_gaudi_iface_event_arm(uct_iface_h tl_iface, unsigned events)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);

    /* the transports receive nothing: only send completions are events */
    if (!(events & UCT_EVENT_SEND_COMP)) {
        return UCS_OK;
    }

    /* a flush or a pending request progress can complete now */
    if (((!ucs_queue_is_empty(&iface->pending) ||
          !ucs_queue_is_empty(&iface->backlog)) &&
         uct_gaudi_dma_chan_has_room(&iface->chan)) ||
        (!ucs_queue_is_empty(&iface->flushq) &&
         uct_gaudi_dma_chan_is_idle(&iface->chan))) {
        return UCS_ERR_BUSY;
    }

    return uct_gaudi_event_arm(&iface->event);
}

int uct_gaudi_iface_is_reachable(const uct_iface_h tl_iface,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_iface_addr_t *iface_addr)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);

    return uct_gaudi_iface_ops_of(iface)->iface_reachable(iface, dev_addr,
                                                          iface_addr, NULL);
}

/* A bandwidth knob is "auto" or a positive finite bandwidth: UCS's parser
 * also takes inf, nan and negative numbers, which UCP's lane selection
 * cannot use */
static ucs_status_t
uct_gaudi_iface_check_device(const uct_iface_params_t *params,
                             const char *tl_name, const char *dev_name)
{
    /* a caller that names a device must name the one this iface serves */
    if ((params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) &&
        (params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE) &&
        (params->mode.device.dev_name != NULL) &&
        strcmp(params->mode.device.dev_name, dev_name)) {
        ucs_error("%s: no device %s (its device is %s)", tl_name,
                  params->mode.device.dev_name, dev_name);
        return UCS_ERR_NO_DEVICE;
    }

    return UCS_OK;
}

/*
 * Values the parser accepts by type that cannot be right (a negative or
 * "inf" size, -1 wrapped to 4294967295, a latency of years): refused at open
 * with the knob, its value and the range, rather than a transport that
 * fails later with no message or models nonsense
 */
static ucs_status_t
uct_gaudi_iface_config_check(const uct_gaudi_iface_config_t *config,
                             const char *prefix)
{
    ucs_status_t status = UCS_OK;

    if (!UCT_GAUDI_CONFIG_BW_IS_AUTO(config->bandwidth)) {
        status = uct_gaudi_knob_check_dbl(prefix, "BW", config->bandwidth,
                                            "B/s", 1.0, 1e13);
    }
    if ((status == UCS_OK) && (config->latency != UCS_TIME_AUTO)) {
        status = uct_gaudi_knob_check_time(prefix, "LAT", config->latency,
                                             0, ucs_time_from_sec(1.0));
    }
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_dbl(prefix, "OVERHEAD",
                                            config->overhead * 1e6, "us", 0,
                                            1e6);
    }
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_uint(prefix, "MAX_INFLIGHT",
                                             config->max_inflight, 1,
                                             UCT_GAUDI_IFACE_MAX_INFLIGHT);
    }
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_uint(prefix, "MAX_IOV",
                                             config->max_iov, 1,
                                             UCT_GAUDI_IFACE_MAX_IOV_LIMIT);
    }
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_uint(prefix, "MAX_POLL",
                                             config->max_poll, 1, 65536);
    }
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_size(prefix, "BOUNCE_SIZE",
                                             config->bounce_size,
                                             UCS_KBYTE * 4, UCS_GBYTE);
    }

    return status;
}

static void uct_gaudi_iface_set_config(uct_gaudi_iface_t *iface,
                                       const uct_gaudi_iface_config_t *config)
{
    iface->config.overhead  = config->overhead;
    iface->config.max_iov   = config->max_iov;
    iface->config.max_poll  = config->max_poll;
}

/* LAT and BW: "auto" takes what the device's DMA was measured to do
 * (gaudi_probe.h), where measured; else the constants (and what the user
 * set always wins). Needs the iface's channel and bounce buffer, both idle.
 * Fails only when a copy of the measurement failed the device: an
 * interface on it would fail every transfer */
static ucs_status_t
uct_gaudi_iface_set_perf(uct_gaudi_iface_t *iface,
                         const uct_gaudi_iface_config_t *config,
                         const uct_gaudi_iface_params_t *params)
{
    int bw_auto             = UCT_GAUDI_CONFIG_BW_IS_AUTO(config->bandwidth);
    int lat_auto            = (config->latency == UCS_TIME_AUTO);
    uct_gaudi_probe_t probe = {0};
    ucs_status_t status;

    iface->peer_queues = params->peer_queues;
    if ((bw_auto || lat_auto) && uct_gaudi_lib_config()->perf_probe) {
        status = uct_gaudi_probe_get(&iface->chan, &iface->bounce, &probe);
        if (status != UCS_OK) {
            status = uct_gaudi_dma_chan_check(&iface->chan);
            if (status != UCS_OK) {
                return status;
            }
        }
    }

    iface->config.latency = !lat_auto ? ucs_time_to_sec(config->latency) :
                            (probe.latency > 0) ? probe.latency :
                            params->auto_latency;
    if (!bw_auto) {
        iface->config.bandwidth = config->bandwidth;
        iface->config.d2d_bw    = config->bandwidth;
    } else {
        iface->config.bandwidth = (probe.bandwidth > 0) ? probe.bandwidth :
                                  UCT_GAUDI_IFACE_AUTO_BW;
        /* the D2D engine is not measured (gaudi_probe.h); it reads and
         * writes the HBM, and UCP must not be told that on-device copies
         * are slower than ones across the link */
        iface->config.d2d_bw    = ucs_max(UCT_GAUDI_IFACE_AUTO_BW,
                                          iface->config.bandwidth);
    }

    return UCS_OK;
}

static ucs_mpool_ops_t uct_gaudi_iface_op_mpool_ops = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free,
    .obj_init      = NULL,
    .obj_cleanup   = NULL,
    .obj_str       = NULL
};

/* The operations' descriptors: an op that may wait in the backlog keeps
 * its copies after the transport's part of it */
static ucs_status_t
uct_gaudi_iface_op_mpool_init(uct_gaudi_iface_t *iface,
                              const uct_gaudi_iface_params_t *params)
{
    iface->queue_when_full = params->queue_when_full;
    iface->op_xfers_offset = ucs_align_up(params->op_size,
                                          UCS_SYS_CACHE_LINE_SIZE);
    return uct_gaudi_mpool_init(&iface->op_mp,
                                iface->queue_when_full ?
                                (iface->op_xfers_offset +
                                 (iface->config.max_iov *
                                  sizeof(uct_gaudi_dma_xfer_t))) :
                                params->op_size,
                                UCS_SYS_CACHE_LINE_SIZE, 128, UINT_MAX,
                                &uct_gaudi_iface_op_mpool_ops,
                                params->tl_name);
}

UCS_CLASS_INIT_FUNC(uct_gaudi_iface_t, uct_iface_ops_t *tl_ops,
                    uct_gaudi_iface_ops_t *ops, uct_md_h md,
                    uct_gaudi_dev_t *dev, uct_worker_h worker,
                    const uct_iface_params_t *params,
                    const uct_iface_config_t *tl_config,
                    const uct_gaudi_iface_params_t *gaudi_params)
{
    const uct_gaudi_iface_config_t *config =
            ucs_derived_of(tl_config, uct_gaudi_iface_config_t);
    ucs_status_t status;

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, tl_ops, &ops->super, md,
                              worker, params,
                              tl_config UCS_STATS_ARG(params->stats_root)
                              UCS_STATS_ARG(gaudi_params->tl_name));

    status = uct_gaudi_iface_check_device(params, gaudi_params->tl_name,
                                          gaudi_params->dev_name);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_iface_config_check(config, gaudi_params->knob_prefix);
    if (status != UCS_OK) {
        return status;
    }

    self->tl_name    = gaudi_params->tl_name;
    self->dev_name   = gaudi_params->dev_name;
    self->dev        = dev;
    self->next_retry = 0;
    uct_gaudi_iface_set_config(self, config);
    ucs_queue_head_init(&self->pending);
    ucs_queue_head_init(&self->flushq);
    ucs_queue_head_init(&self->backlog);

    status = uct_gaudi_bounce_init(dev, config->bounce_size,
                                   gaudi_params->tl_name, &self->bounce);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_dma_chan_init(dev, config->max_inflight,
                                     self->config.max_iov, &self->chan);
    if (status != UCS_OK) {
        goto err_bounce;
    }

    status = uct_gaudi_iface_set_perf(self, config, gaudi_params);
    if (status != UCS_OK) {
        goto err_chan;
    }

    status = uct_gaudi_iface_op_mpool_init(self, gaudi_params);
    if (status != UCS_OK) {
        goto err_chan;
    }

    status = UCS_STATS_NODE_ALLOC(&self->stats, &uct_gaudi_iface_stats_class,
                                  self->super.stats, "-%s", self->dev_name);
    if (status != UCS_OK) {
        goto err_mpool;
    }

    uct_gaudi_event_init(&self->event, &self->chan);
    return UCS_OK;

err_mpool:
    ucs_mpool_cleanup(&self->op_mp, 1);
err_chan:
    uct_gaudi_dma_chan_cleanup(&self->chan);
err_bounce:
    uct_gaudi_bounce_cleanup(dev, &self->bounce);
    return status;
}

UCS_CLASS_CLEANUP_FUNC(uct_gaudi_iface_t)
{
    uct_base_iface_progress_disable(&self->super.super,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    /* the wake-up thread waits for this channel's submissions: first */
    uct_gaudi_event_cleanup(&self->event);
    /* what was never submitted ends now */
    uct_gaudi_iface_backlog_cancel(self);
    /* completes what is in flight (bounded by the DMA timeout) */
    uct_gaudi_dma_chan_cleanup(&self->chan);
    uct_gaudi_dma_chan_flush_progress(&self->chan, &self->flushq);
    UCS_STATS_NODE_FREE(self->stats);
    ucs_mpool_cleanup(&self->op_mp, 1);
    uct_gaudi_bounce_cleanup(self->dev, &self->bounce);
}

UCS_CLASS_DEFINE(uct_gaudi_iface_t, uct_base_iface_t);
