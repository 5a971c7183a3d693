/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ep.h"

#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <ucs/profile/profile.h>
#include <inttypes.h>
#include <string.h>


static const uct_gaudi_iface_ops_t *
uct_gaudi_iface_ops(const uct_gaudi_iface_t *iface)
{
    return ucs_derived_of(iface->super.internal_ops, uct_gaudi_iface_ops_t);
}

static const uct_gaudi_iface_ops_t *uct_gaudi_ep_ops(uct_ep_h tl_ep)
{
    return uct_gaudi_iface_ops(ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t));
}

/* An operation holds at most max_iov copies (and gaudi_copy's two host
 * mappings per copy): checked in every build, not only where UCX checks
 * parameters, since more would overrun the operation */
static ucs_status_t uct_gaudi_ep_check_iov(const uct_gaudi_iface_t *iface,
                                           size_t iovcnt, const char *name)
{
    if (ucs_likely(iovcnt <= iface->config.max_iov)) {
        return UCS_OK;
    }

    ucs_error("%s: %s of %zu iov entries, more than MAX_IOV=%u",
              iface->tl_name, name, iovcnt, iface->config.max_iov);
    return UCS_ERR_INVALID_PARAM;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ep_put_short,
                 (tl_ep, buffer, length, remote_addr, rkey),
                 uct_ep_h tl_ep, const void *buffer, unsigned length,
                 uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    status = uct_gaudi_ep_ops(tl_ep)->ep_rma_short(tl_ep, (void*)buffer,
                                                   length, remote_addr, rkey,
                                                   1);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, SHORT,
                      length);
    ucs_trace_data("PUT_SHORT size %u from %p to 0x%" PRIx64 ": %s", length,
                   buffer, remote_addr, ucs_status_string(status));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ep_get_short,
                 (tl_ep, buffer, length, remote_addr, rkey),
                 uct_ep_h tl_ep, void *buffer, unsigned length,
                 uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    status = uct_gaudi_ep_ops(tl_ep)->ep_rma_short(tl_ep, buffer, length,
                                                   remote_addr, rkey, 0);
    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, SHORT,
                      length);
    ucs_trace_data("GET_SHORT size %u from 0x%" PRIx64 " to %p: %s", length,
                   remote_addr, buffer, ucs_status_string(status));
    return status;
}

/* put_zcopy and get_zcopy: the iov bound, then the transport's copy */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_gaudi_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                   uint64_t remote_addr, uct_rkey_t rkey,
                   uct_completion_t *comp, int is_put)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    ucs_status_t status;

    status = uct_gaudi_ep_check_iov(iface, iovcnt,
                                    is_put ? "put_zcopy" : "get_zcopy");
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_iface_ops(iface)->ep_zcopy(tl_ep, iov, iovcnt,
                                                  remote_addr, rkey, comp,
                                                  is_put);
    ucs_trace_data("%s size %zu, local %p, remote 0x%" PRIx64 ": %s",
                   is_put ? "PUT_ZCOPY" : "GET_ZCOPY",
                   uct_iov_total_length(iov, iovcnt), iov->buffer,
                   remote_addr, ucs_status_string(status));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ep_put_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    ucs_status_t status = uct_gaudi_ep_zcopy(tl_ep, iov, iovcnt, remote_addr,
                                             rkey, comp, 1);

    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT, ZCOPY,
                      uct_iov_total_length(iov, iovcnt));
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_ep_get_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    ucs_status_t status = uct_gaudi_ep_zcopy(tl_ep, iov, iovcnt, remote_addr,
                                             rkey, comp, 0);

    UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET, ZCOPY,
                      uct_iov_total_length(iov, iovcnt));
    return status;
}

/* The DMA submission ended: release what the op holds, then tell the user,
 * who may reuse the memory at once */
static void uct_gaudi_op_done(uct_completion_t *self)
{
    uct_gaudi_op_t *op          = ucs_container_of(self, uct_gaudi_op_t, comp);
    uct_completion_t *user_comp = op->user_comp;
    ucs_status_t status         = self->status;

    uct_gaudi_op_release(op);
    if (user_comp != NULL) {
        uct_invoke_completion(user_comp, status);
    }
}

