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

#include <uct/gaudi/base/gaudi_ep.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <string.h>


static UCS_CLASS_INIT_FUNC(uct_gaudi_copy_ep_t, const uct_ep_params_t *params)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(params->iface,
                                              uct_gaudi_iface_t);

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


ucs_status_t uct_gaudi_copy_ep_rma_short(uct_ep_h tl_ep, void *local,
                                         size_t length, uint64_t remote_addr,
                                         uct_rkey_t rkey, int is_put)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    void *remote             = (void*)(uintptr_t)remote_addr;
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

void uct_gaudi_copy_op_release(uct_gaudi_op_t *super)
{
    uct_gaudi_copy_op_t *op = ucs_derived_of(super, uct_gaudi_copy_op_t);
    uct_gaudi_copy_md_t *md = ucs_derived_of(super->iface->super.md,
                                             uct_gaudi_copy_md_t);
    unsigned i;

    for (i = 0; i < op->num_mapped; ++i) {
        uct_gaudi_copy_md_host_put(md, op->mapped[i]);
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
    uct_gaudi_iface_t *iface    = op->super.iface;
    uct_gaudi_copy_md_t *md     = ucs_derived_of(iface->super.md,
                                                 uct_gaudi_copy_md_t);
    uct_gaudi_copy_memh_t *memh = tl_memh;
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

ucs_status_t uct_gaudi_copy_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp,
                                     int is_put)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    uct_gaudi_dma_xfer_t xfers[iovcnt];
    uint64_t local, remote;
    size_t offset = 0;
    uct_gaudi_copy_op_t *op;
    ucs_status_t status;
    unsigned count;
    size_t i;

    op = ucs_derived_of(uct_gaudi_op_get(iface, comp), uct_gaudi_copy_op_t);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }

    op->num_mapped = 0;
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
        uct_gaudi_op_release(&op->super);
        return UCS_OK;
    }

    return uct_gaudi_op_post(&op->super, xfers, count,
                             uct_gaudi_dma_batch_direction(iface->dev, xfers,
                                                           count));

err_release:
    uct_gaudi_op_release(&op->super);
    return status;
}
