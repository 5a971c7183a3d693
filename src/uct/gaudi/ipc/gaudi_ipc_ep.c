/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_ep.h"
#include "gaudi_ipc_iface.h"

#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <ucs/profile/profile.h>
#include <ucs/sys/sys.h>
#include <inttypes.h>
#include <string.h>


static UCS_CLASS_INIT_FUNC(uct_gaudi_ipc_ep_t, const uct_ep_params_t *params)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(params->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_iface_addr_t pid;

    UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);
    /* UCP packs addresses byte by byte: iface_addr may be misaligned */
    memcpy(&pid, params->iface_addr, sizeof(pid));
    self->remote_pid = (pid_t)pid;
    return uct_ep_keepalive_init(&self->keepalive, self->remote_pid);
}

static UCS_CLASS_CLEANUP_FUNC(uct_gaudi_ipc_ep_t)
{
}

UCS_CLASS_DEFINE(uct_gaudi_ipc_ep_t, uct_base_ep_t)
UCS_CLASS_DEFINE_NEW_FUNC(uct_gaudi_ipc_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_gaudi_ipc_ep_t, uct_ep_t);


/* Device address of the peer's [remote, remote + length) in our device,
 * if the key grants that range */
static ucs_status_t
uct_gaudi_ipc_map_translate(const uct_gaudi_ipc_unpacked_rkey_t *rkey,
                            uint64_t remote, size_t length, uint64_t *dva_p)
{
    const uct_gaudi_ipc_map_t *map = rkey->map;

    if ((remote < rkey->start) || (length > rkey->end - rkey->start) ||
        (remote > rkey->end - length)) {
        ucs_error("gaudi_ipc: remote range 0x%" PRIx64 "+%zu is outside the "
                  "memory of pid %d its key grants (0x%" PRIx64 "..0x%"
                  PRIx64 ")", remote, length, map->pid, rkey->start,
                  rkey->end);
        return UCS_ERR_INVALID_ADDR;
    }

    *dva_p = map->dva + (remote - map->super.start);
    return UCS_OK;
}

/* Synchronous copy between @a local (Gaudi memory of this process, or host
 * memory) and the peer's memory */
static ucs_status_t
uct_gaudi_ipc_ep_copy_sync(uct_gaudi_ipc_iface_t *iface,
                           const uct_gaudi_ipc_unpacked_rkey_t *rkey,
                           void *local, size_t length, uint64_t remote_addr,
                           int is_put)
{
    uint64_t remote;
    ucs_status_t status;
    int local_is_dev;

    if (length == 0) {
        return UCS_OK;
    }

    status = uct_gaudi_ipc_map_translate(rkey, remote_addr, length, &remote);
    if (status != UCS_OK) {
        return status;
    }

    local_is_dev = uct_gaudi_mem_is_device_address(iface->dev,
                                                   (uintptr_t)local, length);
    return is_put ?
           uct_gaudi_bounce_copy(iface->dev, &iface->bounce,
                                 (void*)(uintptr_t)remote, 1, local,
                                 local_is_dev, length) :
           uct_gaudi_bounce_copy(iface->dev, &iface->bounce, local,
                                 local_is_dev, (void*)(uintptr_t)remote, 1,
                                 length);
}

static ucs_status_t uct_gaudi_ipc_ep_rma_short(uct_ep_h tl_ep, void *local,
                                               size_t length,
                                               uint64_t remote_addr,
                                               uct_rkey_t rkey, int is_put)
{
    return uct_gaudi_ipc_ep_copy_sync(ucs_derived_of(tl_ep->iface,
                                                     uct_gaudi_ipc_iface_t),
                                      (uct_gaudi_ipc_unpacked_rkey_t*)rkey,
                                      local, length, remote_addr, is_put);
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ipc_ep_put_short,
                 (tl_ep, buffer, length, remote_addr, rkey),
                 uct_ep_h tl_ep, const void *buffer, unsigned length,
                 uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    status = uct_gaudi_ipc_ep_rma_short(tl_ep, (void*)buffer, length,
                                        remote_addr, rkey, 1);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, SHORT,
                      length);
    ucs_trace_data("PUT_SHORT size %u from %p to 0x%" PRIx64 ": %s", length,
                   buffer, remote_addr, ucs_status_string(status));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ipc_ep_get_short,
                 (tl_ep, buffer, length, remote_addr, rkey),
                 uct_ep_h tl_ep, void *buffer, unsigned length,
                 uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    status = uct_gaudi_ipc_ep_rma_short(tl_ep, buffer, length, remote_addr,
                                        rkey, 0);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, SHORT,
                      length);
    ucs_trace_data("GET_SHORT size %u from 0x%" PRIx64 " to %p: %s", length,
                   remote_addr, buffer, ucs_status_string(status));
    return status;
}

