/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_EP_H_
#define UCT_GAUDI_EP_H_

/*
 * What the endpoints of both transports share: a zero-copy operation from
 * the pool, through its DMA submission (or the iface's backlog), to its
 * completion; the pending queue and the flush. The iface owns the pool and
 * the backlog (uct_gaudi_op_release, gaudi_iface.h).
 */

#include "gaudi_iface.h"


/* A new operation of @a iface, completing @a user_comp; NULL if the pool is
 * exhausted (logged) */
uct_gaudi_op_t *uct_gaudi_op_get(uct_gaudi_iface_t *iface,
                                 uct_completion_t *user_comp);


/**
 * Submit @a count copies of @a op in direction @a dir. UCS_INPROGRESS: the
 * op completes from progress; any other status: the op was released.
 */
ucs_status_t uct_gaudi_op_post(uct_gaudi_op_t *op,
                               const uct_gaudi_dma_xfer_t *xfers,
                               unsigned count, uct_gaudi_dma_dir_t dir);


ucs_status_t uct_gaudi_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                    unsigned length, uint64_t remote_addr,
                                    uct_rkey_t rkey);


ucs_status_t uct_gaudi_ep_get_short(uct_ep_h tl_ep, void *buffer,
                                    unsigned length, uint64_t remote_addr,
                                    uct_rkey_t rkey);


ucs_status_t uct_gaudi_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                    size_t iovcnt, uint64_t remote_addr,
                                    uct_rkey_t rkey, uct_completion_t *comp);


ucs_status_t uct_gaudi_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                    size_t iovcnt, uint64_t remote_addr,
                                    uct_rkey_t rkey, uct_completion_t *comp);


ucs_status_t uct_gaudi_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                      unsigned flags);


void uct_gaudi_ep_pending_purge(uct_ep_h tl_ep,
                                uct_pending_purge_callback_t cb, void *arg);


ucs_status_t uct_gaudi_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                uct_completion_t *comp);

#endif
