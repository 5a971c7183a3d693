/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_iface.h"
#include "gaudi_ipc_ep.h"

#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/gaudi/drv/gaudi_share.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>
#include <ucs/time/time.h>
#include <ucs/type/class.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>


static ucs_config_field_t uct_gaudi_ipc_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"BW", "auto",
     "Effective DMA bandwidth between the Gaudi memory of two processes (the\n"
     "owned device's DMA engine reading or writing the peer's device memory\n"
     "through PCIe peer-to-peer). \"auto\" takes 24GBs.",
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, bandwidth),
     UCS_CONFIG_TYPE_BW},

    {"LAT", "auto",
     "Latency of one DMA command submission until its completion is seen.\n"
     "\"auto\" takes 10us.",
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, latency),
     UCS_CONFIG_TYPE_TIME_UNITS},

    {"OVERHEAD", "2us",
     "CPU time spent to post one operation (writing the DMA packets and\n"
     "submitting them).",
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, overhead),
     UCS_CONFIG_TYPE_TIME},

    {"MAX_INFLIGHT", "64",
     "Maximal number of DMA command submissions in flight per interface; one\n"
     "pre-mapped command buffer each. A zero-copy operation beyond it returns\n"
     "UCS_ERR_NO_RESOURCE and waits in the pending queue.",
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, max_inflight),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_BCOPY", "256k",
     "Size of the pre-registered host buffer through which short and bcopy\n"
     "operations stage host data; also the largest bcopy operation.",
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, max_bcopy),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_IOV", "16",
     "Maximal number of iov entries of one zero-copy operation; they are\n"
     "batched into one DMA command submission.",
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, max_iov),
     UCS_CONFIG_TYPE_UINT},

    {NULL}
};


static UCS_CLASS_DECLARE_DELETE_FUNC(uct_gaudi_ipc_iface_t, uct_iface_t);

static ucs_status_t
uct_gaudi_ipc_iface_get_device_address(uct_iface_h tl_iface,
                                       uct_device_addr_t *addr)
{
    uct_iface_get_local_address((uct_gaudi_ipc_device_addr_t*)addr,
                                UCS_SYS_NS_TYPE_NET);
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_ipc_iface_get_address(uct_iface_h tl_iface,
                                uct_iface_addr_t *iface_addr)
{
    uct_gaudi_ipc_iface_addr_t pid = getpid();

    /* UCP packs addresses byte by byte: iface_addr may be misaligned */
    memcpy(iface_addr, &pid, sizeof(pid));
    return UCS_OK;
}

static int
uct_gaudi_ipc_iface_is_reachable(const uct_iface_h tl_iface,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_iface_addr_t *iface_addr)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_iface_addr_t pid;

    if ((dev_addr == NULL) || (iface_addr == NULL)) {
        return 0;
    }

    memcpy(&pid, iface_addr, sizeof(pid)); /* may be misaligned */

    /* another process of this system whose fd server we can connect to (the
     * same network namespace), and our driver can import its DMA-BUFs
     * (op 99) */
    return uct_iface_local_is_reachable((uct_gaudi_ipc_device_addr_t*)dev_addr,
                                        UCS_SYS_NS_TYPE_NET) &&
           (pid != (uct_gaudi_ipc_iface_addr_t)getpid()) &&
           uct_gaudi_share_can_import(iface->dev);
}

static void uct_gaudi_ipc_iface_set_rma_caps(uct_gaudi_ipc_iface_t *iface,
                                             uct_iface_attr_t *attr)
{
    attr->cap.put.max_short       = UINT_MAX;
    attr->cap.put.max_bcopy       = iface->bounce.size;
    attr->cap.put.max_zcopy       = SIZE_MAX;
    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu       = 1;
    attr->cap.put.max_iov         = iface->config.max_iov;
    attr->cap.get.max_short       = UINT_MAX;
    attr->cap.get.max_bcopy       = iface->bounce.size;
    attr->cap.get.max_zcopy       = SIZE_MAX;
    attr->cap.get.min_zcopy       = 0;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;
    attr->cap.get.max_iov         = iface->config.max_iov;
}

