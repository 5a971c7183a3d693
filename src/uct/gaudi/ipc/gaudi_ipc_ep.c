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

#include <uct/gaudi/base/gaudi_ep.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <ucs/profile/profile.h>
#include <ucs/sys/sys.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>


static UCS_CLASS_INIT_FUNC(uct_gaudi_ipc_ep_t, const uct_ep_params_t *params)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(params->iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_iface_addr_t addr;

    UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super.super);
    /* UCP packs addresses byte by byte: iface_addr may be misaligned */
    memcpy(&addr, params->iface_addr, sizeof(addr));
    self->remote     = addr.srv;
    self->remote_pid = (pid_t)addr.pid;
    /* the peer's pid may name no process, or another one, in our PID
     * namespace: UCX's keepalive gets ours, whose start time it can read,
     * and the peer's liveness is its fd server's (ep_check) */
    return uct_ep_keepalive_init(&self->keepalive, getpid());
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
uct_gaudi_ipc_ep_copy_sync(uct_gaudi_iface_t *iface,
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

ucs_status_t uct_gaudi_ipc_ep_rma_short(uct_ep_h tl_ep, void *local,
                                        size_t length, uint64_t remote_addr,
                                        uct_rkey_t rkey, int is_put)
{
    return uct_gaudi_ipc_ep_copy_sync(ucs_derived_of(tl_ep->iface,
                                                     uct_gaudi_iface_t),
                                      (uct_gaudi_ipc_unpacked_rkey_t*)rkey,
                                      local, length, remote_addr, is_put);
}

ssize_t uct_gaudi_ipc_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                   void *arg, uint64_t remote_addr,
                                   uct_rkey_t rkey)
{
    uct_gaudi_iface_t *iface                = ucs_derived_of(tl_ep->iface,
                                                             uct_gaudi_iface_t);
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
    uct_gaudi_iface_t *iface                = ucs_derived_of(tl_ep->iface,
                                                             uct_gaudi_iface_t);
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

void uct_gaudi_ipc_op_release(uct_gaudi_op_t *super)
{
    uct_gaudi_ipc_op_t *op       = ucs_derived_of(super, uct_gaudi_ipc_op_t);
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(super->iface,
                                                  uct_gaudi_ipc_iface_t);

    uct_gaudi_ipc_cache_put(&iface->md->cache, op->map);
}

/* Zero-copy operation on host local buffers: the DMA engine reaches host
 * memory through the bounce buffer, synchronously */
static ucs_status_t
uct_gaudi_ipc_ep_zcopy_host(uct_gaudi_iface_t *iface, const uct_iov_t *iov,
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

ucs_status_t uct_gaudi_ipc_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                    size_t iovcnt, uint64_t remote_addr,
                                    uct_rkey_t rkey, uct_completion_t *comp,
                                    int is_put)
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

        if (!uct_gaudi_mem_is_device_address(iface->super.dev, local,
                                             length)) {
            /* a host buffer (UCP's RMA on a host buffer to the peer's Gaudi
             * memory): staged and done before returning */
            return uct_gaudi_ipc_ep_zcopy_host(&iface->super, iov, iovcnt,
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

    op = ucs_derived_of(uct_gaudi_op_get(&iface->super, comp),
                        uct_gaudi_ipc_op_t);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }

    /* the mapping stays while the DMA runs, whatever happens to the key */
    op->map = unpacked->map;
    uct_gaudi_ipc_cache_hold(&iface->md->cache, op->map);
    /* the peer's memory is reached over PCIe (its BAR, a PMMU VA): a PCI
     * DMA queue, "up" to write it, "down" to read it; the D2D (EDMA) engines
     * reach only this device's HBM */
    return uct_gaudi_op_post(&op->super, xfers, count,
                             is_put ? UCT_GAUDI_DMA_D2H : UCT_GAUDI_DMA_H2D);
}

int uct_gaudi_ipc_ep_is_peer(uct_ep_h tl_ep,
                             const uct_iface_addr_t *iface_addr)
{
    uct_gaudi_ipc_ep_t *ep = ucs_derived_of(tl_ep, uct_gaudi_ipc_ep_t);
    uct_gaudi_ipc_iface_addr_t addr;

    memcpy(&addr, iface_addr, sizeof(addr)); /* may be misaligned */
    return uct_gaudi_ipc_srv_id_equal(&addr.srv.id, &ep->remote.id);
}

ucs_status_t uct_gaudi_ipc_ep_check(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp)
{
    uct_gaudi_ipc_ep_t *ep       = ucs_derived_of(tl_ep, uct_gaudi_ipc_ep_t);
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                  uct_gaudi_ipc_iface_t);

    UCT_GAUDI_EP_KEEPALIVE_CHECK_PARAM(flags, comp);
    if (uct_gaudi_ipc_srv_probe(&iface->md->srv, &ep->remote)) {
        return UCS_OK;
    }

    /* the peer is gone: what we imported from it goes too */
    ucs_diag("gaudi_ipc: pid %d (in its namespace) is gone: its fd server "
             "does not listen any more", (int)ep->remote_pid);
    uct_gaudi_ipc_cache_purge_peer(&iface->md->cache, &ep->remote.id);
    /* UCX reports a peer whose start time changed, through its deferred
     * error path (which the ep's destruction cancels); no process has pid
     * 0, hence no start time: it reports this one */
    uct_ep_keepalive_check(tl_ep, &ep->keepalive, 0, flags, comp);
    return UCS_OK;
}
