/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_copy_ep.h"
#include "gaudi_copy_iface.h"
#include "gaudi_copy_md.h"

#include <uct/gaudi/drv/gaudi_dma.h>
#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <ucs/profile/profile.h>
#include <string.h>


static UCS_CLASS_INIT_FUNC(uct_gaudi_copy_ep_t, const uct_ep_params_t *params)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(params->iface,
                                                   uct_gaudi_copy_iface_t);

    UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gaudi_copy_ep_t)
{
}

UCS_CLASS_DEFINE(uct_gaudi_copy_ep_t, uct_base_ep_t)
UCS_CLASS_DEFINE_NEW_FUNC(uct_gaudi_copy_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_gaudi_copy_ep_t, uct_ep_t);


static ucs_status_t uct_gaudi_copy_ep_rma_short(uct_ep_h tl_ep, void *local,
                                                size_t length,
                                                uint64_t remote_addr,
                                                int is_put)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                   uct_gaudi_copy_iface_t);
    void *remote = (void*)(uintptr_t)remote_addr;
    int local_is_dev, remote_is_dev;

    if (length == 0) {
        return UCS_OK;
    }

    local_is_dev  = uct_gaudi_mem_is_device_address(iface->dev,
                                                    (uintptr_t)local, length);
    remote_is_dev = uct_gaudi_mem_is_device_address(iface->dev, remote_addr,
                                                    length);
    return is_put ?
           uct_gaudi_bounce_copy(iface->dev, &iface->bounce, remote,
                                 remote_is_dev, local, local_is_dev, length) :
           uct_gaudi_bounce_copy(iface->dev, &iface->bounce, local,
                                 local_is_dev, remote, remote_is_dev, length);
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_copy_ep_put_short,
                 (tl_ep, buffer, length, remote_addr, rkey),
                 uct_ep_h tl_ep, const void *buffer, unsigned length,
                 uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    status = uct_gaudi_copy_ep_rma_short(tl_ep, (void*)buffer, length,
                                         remote_addr, 1);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, SHORT,
                      length);
    ucs_trace_data("PUT_SHORT size %u from %p to 0x%" PRIx64 ": %s", length,
                   buffer, remote_addr, ucs_status_string(status));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_copy_ep_get_short,
                 (tl_ep, buffer, length, remote_addr, rkey),
                 uct_ep_h tl_ep, void *buffer, unsigned length,
                 uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    status = uct_gaudi_copy_ep_rma_short(tl_ep, buffer, length, remote_addr,
                                         0);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, SHORT,
                      length);
    ucs_trace_data("GET_SHORT size %u from 0x%" PRIx64 " to %p: %s", length,
                   remote_addr, buffer, ucs_status_string(status));
    return status;
}

static void uct_gaudi_copy_op_release(uct_gaudi_copy_op_t *op)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(op->iface->super.md,
                                             uct_gaudi_copy_md_t);
    unsigned i;

    for (i = 0; i < op->num_mapped; ++i) {
        uct_gaudi_copy_md_host_put(md, op->mapped[i]);
    }

    ucs_mpool_put_inline(op);
}

static void uct_gaudi_copy_op_done(uct_completion_t *self)
{
    uct_gaudi_copy_op_t *op = ucs_container_of(self, uct_gaudi_copy_op_t,
                                               comp);
    uct_completion_t *user_comp = op->user_comp;
    ucs_status_t status         = self->status;

    uct_gaudi_copy_op_release(op);
    if (user_comp != NULL) {
        uct_invoke_completion(user_comp, status);
    }
}

/* Device address of [addr, addr+length) for the DMA engine: a Gaudi VA as
 * is, host memory through its registration or a (cached) mapping that the
 * operation holds until it completes */