uct_gaudi_op_t *uct_gaudi_op_get(uct_gaudi_iface_t *iface,
                                 uct_completion_t *user_comp)
{
    uct_gaudi_op_t *op;

    op = ucs_mpool_get_inline(&iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        ucs_error("%s: failed to allocate an operation descriptor",
                  iface->tl_name);
        return NULL;
    }

    op->comp.func   = uct_gaudi_op_done;
    op->comp.count  = 1;
    op->comp.status = UCS_OK;
    op->user_comp   = user_comp;
    op->iface       = iface;
    return op;
}

/* Keep @a op, to be submitted once the DMA channel has room */
static void uct_gaudi_op_backlog(uct_gaudi_op_t *op,
                                 const uct_gaudi_dma_xfer_t *xfers,
                                 unsigned count, uct_gaudi_dma_dir_t dir)
{
    uct_gaudi_iface_t *iface = op->iface;

    /* an operation holds at most max_iov copies (UCT_CHECK_IOV_SIZE) */
    ucs_assert(count <= iface->config.max_iov);
    op->xfers = UCS_PTR_BYTE_OFFSET(op, iface->op_xfers_offset);
    memcpy(op->xfers, xfers, count * sizeof(*xfers));
    op->count              = count;
    op->dir                = dir;
    op->backlog.flush_comp = NULL;
    ucs_queue_push(&iface->backlog, &op->backlog.queue);
}

ucs_status_t uct_gaudi_op_post(uct_gaudi_op_t *op,
                               const uct_gaudi_dma_xfer_t *xfers,
                               unsigned count, uct_gaudi_dma_dir_t dir)
{
    uct_gaudi_iface_t *iface = op->iface;
    ucs_status_t status;

    if (iface->queue_when_full && !ucs_queue_is_empty(&iface->backlog)) {
        /* in order, behind those already waiting */
        uct_gaudi_op_backlog(op, xfers, count, dir);
        return UCS_INPROGRESS;
    }

    status = uct_gaudi_dma_chan_post_dir(&iface->chan, xfers, count, dir,
                                         &op->comp);
    if ((status == UCS_ERR_NO_RESOURCE) && iface->queue_when_full) {
        uct_gaudi_op_backlog(op, xfers, count, dir);
        return UCS_INPROGRESS;
    } else if (status != UCS_INPROGRESS) {
        uct_gaudi_op_release(op);
    }

    return status;
}

ucs_status_t uct_gaudi_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                      unsigned flags)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    uct_gaudi_pending_priv_t *priv;

    if (uct_gaudi_dma_chan_can_post(&iface->chan)) {
        return UCS_ERR_BUSY;  /* there is room: send now */
    }

    priv     = (uct_gaudi_pending_priv_t*)&req->priv;
    priv->ep = tl_ep;
    uct_pending_req_queue_push(&iface->pending, req);
    UCT_TL_EP_STAT_PEND(ucs_derived_of(tl_ep, uct_base_ep_t));
    return UCS_OK;
}

void uct_gaudi_ep_pending_purge(uct_ep_h tl_ep,
                                uct_pending_purge_callback_t cb, void *arg)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    uct_gaudi_pending_priv_t *priv;

    uct_pending_queue_purge(priv, &iface->pending, priv->ep == tl_ep, cb,
                            arg);
}

ucs_status_t uct_gaudi_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                uct_completion_t *comp)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    ucs_status_t status;

    /* the iface's submissions in flight include the ep's */
    status = uct_gaudi_iface_flush_all(iface, comp);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_FLUSH(ucs_derived_of(tl_ep, uct_base_ep_t));
    } else if (status == UCS_INPROGRESS) {
        UCT_TL_EP_STAT_FLUSH_WAIT(ucs_derived_of(tl_ep, uct_base_ep_t));
    }

    return status;
}