static ucs_status_t
uct_gaudi_ipc_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *iface_attr)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);

    uct_base_iface_query(&iface->super, iface_attr);

    iface_attr->iface_addr_len      = sizeof(uct_gaudi_ipc_iface_addr_t);
    iface_attr->device_addr_len     = sizeof(uct_gaudi_ipc_device_addr_t);
    iface_attr->ep_addr_len         = 0;
    iface_attr->cap.flags           = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                                      UCT_IFACE_FLAG_PUT_SHORT |
                                      UCT_IFACE_FLAG_GET_SHORT |
                                      UCT_IFACE_FLAG_PUT_BCOPY |
                                      UCT_IFACE_FLAG_GET_BCOPY |
                                      UCT_IFACE_FLAG_PUT_ZCOPY |
                                      UCT_IFACE_FLAG_GET_ZCOPY |
                                      UCT_IFACE_FLAG_PENDING |
                                      UCT_IFACE_FLAG_EP_CHECK |
                                      UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
    iface_attr->cap.event_flags     = 0;
    uct_gaudi_ipc_iface_set_rma_caps(iface, iface_attr);
    iface_attr->cap.am.opt_zcopy_align = 1;
    iface_attr->cap.am.align_mtu    = 1;
    iface_attr->cap.am.max_iov      = 1;
    iface_attr->latency             = ucs_linear_func_make(
                                              iface->config.latency, 0);
    iface_attr->bandwidth.dedicated = 0;
    iface_attr->bandwidth.shared    = iface->config.bandwidth;
    iface_attr->overhead            = iface->config.overhead;
    iface_attr->priority            = 0;
    return UCS_OK;
}

ucs_status_t uct_gaudi_ipc_iface_flush_comp(uct_gaudi_ipc_iface_t *iface,
                                            uct_completion_t *comp)
{
    return uct_gaudi_dma_chan_flush(&iface->chan, &iface->flushq,
                                    ucs_queue_is_empty(&iface->pending),
                                    comp);
}

static ucs_status_t
uct_gaudi_ipc_iface_flush(uct_iface_h tl_iface, unsigned flags,
                          uct_completion_t *comp)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);
    ucs_status_t status;

    status = uct_gaudi_ipc_iface_flush_comp(iface, comp);
    if (status == UCS_OK) {
        UCT_TL_IFACE_STAT_FLUSH(&iface->super);
    } else if (status == UCS_INPROGRESS) {
        UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
    }

    return status;
}

static unsigned uct_gaudi_ipc_iface_progress(uct_iface_h tl_iface)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_pending_priv_t *priv;
    unsigned count;

    count = uct_gaudi_dma_chan_progress(&iface->chan);
    uct_pending_queue_dispatch(priv, &iface->pending,
                               uct_gaudi_dma_chan_has_room(&iface->chan));
    uct_gaudi_dma_chan_flush_progress(&iface->chan, &iface->flushq);
    /* memory freed while a peer imported it, released since */
    uct_gaudi_mem_retry_deferred(iface->dev);
    return count;
}

static ucs_status_t
uct_gaudi_ipc_estimate_perf(uct_iface_h tl_iface, uct_perf_attr_t *perf_attr)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);

    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_BANDWIDTH) {
        perf_attr->bandwidth.dedicated = 0;
        perf_attr->bandwidth.shared    = iface->config.bandwidth;
    }

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

static uct_iface_ops_t uct_gaudi_ipc_iface_ops = {
    .ep_put_short             = uct_gaudi_ipc_ep_put_short,
    .ep_get_short             = uct_gaudi_ipc_ep_get_short,
    .ep_put_bcopy             = uct_gaudi_ipc_ep_put_bcopy,
    .ep_get_bcopy             = uct_gaudi_ipc_ep_get_bcopy,
    .ep_put_zcopy             = uct_gaudi_ipc_ep_put_zcopy,
    .ep_get_zcopy             = uct_gaudi_ipc_ep_get_zcopy,
    .ep_pending_add           = uct_gaudi_ipc_ep_pending_add,
    .ep_pending_purge         = uct_gaudi_ipc_ep_pending_purge,
    .ep_flush                 = uct_gaudi_ipc_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_check                 = uct_gaudi_ipc_ep_check,
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_gaudi_ipc_ep_t),
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_gaudi_ipc_ep_t),
    .iface_flush              = uct_gaudi_ipc_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_gaudi_ipc_iface_progress,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(
                                        uct_gaudi_ipc_iface_t),
    .iface_query              = uct_gaudi_ipc_iface_query,
    .iface_get_device_address = uct_gaudi_ipc_iface_get_device_address,
    .iface_get_address        = uct_gaudi_ipc_iface_get_address,
    .iface_is_reachable       = uct_gaudi_ipc_iface_is_reachable
};

static uct_iface_internal_ops_t uct_gaudi_ipc_iface_internal_ops = {
    .iface_estimate_perf = uct_gaudi_ipc_estimate_perf,
    .iface_vfs_refresh   = (uct_iface_vfs_refresh_func_t)ucs_empty_function,
    .ep_query            = (uct_ep_query_func_t)
                           ucs_empty_function_return_unsupported,
    .ep_invalidate       = (uct_ep_invalidate_func_t)
                           ucs_empty_function_return_unsupported
};

