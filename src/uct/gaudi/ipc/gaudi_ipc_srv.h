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
 * rights (SCM_RIGHTS over pathname UNIX sockets in the rendezvous
 * directory, gaudi_ipc_dir.h), and receives revocations of the exports
 * this process imported, on a socket of their own. Requests are served
 * from UCS's async thread, one short connection per request, and the
 * server never blocks there: only our uid can connect at all (the
 * directory is ours, and SO_PEERCRED is checked), a request that came with
 * its connection is served at once, a connection still silent waits
 * (non-blocking, with its own deadline) only within a cap per peer
 * process and in all, and one callback does a bounded amount of work. A
 * slow or hostile peer delays only itself.
 *
 * The client side (gaudi_ipc_client.c) asks peers for fds, probes whether
 * they still live, and revokes: on a non-blocking connection whose peer's
 * credentials are checked before anything is sent, within a deadline; a
 * revocation that finds the importer's queue full is retried from the
 * server's timer until its deadline.
 */

#include "gaudi_ipc_dir.h"
#include "gaudi_ipc_proto.h"

#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/time/time_def.h>
#include <ucs/type/status.h>
#include <pthread.h>
#include <sys/types.h>


struct uct_gaudi_ipc_srv;

typedef struct uct_gaudi_ipc_srv_ops {
    /* GET_FD (same uid, checked) from the process serving msg->sender:
     * return a descriptor to send (closed by the server after sending) or
     * an error status */
    ucs_status_t (*get_fd)(void *arg, const uct_gaudi_ipc_msg_t *msg,
                           int *fd_p);
    /* REVOKE (same uid) of an export of the process serving msg->sender */
    ucs_status_t (*revoke)(void *arg, const uct_gaudi_ipc_msg_t *msg);
    /* The work of the server's timer besides its own: the revocations our
     * client left to it (uct_gaudi_ipc_srv_revoking_progress; the server
     * itself makes none), at @a now, and all of them at stop with
     * UCS_TIME_INFINITY */
    void         (*tick)(struct uct_gaudi_ipc_srv *srv, ucs_time_t now);
} uct_gaudi_ipc_srv_ops_t;


/* Hash tables keyed by a process's identity */
static inline khint_t uct_gaudi_ipc_srv_id_hash(uct_gaudi_ipc_srv_id_t id)
{
    return kh_int64_hash_func(id.hi ^ id.lo);
}

#define uct_gaudi_ipc_srv_id_hash_equal(_a, _b) \
    uct_gaudi_ipc_srv_id_equal(&(_a), &(_b))


/* The two listening sockets: what a connection to each may ask */
typedef enum {
    UCT_GAUDI_IPC_SRV_REQUESTS,     /* "<id>": GET_FD, liveness probes */
    UCT_GAUDI_IPC_SRV_REVOCATIONS,  /* "<id>.rev": REVOKE */
    UCT_GAUDI_IPC_SRV_LAST
} uct_gaudi_ipc_srv_listener_t;


/* An accepted connection of our uid whose request has not come yet */
typedef struct uct_gaudi_ipc_srv_conn {
    ucs_time_t deadline;  /* closed unanswered after it */
    uint64_t   peer;      /* the peer process (uct_gaudi_ipc_srv_peer()) */
    pid_t      pid;       /* SO_PEERCRED; 0 in a PID namespace we cannot
                             see (another container) */
    int        listener;  /* uct_gaudi_ipc_srv_listener_t */
} uct_gaudi_ipc_srv_conn_t;


KHASH_MAP_INIT_INT(uct_gaudi_ipc_srv_conns, uct_gaudi_ipc_srv_conn_t);


typedef struct uct_gaudi_ipc_srv {
    uct_gaudi_ipc_dir_t           dir;
    uct_gaudi_ipc_entry_t         entry;    /* ours: our identity */
    pid_t                         pid;      /* the process that serves (a
                                               forked child that stops it
                                               leaves it alone) */
    int                           fds[UCT_GAUDI_IPC_SRV_LAST]; /* listening */
    const uct_gaudi_ipc_srv_ops_t *ops;
    void                          *arg;
    double                        timeout;  /* seconds per request */
    int                           timer_id; /* expiry, revocation retries */
    int                           reserve_fd; /* given up to accept and drop
                                                 a connection when we are out
                                                 of descriptors */
    /* guards conns and revoking; held while a silent connection's request
     * is served (stop() waits for it), so the export tables' and the
     * cache's locks are taken inside it, never the other way round */
    pthread_mutex_t               lock;
    khash_t(uct_gaudi_ipc_srv_conns) conns; /* socket -> connection */
    ucs_list_link_t               revoking; /* revocations the free path
                                               stopped waiting for */
} uct_gaudi_ipc_srv_t;


/* Open the rendezvous directory @a dir_path (gaudi_ipc_dir.h), listen on
 * the two entries of a fresh random identity and serve from the async
 * thread */
ucs_status_t uct_gaudi_ipc_srv_start(uct_gaudi_ipc_srv_t *srv,
                                     const uct_gaudi_ipc_srv_ops_t *ops,
                                     void *arg, double timeout,
                                     const char *dir_path);


void uct_gaudi_ipc_srv_stop(uct_gaudi_ipc_srv_t *srv);


