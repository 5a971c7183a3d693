/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_COPY_EP_H_
#define UCT_GAUDI_COPY_EP_H_

#include <uct/api/uct.h>
#include <uct/base/uct_iface.h>
#include <ucs/type/class.h>


typedef struct uct_gaudi_copy_ep {
    uct_base_ep_t          super;
} uct_gaudi_copy_ep_t;


struct uct_gaudi_copy_iface;
struct uct_gaudi_copy_memh;


/* A zero-copy operation in flight */
typedef struct uct_gaudi_copy_op {
    uct_completion_t            comp;        /* of its DMA submission */
    uct_completion_t            *user_comp;  /* may be NULL */
    struct uct_gaudi_copy_iface *iface;
    unsigned                    num_mapped;
    struct uct_gaudi_copy_memh  *mapped[];   /* host mappings it took */
} uct_gaudi_copy_op_t;


/* A pending request's private data */
typedef struct {
    uct_pending_req_priv_queue_t super;
    uct_ep_h                     ep;
} uct_gaudi_copy_pending_priv_t;


UCS_CLASS_DECLARE_NEW_FUNC(uct_gaudi_copy_ep_t, uct_ep_t,
                           const uct_ep_params_t*);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_gaudi_copy_ep_t, uct_ep_t);

ucs_status_t uct_gaudi_copy_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                         unsigned length, uint64_t remote_addr,
                                         uct_rkey_t rkey);

ucs_status_t uct_gaudi_copy_ep_get_short(uct_ep_h tl_ep, void *buffer,
                                         unsigned length, uint64_t remote_addr,
                                         uct_rkey_t rkey);

ucs_status_t uct_gaudi_copy_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                         size_t iovcnt, uint64_t remote_addr,
                                         uct_rkey_t rkey,
                                         uct_completion_t *comp);

ucs_status_t uct_gaudi_copy_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                         size_t iovcnt, uint64_t remote_addr,
                                         uct_rkey_t rkey,
                                         uct_completion_t *comp);

ucs_status_t uct_gaudi_copy_ep_pending_add(uct_ep_h tl_ep,
                                          uct_pending_req_t *req,
                                          unsigned flags);

void uct_gaudi_copy_ep_pending_purge(uct_ep_h tl_ep,
                                     uct_pending_purge_callback_t cb,
                                     void *arg);

ucs_status_t uct_gaudi_copy_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                     uct_completion_t *comp);

#endif