static ucs_status_t
uct_gaudi_ipc_query_devices(uct_md_h tl_md,
                            uct_tl_device_resource_t **tl_devices_p,
                            unsigned *num_tl_devices_p)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);

    return uct_single_device_resource(tl_md, UCT_GAUDI_IPC_DEV_NAME,
                                      UCT_DEVICE_TYPE_ACC,
                                      md->dev->info->sys_dev, tl_devices_p,
                                      num_tl_devices_p);
}

static ucs_mpool_ops_t uct_gaudi_ipc_op_mpool_ops = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free,
    .obj_init      = NULL,
    .obj_cleanup   = NULL,
    .obj_str       = NULL
};

static UCS_CLASS_INIT_FUNC(uct_gaudi_ipc_iface_t, uct_md_h tl_md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);
    const uct_gaudi_ipc_iface_config_t *config =
            ucs_derived_of(tl_config, uct_gaudi_ipc_iface_config_t);
    ucs_status_t status;

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_gaudi_ipc_iface_ops,
                              &uct_gaudi_ipc_iface_internal_ops, tl_md,
                              worker, params,
                              tl_config UCS_STATS_ARG(params->stats_root)
                              UCS_STATS_ARG("gaudi_ipc"));

    if ((params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) &&
        (params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE) &&
        (params->mode.device.dev_name != NULL) &&
        strcmp(params->mode.device.dev_name, UCT_GAUDI_IPC_DEV_NAME)) {
        ucs_error("gaudi_ipc: no device %s (the device is \"%s\")",
                  params->mode.device.dev_name, UCT_GAUDI_IPC_DEV_NAME);
        return UCS_ERR_NO_DEVICE;
    }

    status = uct_gaudi_base_check_bw("UCX_GAUDI_IPC_BW", config->bandwidth);
    if (status != UCS_OK) {
        return status;
    }

    self->md                = md;
    self->dev               = md->dev;
    self->config.max_iov    = ucs_max(config->max_iov, 1);
    self->config.bandwidth  = UCS_CONFIG_BW_IS_AUTO(config->bandwidth) ?
                              24000.0 * UCS_MBYTE : config->bandwidth;
    self->config.latency    = (config->latency == UCS_TIME_AUTO) ? 10e-6 :
                              ucs_time_to_sec(config->latency);
    self->config.overhead   = config->overhead;
    ucs_queue_head_init(&self->pending);
    ucs_queue_head_init(&self->flushq);

    status = uct_gaudi_bounce_init(self->dev, config->max_bcopy,
                                   "gaudi_ipc_bounce", &self->bounce);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_dma_chan_init(self->dev, config->max_inflight,
                                     self->config.max_iov, &self->chan);
    if (status != UCS_OK) {
        goto err_bounce;
    }

    status = ucs_mpool_init(&self->op_mp, 0, sizeof(uct_gaudi_ipc_op_t), 0,
                            UCS_SYS_CACHE_LINE_SIZE, 128, UINT_MAX,
                            &uct_gaudi_ipc_op_mpool_ops, "gaudi_ipc_ops");
    if (status != UCS_OK) {
        goto err_chan;
    }

    return UCS_OK;

err_chan:
    uct_gaudi_dma_chan_cleanup(&self->chan);
err_bounce:
    uct_gaudi_bounce_cleanup(self->dev, &self->bounce);
    return status;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gaudi_ipc_iface_t)
{
    uct_base_iface_progress_disable(&self->super.super,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    /* completes what is in flight (bounded by the DMA timeout) */
    uct_gaudi_dma_chan_cleanup(&self->chan);
    uct_gaudi_dma_chan_flush_progress(&self->chan, &self->flushq);
    ucs_mpool_cleanup(&self->op_mp, 1);
    uct_gaudi_bounce_cleanup(self->dev, &self->bounce);
}

UCS_CLASS_DEFINE(uct_gaudi_ipc_iface_t, uct_base_iface_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_gaudi_ipc_iface_t, uct_iface_t, uct_md_h,
                          uct_worker_h, const uct_iface_params_t*,
                          const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_gaudi_ipc_iface_t, uct_iface_t);

UCT_TL_DEFINE(&uct_gaudi_ipc_component, gaudi_ipc,
              uct_gaudi_ipc_query_devices, uct_gaudi_ipc_iface_t,
              "GAUDI_IPC_", uct_gaudi_ipc_iface_config_table,
              uct_gaudi_ipc_iface_config_t);
