/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_COPY_EP_H_
#define UCT_GAUDI_COPY_EP_H_

#include <uct/gaudi/base/gaudi_iface.h>


typedef struct uct_gaudi_copy_ep {
    uct_base_ep_t          super;
} uct_gaudi_copy_ep_t;


struct uct_gaudi_copy_memh;


/* A zero-copy operation in flight, with the host mappings it took */
typedef struct uct_gaudi_copy_op {
    uct_gaudi_op_t              super;
    unsigned                    num_mapped;
    struct uct_gaudi_copy_memh  *mapped[];   /* up to 2 per iov */
} uct_gaudi_copy_op_t;


UCS_CLASS_DECLARE_NEW_FUNC(uct_gaudi_copy_ep_t, uct_ep_t,
                           const uct_ep_params_t*);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_gaudi_copy_ep_t, uct_ep_t);

/* Host or Gaudi memory <-> Gaudi memory of this process, through the
 * bounce buffer (uct_gaudi_iface_ops_t) */
ucs_status_t uct_gaudi_copy_ep_rma_short(uct_ep_h tl_ep, void *local,
                                         size_t length, uint64_t remote_addr,
                                         uct_rkey_t rkey, int is_put);


/* One DMA submission of the iov's copies; host memory is mapped (through
 * the rcache) for as long as the operation runs (uct_gaudi_iface_ops_t) */
ucs_status_t uct_gaudi_copy_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp,
                                     int is_put);


/* Release the host mappings @a op took (uct_gaudi_iface_ops_t) */
void uct_gaudi_copy_op_release(uct_gaudi_op_t *op);

#endif
