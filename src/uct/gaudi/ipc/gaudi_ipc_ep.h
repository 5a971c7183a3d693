/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_EP_H_
#define UCT_GAUDI_IPC_EP_H_

#include "gaudi_ipc_proto.h"

#include <uct/gaudi/base/gaudi_iface.h>
#include <ucs/type/class.h>
#include <sys/types.h>


typedef struct uct_gaudi_ipc_ep {
    uct_base_ep_t         super;
    uct_gaudi_ipc_entry_t remote;     /* the peer's fd server */
    pid_t                 remote_pid; /* in its namespace: log lines */
    /* reports the peer's failure through UCX's own deferred path */
    uct_keepalive_info_t  keepalive;
} uct_gaudi_ipc_ep_t;


UCS_CLASS_DECLARE_NEW_FUNC(uct_gaudi_ipc_ep_t, uct_ep_t,
                           const uct_ep_params_t*);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_gaudi_ipc_ep_t, uct_ep_t);

/* Short operations: host data through the bounce buffer, Gaudi memory
 * directly, to or from the peer's memory (uct_gaudi_iface_ops_t) */
ucs_status_t uct_gaudi_ipc_ep_rma_short(uct_ep_h tl_ep, void *local,
                                        size_t length, uint64_t remote_addr,
                                        uct_rkey_t rkey, int is_put);

ssize_t uct_gaudi_ipc_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                   void *arg, uint64_t remote_addr,
                                   uct_rkey_t rkey);

ucs_status_t uct_gaudi_ipc_ep_get_bcopy(uct_ep_h tl_ep,
                                        uct_unpack_callback_t unpack_cb,
                                        void *arg, size_t length,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        uct_completion_t *comp);

/* One DMA submission between our Gaudi memory and the peer's imported
 * memory, holding the peer mapping while it runs (uct_gaudi_iface_ops_t) */
ucs_status_t uct_gaudi_ipc_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                    size_t iovcnt, uint64_t remote_addr,
                                    uct_rkey_t rkey, uct_completion_t *comp,
                                    int is_put);

/* Whether @a tl_ep is the endpoint of the process of @a iface_addr
 * (uct_gaudi_iface_ops_t) */
int uct_gaudi_ipc_ep_is_peer(uct_ep_h tl_ep,
                             const uct_iface_addr_t *iface_addr);

ucs_status_t uct_gaudi_ipc_ep_check(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp);

/* Release the peer mapping @a op holds (uct_gaudi_iface_ops_t) */
void uct_gaudi_ipc_op_release(uct_gaudi_op_t *op);

#endif
