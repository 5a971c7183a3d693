/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_SOCK_H_
#define UCT_GAUDI_IPC_SOCK_H_

/*
 * Socket helpers shared by the fd server (gaudi_ipc_srv.c) and its client
 * side (gaudi_ipc_client.c): messages with and without descriptors, the
 * connection to a peer's entry, the peer's credentials.
 */

#include "gaudi_ipc_srv.h"

#include <sys/socket.h>


static inline int uct_gaudi_ipc_msg_is_valid(const uct_gaudi_ipc_msg_t *msg,
                                             ssize_t len)
{
    return (len == sizeof(*msg)) && (msg->magic == UCT_GAUDI_IPC_MSG_MAGIC);
}


void uct_gaudi_ipc_msg_init(const uct_gaudi_ipc_srv_t *srv,
                            uct_gaudi_ipc_msg_t *msg, uint32_t op,
                            uint64_t export_id, uint64_t cookie);


/* Send @a msg, with @a fd attached if >= 0 */
ssize_t uct_gaudi_ipc_sock_send(int sock, const uct_gaudi_ipc_msg_t *msg,
                                int fd);


/* Receive a message that may carry exactly one descriptor (a reply); any
 * other number of them, or a truncated message, is an error (-1, errno
 * EPROTO or EMSGSIZE) and every descriptor that came is closed */
ssize_t uct_gaudi_ipc_sock_recv_fd(int sock, uct_gaudi_ipc_msg_t *msg,
                                   int *fd_p);


/* Receive a request, which carries no descriptor: none is ever installed
 * (-1, errno EPROTO if it had some, EMSGSIZE if it was longer) */
ssize_t uct_gaudi_ipc_sock_recv_request(int sock, uct_gaudi_ipc_msg_t *msg);


/**
 * Connect @a sock to entry @a name of @a srv's directory, once. A UNIX
 * connection completes at once or fails; where the queue is full, a
 * non-blocking @a sock fails at once, a blocking one waits for a place up
 * to its SO_SNDTIMEO.
 *
 * @return UCS_OK; UCS_ERR_NO_RESOURCE if the listener's queue is full (try
 *         again); UCS_ERR_UNREACHABLE if nobody listens there (errno says
 *         why).
 */
ucs_status_t uct_gaudi_ipc_sock_connect(const uct_gaudi_ipc_srv_t *srv,
                                        int sock, const char *name);


/* Whether the process at the other end of @a sock has our effective uid;
 * logs it if not. Its pid in *pid_p (0 if not in our PID namespace). */
int uct_gaudi_ipc_sock_peer_is_ours(int sock, const char *what,
                                    pid_t *pid_p);

#endif