/* The name of the entry of fd server @a id: its requests, or its
 * revocations if @a rev; @a name has room for UCT_GAUDI_IPC_ENTRY_NAME_MAX */
void uct_gaudi_ipc_srv_entry_name(const uct_gaudi_ipc_srv_id_t *id, int rev,
                                  char *name);


/**
 * Whether @a peer's entry is in our directory, as @a peer describes it (the
 * inode its process bound). No connection is made.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM if there is no such entry (the directory
 *         is not shared with it, or it exited cleanly); UCS_ERR_UNREACHABLE
 *         if the name is another socket now, or not ours. *reason_p says
 *         which, for log lines.
 */
ucs_status_t uct_gaudi_ipc_srv_check_entry(const uct_gaudi_ipc_srv_t *srv,
                                           const uct_gaudi_ipc_entry_t *peer,
                                           const char **reason_p);


/* Whether the process serving as @a id has a revocation entry in our
 * directory (so that a revocation can reach it) */
int uct_gaudi_ipc_srv_can_revoke(const uct_gaudi_ipc_srv_t *srv,
                                 const uct_gaudi_ipc_srv_id_t *id);


/**
 * Ask the process of @a peer (pid @a pid in its namespace, for log lines)
 * for the fd of export {export_id, cookie}. A queue that stays full costs
 * at most a short part of @a timeout (0.25 s: the connection waits for a
 * place in the kernel); the server's uid is checked before the request is
 * sent; the whole request takes at most @a timeout.
 *
 * @return UCS_OK with *fd_p; UCS_ERR_UNREACHABLE if nobody serves there
 *         (the process is gone, or does not share our directory) or
 *         whoever serves is not of our uid; UCS_ERR_REJECTED if it refused
 *         (it logs why); UCS_ERR_TIMED_OUT.
 */
ucs_status_t uct_gaudi_ipc_srv_get_fd(const uct_gaudi_ipc_srv_t *srv,
                                      const uct_gaudi_ipc_entry_t *peer,
                                      pid_t pid, uint64_t export_id,
                                      uint64_t cookie, double timeout,
                                      int *fd_p);


/* Whether the process of @a peer still serves (its entry is the one it
 * bound, and a connection to it is not refused). Never waits. */
int uct_gaudi_ipc_srv_probe(const uct_gaudi_ipc_srv_t *srv,
                            const uct_gaudi_ipc_entry_t *peer);


/* One revocation sent (or to send) to one importer */
typedef struct uct_gaudi_ipc_srv_rev_peer {
    int                    sock;   /* waits for the answer; -1: the
                                      importer's queue was full, connect
                                      again */
    uct_gaudi_ipc_srv_id_t id;     /* the importer */
} uct_gaudi_ipc_srv_rev_peer_t;


/* The revocations of one export, sent in parallel, waiting for answers */
typedef struct uct_gaudi_ipc_srv_revocation {
    uct_gaudi_ipc_srv_rev_peer_t *peers;   /* room for @a max */
    unsigned                     count;
    unsigned                     max;
    uint64_t                     export_id;
    uint64_t                     cookie;
} uct_gaudi_ipc_srv_revocation_t;


/* Room for @a max revocations of export {export_id, cookie} (without room
 * they are sent unanswered, and not retried) */
void uct_gaudi_ipc_srv_revocation_init(uct_gaudi_ipc_srv_revocation_t *rev,
                                       unsigned max, uint64_t export_id,
                                       uint64_t cookie);


/**
 * Tell the importer serving as @a importer that the export of @a rev is
 * going away. Never waits: the request is queued on a non-blocking
 * connection to its revocation entry, which joins @a rev to wait for the
 * answer; if its queue is full, @a rev retries it.
 *
 * @return UCS_OK if queued or to retry; UCS_ERR_UNREACHABLE if the
 *         importer is gone.
 */
ucs_status_t uct_gaudi_ipc_srv_revoke(const uct_gaudi_ipc_srv_t *srv,
                                      uct_gaudi_ipc_srv_revocation_t *rev,
                                      const uct_gaudi_ipc_srv_id_t *importer);

/* Retry the revocations left to the server's timer whose importer's queue
 * was full, collect the answers that came, give up on those past their
 * deadline (all of them at UCS_TIME_INFINITY). Takes srv->lock. */
void uct_gaudi_ipc_srv_revoking_progress(uct_gaudi_ipc_srv_t *srv,
                                         ucs_time_t now);


/**
 * Finish @a rev off the caller's path: wait a short grace for the answers
 * (a live importer answers once it dropped its mapping, and the release
 * that follows then succeeds at once), retrying the connections that found
 * a full queue, then leave the rest to @a srv's timer, which retries and
 * collects answers until @a timeout from now. So an importer that never
 * answers delays only the release of the memory it holds (deferred,
 * retried), never the caller's free or deregistration.
 */
void uct_gaudi_ipc_srv_revocation_finish(uct_gaudi_ipc_srv_t *srv,
                                         uct_gaudi_ipc_srv_revocation_t *rev,
                                         double timeout);


/* Tests only (NULL otherwise): the identity for bind attempt @a attempt,
 * instead of getrandom(), so that a test can squat the names a server will
 * try */
extern void (*uct_gaudi_ipc_srv_id_hook)(unsigned attempt,
                                         uct_gaudi_ipc_srv_id_t *id);

#endif