static ucs_status_t uct_gaudi_copy_op_resolve(uct_gaudi_copy_op_t *op,
                                              void *addr, size_t length,
                                              uct_mem_h tl_memh,
                                              uint64_t *dva_p)
{
    uct_gaudi_copy_iface_t *iface = op->iface;
    uct_gaudi_copy_md_t *md       = ucs_derived_of(iface->super.md,
                                                   uct_gaudi_copy_md_t);
    uct_gaudi_copy_memh_t *memh   = tl_memh;
    ucs_status_t status;

    if (uct_gaudi_mem_is_device_address(iface->dev, (uintptr_t)addr,
                                        length)) {
        *dva_p = (uintptr_t)addr;
        return UCS_OK;
    }

    if ((memh == NULL) || (memh->mem_type != UCS_MEMORY_TYPE_HOST)) {
        status = uct_gaudi_copy_md_host_get(md, addr, length, 0, &memh);
        if (status != UCS_OK) {
            return status;
        }

        op->mapped[op->num_mapped++] = memh;
    }

    *dva_p = memh->dva + UCS_PTR_BYTE_DIFF(memh->address, addr);
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                        uint64_t remote_addr, uct_completion_t *comp,
                        int is_put)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                   uct_gaudi_copy_iface_t);
    uct_gaudi_dma_xfer_t xfers[iovcnt];
    uint64_t local, remote;
    size_t offset = 0;
    uct_gaudi_copy_op_t *op;
    ucs_status_t status;
    unsigned count;
    size_t i;

    op = ucs_mpool_get_inline(&iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        ucs_error("gaudi_copy: failed to allocate an operation descriptor");
        return UCS_ERR_NO_MEMORY;
    }

    op->comp.func   = uct_gaudi_copy_op_done;
    op->comp.count  = 1;
    op->comp.status = UCS_OK;
    op->user_comp   = comp;
    op->iface       = iface;
    op->num_mapped  = 0;
    for (i = 0, count = 0; i < iovcnt; ++i) {
        if (uct_iov_get_length(&iov[i]) == 0) {
            continue;
        }

        status = uct_gaudi_copy_op_resolve(op, iov[i].buffer,
                                           uct_iov_get_length(&iov[i]),
                                           iov[i].memh, &local);
        if (status != UCS_OK) {
            goto err_release;
        }

        status = uct_gaudi_copy_op_resolve(op,
                                           (void*)(uintptr_t)(remote_addr +
                                                              offset),
                                           uct_iov_get_length(&iov[i]),
                                           NULL, &remote);
        if (status != UCS_OK) {
            goto err_release;
        }

        xfers[count].dst    = is_put ? remote : local;
        xfers[count].src    = is_put ? local : remote;
        xfers[count].length = uct_iov_get_length(&iov[i]);
        offset             += xfers[count].length;
        ++count;
    }

    if (count == 0) {
        uct_gaudi_copy_op_release(op);
        return UCS_OK;
    }

    status = uct_gaudi_dma_chan_post(&iface->chan, xfers, count, &op->comp);
    if (status == UCS_INPROGRESS) {
        return UCS_INPROGRESS;
    }

err_release:
    uct_gaudi_copy_op_release(op);
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_copy_ep_put_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    ucs_status_t status;

    status = uct_gaudi_copy_ep_zcopy(tl_ep, iov, iovcnt, remote_addr, comp,
                                     1);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, ZCOPY,
                      uct_iov_total_length(iov, iovcnt));
    ucs_trace_data("PUT_ZCOPY size %zu from %p to 0x%" PRIx64 ": %s",
                   uct_iov_total_length(iov, iovcnt), iov->buffer,
                   remote_addr, ucs_status_string(status));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_copy_ep_get_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    ucs_status_t status;

    status = uct_gaudi_copy_ep_zcopy(tl_ep, iov, iovcnt, remote_addr, comp,
                                     0);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, ZCOPY,
                      uct_iov_total_length(iov, iovcnt));
    ucs_trace_data("GET_ZCOPY size %zu from 0x%" PRIx64 " to %p: %s",
                   uct_iov_total_length(iov, iovcnt), remote_addr,
                   iov->buffer, ucs_status_string(status));
    return status;
}

ucs_status_t uct_gaudi_copy_ep_pending_add(uct_ep_h tl_ep,
                                          uct_pending_req_t *req,
                                          unsigned flags)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                   uct_gaudi_copy_iface_t);
    uct_gaudi_copy_pending_priv_t *priv;

    if (uct_gaudi_dma_chan_has_room(&iface->chan)) {
        return UCS_ERR_BUSY;  /* there is room: send now */
    }

    priv     = (uct_gaudi_copy_pending_priv_t*)&req->priv;
    priv->ep = tl_ep;
    uct_pending_req_queue_push(&iface->pending, req);
    UCT_TL_EP_STAT_PEND(ucs_derived_of(tl_ep, uct_base_ep_t));
    return UCS_OK;
}

void uct_gaudi_copy_ep_pending_purge(uct_ep_h tl_ep,
                                     uct_pending_purge_callback_t cb,
                                     void *arg)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                   uct_gaudi_copy_iface_t);
    uct_gaudi_copy_pending_priv_t *priv;

    uct_pending_queue_purge(priv, &iface->pending, priv->ep == tl_ep, cb,
                            arg);
}

ucs_status_t uct_gaudi_copy_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                     uct_completion_t *comp)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                   uct_gaudi_copy_iface_t);
    ucs_status_t status;

    /* the iface's submissions in flight include the ep's */
    status = uct_gaudi_copy_iface_flush_comp(iface, comp);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_FLUSH(ucs_derived_of(tl_ep, uct_base_ep_t));
    } else if (status == UCS_INPROGRESS) {
        UCT_TL_EP_STAT_FLUSH_WAIT(ucs_derived_of(tl_ep, uct_base_ep_t));
    }

    return status;
}
