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
 * from UCS's async thread, one short connection per request, and the
 * server never blocks there: connections from other uids are closed at
 * accept, the others are non-blocking, each with its own deadline, and one
 * callback does a bounded amount of work. A slow or hostile peer delays
 * only itself.
 */

#include "gaudi_ipc_proto.h"

#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/time/time_def.h>
#include <ucs/type/status.h>
#include <pthread.h>
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


/* An accepted connection of our uid whose request has not come yet */
typedef struct uct_gaudi_ipc_srv_conn {
    ucs_time_t deadline;  /* closed unanswered after it */
    pid_t      pid;       /* SO_PEERCRED */
} uct_gaudi_ipc_srv_conn_t;


KHASH_MAP_INIT_INT(uct_gaudi_ipc_srv_conns, uct_gaudi_ipc_srv_conn_t);


typedef struct uct_gaudi_ipc_srv {
    int                           fd;       /* listening socket */
    uint64_t                      nonce;    /* random part of its name */
    const uct_gaudi_ipc_srv_ops_t *ops;
    void                          *arg;
    double                        timeout;  /* seconds per request */
    int                           timer_id; /* closes expired connections */
    int                           reserve_fd; /* given up to accept and drop
                                                 a connection when we are out
                                                 of descriptors */
    /* guards conns and revoking; held while a request is served, so the
     * export tables' and the cache's locks are taken inside it */
    pthread_mutex_t               lock;
    khash_t(uct_gaudi_ipc_srv_conns) conns; /* socket -> connection */
    ucs_list_link_t               revoking; /* revocations the free path
                                               stopped waiting for */
} uct_gaudi_ipc_srv_t;


/* Listen on an abstract socket of a fresh random name and serve from the
 * async thread */
ucs_status_t uct_gaudi_ipc_srv_start(uct_gaudi_ipc_srv_t *srv,
                                     const uct_gaudi_ipc_srv_ops_t *ops,
                                     void *arg, double timeout);


void uct_gaudi_ipc_srv_stop(uct_gaudi_ipc_srv_t *srv);


/**
 * Ask process @a pid, serving under @a nonce, for the fd of export
 * {export_id, cookie}; @a srv is ours (its nonce goes with the request).
 *
 * @return UCS_OK with *fd_p; UCS_ERR_UNREACHABLE if nobody serves (the
 *         process is gone) or whoever serves is not @a pid of our uid;
 *         UCS_ERR_REJECTED if it refused (it logs why); UCS_ERR_TIMED_OUT.
 */
ucs_status_t uct_gaudi_ipc_srv_get_fd(const uct_gaudi_ipc_srv_t *srv,
                                      pid_t pid, uint64_t nonce,
                                      uint64_t export_id, uint64_t cookie,
                                      double timeout, int *fd_p);


/* The revocations of one export, sent in parallel, waiting for answers */
typedef struct uct_gaudi_ipc_srv_revocation {
    struct {
        int   sock;
        pid_t pid;
    }        *peers;     /* room for @a max */
    unsigned count;
    unsigned max;
} uct_gaudi_ipc_srv_revocation_t;


/* Room for @a max revocations (without it they are sent unanswered) */
void uct_gaudi_ipc_srv_revocation_init(uct_gaudi_ipc_srv_revocation_t *rev,
                                       unsigned max);


/**
 * Tell process @a pid, serving under @a nonce, that export
 * {export_id, cookie} is going away. Never waits: the request is queued on
 * a non-blocking connection, which joins @a rev to wait for the answer.
 *
 * @return UCS_OK if queued; UCS_ERR_UNREACHABLE if nobody (or somebody else)
 *         serves there, or its backlog is full.
 */
ucs_status_t uct_gaudi_ipc_srv_revoke(const uct_gaudi_ipc_srv_t *srv,
                                      uct_gaudi_ipc_srv_revocation_t *rev,
                                      pid_t pid, uint64_t nonce,
                                      uint64_t export_id, uint64_t cookie);


/**
 * Finish @a rev off the caller's path: wait a short grace for the answers
 * (a live importer answers once it dropped its mapping, and the release
 * that follows then succeeds at once), then leave the unanswered ones to
 * @a srv's timer, which collects their answers until @a timeout from now.
 * So an importer that never answers delays only the release of the memory
 * it holds (deferred, retried), never the caller's free or deregistration.
 */
void uct_gaudi_ipc_srv_revocation_finish(uct_gaudi_ipc_srv_t *srv,
                                         uct_gaudi_ipc_srv_revocation_t *rev,
                                         double timeout);

/* Tests only (NULL otherwise): the random part of the name for bind attempt
 * @a attempt, instead of getrandom(), so that a test can squat the names a
 * server will try */
extern uint64_t (*uct_gaudi_ipc_srv_nonce_hook)(unsigned attempt);

#endif