ssize_t uct_gaudi_ipc_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                   void *arg, uint64_t remote_addr,
                                   uct_rkey_t rkey)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_unpacked_rkey_t *unpacked = (void*)rkey;
    ucs_status_t status;
    uint64_t remote;
    size_t length;

    length = pack_cb(iface->bounce.host, arg);
    ucs_assert(length <= iface->bounce.size);
    status = uct_gaudi_ipc_map_translate(unpacked, remote_addr, length,
                                         &remote);
    if ((status == UCS_OK) && (length > 0)) {
        status = uct_gaudi_dma_copy(iface->dev, remote, iface->bounce.dva,
                                    length);
    }

    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, BCOPY,
                      length);
    ucs_trace_data("PUT_BCOPY size %zu to 0x%" PRIx64 ": %s", length,
                   remote_addr, ucs_status_string(status));
    return (status == UCS_OK) ? (ssize_t)length : status;
}

ucs_status_t uct_gaudi_ipc_ep_get_bcopy(uct_ep_h tl_ep,
                                        uct_unpack_callback_t unpack_cb,
                                        void *arg, size_t length,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        uct_completion_t *comp)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_unpacked_rkey_t *unpacked = (void*)rkey;
    ucs_status_t status;
    uint64_t remote;

    if (length > iface->bounce.size) {
        ucs_error("gaudi_ipc: get_bcopy of %zu bytes exceeds max_bcopy %zu",
                  length, iface->bounce.size);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_gaudi_ipc_map_translate(unpacked, remote_addr, length,
                                         &remote);
    if ((status == UCS_OK) && (length > 0)) {
        status = uct_gaudi_dma_copy(iface->dev, iface->bounce.dva, remote,
                                    length);
    }

    if (status == UCS_OK) {
        unpack_cb(arg, iface->bounce.host, length);
    }

    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, BCOPY,
                      length);
    ucs_trace_data("GET_BCOPY size %zu from 0x%" PRIx64 ": %s", length,
                   remote_addr, ucs_status_string(status));
    return status;
}

static void uct_gaudi_ipc_op_done(uct_completion_t *self)
{
    uct_gaudi_ipc_op_t *op      = ucs_container_of(self, uct_gaudi_ipc_op_t,
                                                   comp);
    uct_completion_t *user_comp = op->user_comp;
    ucs_status_t status         = self->status;

    uct_gaudi_ipc_cache_put(&op->iface->md->cache, op->map);
    ucs_mpool_put_inline(op);
    if (user_comp != NULL) {
        uct_invoke_completion(user_comp, status);
    }
}

/* Zero-copy operation on host local buffers: the DMA engine reaches host
 * memory through the bounce buffer, synchronously */
static ucs_status_t
uct_gaudi_ipc_ep_zcopy_host(uct_gaudi_ipc_iface_t *iface, const uct_iov_t *iov,
                            size_t iovcnt, uint64_t remote_addr,
                            const uct_gaudi_ipc_unpacked_rkey_t *rkey,
                            int is_put)
{
    ucs_status_t status;
    size_t i;

    for (i = 0; i < iovcnt; ++i) {
        status = uct_gaudi_ipc_ep_copy_sync(iface, rkey, iov[i].buffer,
                                            uct_iov_get_length(&iov[i]),
                                            remote_addr, is_put);
        if (status != UCS_OK) {
            return status;
        }

        remote_addr += uct_iov_get_length(&iov[i]);
    }

    return UCS_OK;
}

