/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_SRV_H_
#define UCT_GAUDI_IPC_SRV_H_

/*
 * The per-process fd server of gaudi_ipc (protocol in gaudi_ipc_proto.h):
 * passes exported DMA-BUF fds to peers of the same uid without ptrace
 * rights (SCM_RIGHTS over an abstract UNIX socket), and receives
 * revocations of the exports this process imported. Requests are served
 * from UCS's async thread, one short connection per request.
 */

#include "gaudi_ipc_proto.h"

#include <ucs/type/status.h>
#include <sys/types.h>


typedef struct uct_gaudi_ipc_srv_ops {
    /* GET_FD from @a pid (same uid, checked): return a descriptor to send
     * (closed by the server after sending) or an error status */
    ucs_status_t (*get_fd)(void *arg, const uct_gaudi_ipc_msg_t *msg,
                           pid_t pid, int *fd_p);
    /* REVOKE from @a pid (same uid, and @a pid is the sender) */
    ucs_status_t (*revoke)(void *arg, const uct_gaudi_ipc_msg_t *msg,
                           pid_t pid);
} uct_gaudi_ipc_srv_ops_t;


typedef struct uct_gaudi_ipc_srv {
    int                           fd;       /* listening socket */
    const uct_gaudi_ipc_srv_ops_t *ops;
    void                          *arg;
    double                        timeout;  /* seconds per request */
} uct_gaudi_ipc_srv_t;


/* Listen on this process's abstract socket and serve from the async thread */
ucs_status_t uct_gaudi_ipc_srv_start(uct_gaudi_ipc_srv_t *srv,
                                     const uct_gaudi_ipc_srv_ops_t *ops,
                                     void *arg, double timeout);


void uct_gaudi_ipc_srv_stop(uct_gaudi_ipc_srv_t *srv);


/**
 * Ask process @a pid for the fd of export {export_id, cookie}.
 *
 * @return UCS_OK with *fd_p; UCS_ERR_UNREACHABLE if nobody serves (the
 *         process is gone); UCS_ERR_REJECTED if it refused (it logs why);
 *         UCS_ERR_TIMED_OUT.
 */
ucs_status_t uct_gaudi_ipc_srv_get_fd(pid_t pid, uint64_t export_id,
                                      uint64_t cookie, double timeout,
                                      int *fd_p);


/* Tell process @a pid that export {export_id, cookie} is going away; same
 * statuses as uct_gaudi_ipc_srv_get_fd() */
ucs_status_t uct_gaudi_ipc_srv_revoke(pid_t pid, uint64_t export_id,
                                      uint64_t cookie, double timeout);

#endif