static ucs_status_t
uct_gaudi_ipc_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                       uint64_t remote_addr, uct_rkey_t rkey,
                       uct_completion_t *comp, int is_put)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_unpacked_rkey_t *unpacked = (void*)rkey;
    uct_gaudi_dma_xfer_t xfers[iovcnt];
    uint64_t local, remote, peer;
    uct_gaudi_ipc_op_t *op;
    ucs_status_t status;
    size_t i, length;
    unsigned count;

    for (i = 0, count = 0, remote = remote_addr; i < iovcnt; ++i) {
        length = uct_iov_get_length(&iov[i]);
        if (length == 0) {
            continue;
        }

        local  = (uintptr_t)iov[i].buffer;
        status = uct_gaudi_ipc_map_translate(unpacked, remote, length,
                                             &peer);
        if (status != UCS_OK) {
            return status;
        }

        if (!uct_gaudi_mem_is_device_address(iface->dev, local, length)) {
            /* a host buffer (UCP's RMA on a host buffer to the peer's Gaudi
             * memory): staged and done before returning */
            return uct_gaudi_ipc_ep_zcopy_host(iface, iov, iovcnt,
                                               remote_addr, unpacked, is_put);
        }

        xfers[count].dst    = is_put ? peer : local;
        xfers[count].src    = is_put ? local : peer;
        xfers[count].length = length;
        remote             += length;
        ++count;
    }

    if (count == 0) {
        return UCS_OK;
    }

    op = ucs_mpool_get_inline(&iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        ucs_error("gaudi_ipc: failed to allocate an operation descriptor");
        return UCS_ERR_NO_MEMORY;
    }

    op->comp.func   = uct_gaudi_ipc_op_done;
    op->comp.count  = 1;
    op->comp.status = UCS_OK;
    op->user_comp   = comp;
    op->iface       = iface;
    op->map         = unpacked->map;
    /* the mapping stays while the DMA runs, whatever happens to the key */
    uct_gaudi_ipc_cache_hold(&iface->md->cache, op->map);
    /* the peer's memory is reached over PCIe (its BAR, a PMMU VA): a PCI
     * DMA queue, "up" to write it, "down" to read it; the D2D (EDMA) engines
     * reach only this device's HBM */
    status = uct_gaudi_dma_chan_post_dir(&iface->chan, xfers, count,
                                         is_put ? UCT_GAUDI_DMA_D2H :
                                                  UCT_GAUDI_DMA_H2D,
                                         &op->comp);
    if (status != UCS_INPROGRESS) {
        uct_gaudi_ipc_cache_put(&iface->md->cache, op->map);
        ucs_mpool_put_inline(op);
    }

    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ipc_ep_put_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    ucs_status_t status;

    status = uct_gaudi_ipc_ep_zcopy(tl_ep, iov, iovcnt, remote_addr, rkey,
                                    comp, 1);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, ZCOPY,
                      uct_iov_total_length(iov, iovcnt));
    ucs_trace_data("PUT_ZCOPY size %zu from %p to 0x%" PRIx64 ": %s",
                   uct_iov_total_length(iov, iovcnt), iov->buffer,
                   remote_addr, ucs_status_string(status));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ipc_ep_get_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    ucs_status_t status;

    status = uct_gaudi_ipc_ep_zcopy(tl_ep, iov, iovcnt, remote_addr, rkey,
                                    comp, 0);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, ZCOPY,
                      uct_iov_total_length(iov, iovcnt));
    ucs_trace_data("GET_ZCOPY size %zu from 0x%" PRIx64 " to %p: %s",
                   uct_iov_total_length(iov, iovcnt), remote_addr,
                   iov->buffer, ucs_status_string(status));
    return status;
}

ucs_status_t uct_gaudi_ipc_ep_pending_add(uct_ep_h tl_ep,
                                          uct_pending_req_t *req,
                                          unsigned flags)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_pending_priv_t *priv;

    if (uct_gaudi_dma_chan_has_room(&iface->chan)) {
        return UCS_ERR_BUSY;  /* there is room: send now */
    }

    priv     = (uct_gaudi_ipc_pending_priv_t*)&req->priv;
    priv->ep = tl_ep;
    uct_pending_req_queue_push(&iface->pending, req);
    UCT_TL_EP_STAT_PEND(ucs_derived_of(tl_ep, uct_base_ep_t));
    return UCS_OK;
}

void uct_gaudi_ipc_ep_pending_purge(uct_ep_h tl_ep,
                                    uct_pending_purge_callback_t cb,
                                    void *arg)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_pending_priv_t *priv;

    uct_pending_queue_purge(priv, &iface->pending, priv->ep == tl_ep, cb,
                            arg);
}

ucs_status_t uct_gaudi_ipc_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);
    ucs_status_t status;

    /* the iface's submissions in flight include the ep's */
    status = uct_gaudi_ipc_iface_flush_comp(iface, comp);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_FLUSH(ucs_derived_of(tl_ep, uct_base_ep_t));
    } else if (status == UCS_INPROGRESS) {
        UCT_TL_EP_STAT_FLUSH_WAIT(ucs_derived_of(tl_ep, uct_base_ep_t));
    }

    return status;
}

ucs_status_t uct_gaudi_ipc_ep_check(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp)
{
    uct_gaudi_ipc_ep_t *ep       = ucs_derived_of(tl_ep, uct_gaudi_ipc_ep_t);
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);

    UCT_EP_KEEPALIVE_CHECK_PARAM(flags, comp);
    if (ucs_sys_get_proc_create_time(ep->remote_pid) !=
        ep->keepalive.start_time) {
        /* the peer is gone: what we imported from it goes too */
        uct_gaudi_ipc_cache_purge_peer(&iface->md->cache, ep->remote_pid);
    }

    uct_ep_keepalive_check(tl_ep, &ep->keepalive, ep->remote_pid, flags,
                           comp);
    return UCS_OK;
}
