/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_sock.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>


/* How long a request may wait for a place in a queue that stays full:
 * a live exporter drains it in microseconds, one of our uid that keeps it
 * full must not cost every unpack the whole timeout */
#define UCT_GAUDI_IPC_CLIENT_CONNECT_BUDGET  0.25

/* How long a free or deregistration waits for its importers' answers
 * before leaving them to the timer: a live importer on the same host
 * answers within microseconds, a hostile or stuck one never */
#define UCT_GAUDI_IPC_CLIENT_REVOKE_GRACE    0.01

/* Unanswered revocations the timer keeps a socket for, in all and per
 * importer: an importer that accepts and never answers must not take all
 * our descriptors. Past these the socket is closed at once (the request is
 * in the importer's socket already: it still gets it). */
#define UCT_GAUDI_IPC_CLIENT_MAX_WAITING        256
#define UCT_GAUDI_IPC_CLIENT_MAX_WAITING_PEER   2

/* Revocations the timer retries (the importer's queue was full), in all and
 * per importer: memory only */
#define UCT_GAUDI_IPC_CLIENT_MAX_RETRY          1024
#define UCT_GAUDI_IPC_CLIENT_MAX_RETRY_PEER     64


/* A revocation left to the server's timer */
typedef struct uct_gaudi_ipc_srv_revoking {
    ucs_list_link_t        list;
    int                    sock;       /* -1: not connected yet */
    uct_gaudi_ipc_srv_id_t id;         /* the importer */
    uint64_t               export_id;
    uint64_t               cookie;
    ucs_time_t             deadline;
} uct_gaudi_ipc_srv_revoking_t;


ucs_status_t uct_gaudi_ipc_srv_check_entry(const uct_gaudi_ipc_srv_t *srv,
                                           const uct_gaudi_ipc_entry_t *peer,
                                           const char **reason_p)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    struct stat st;

    uct_gaudi_ipc_srv_entry_name(&peer->id, 0, name);
    if (uct_gaudi_ipc_dir_stat(&srv->dir, name, &st) != 0) {
        *reason_p = "its fd server has no entry in our directory (the "
                    "directory is not shared with it, or it exited)";
        return (errno == ENOENT) ? UCS_ERR_NO_ELEM : UCS_ERR_UNREACHABLE;
    } else if (!S_ISSOCK(st.st_mode) || (st.st_uid != geteuid())) {
        *reason_p = "the entry of its fd server is not a socket of ours";
        return UCS_ERR_UNREACHABLE;
    } else if ((st.st_ino != peer->ino) ||
               ((uint64_t)st.st_ctim.tv_sec * UCS_NSEC_PER_SEC +
                st.st_ctim.tv_nsec != peer->ctime)) {
        /* a socket bound on the name after the process went */
        *reason_p = "the entry of its fd server is another socket now (the "
                    "process exited)";
        return UCS_ERR_UNREACHABLE;
    }

    *reason_p = "";
    return UCS_OK;
}

int uct_gaudi_ipc_srv_can_revoke(const uct_gaudi_ipc_srv_t *srv,
                                 const uct_gaudi_ipc_srv_id_t *id)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    struct stat st;

    uct_gaudi_ipc_srv_entry_name(id, 1, name);
    return (uct_gaudi_ipc_dir_stat(&srv->dir, name, &st) == 0) &&
           S_ISSOCK(st.st_mode) && (st.st_uid == geteuid());
}

/* The process of @a peer is gone (its entry refuses connections): remove
 * what it left in the directory */
static void uct_gaudi_ipc_client_forget(const uct_gaudi_ipc_srv_t *srv,
                                        const uct_gaudi_ipc_srv_id_t *id)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    int i;

    for (i = 0; i < UCT_GAUDI_IPC_SRV_LAST; ++i) {
        uct_gaudi_ipc_srv_entry_name(id, i, name);
        uct_gaudi_ipc_dir_unlink(&srv->dir, name);
    }
}

/*
 * A connection to entry @a name, waiting while its queue is full until
 * @a deadline. The kernel does the waiting (a blocking connect bounded by
 * SO_SNDTIMEO): it wakes us the moment the server accepts one. A loop that
 * sleeps between non-blocking tries finds the queue full whenever another
 * process of our uid keeps connecting, and gives up although the server
 * keeps accepting (seen: every try of 0.25 s lost to a flood of 37000
 * connections per second).
 */
static ucs_status_t uct_gaudi_ipc_client_connect(const uct_gaudi_ipc_srv_t *srv,
                                                 const char *name,
                                                 ucs_time_t deadline,
                                                 int *sock_p)
{
    ucs_status_t status;
    struct timeval tv;
    ucs_time_t now;
    int sock, err;

    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
        return UCS_ERR_IO_ERROR;
    }

    do {
        now = ucs_get_time();
        if (now >= deadline) {
            status = UCS_ERR_TIMED_OUT;
            break;
        }

        /* a zero timeout would be no timeout at all: 1 us at least */
        ucs_sec_to_timeval(ucs_max(ucs_time_to_sec(deadline - now), 1e-6),
                           &tv);
        if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
            err = errno;
            ucs_error("gaudi_ipc: failed to set a connect timeout: %m");
            errno  = err;
            status = UCS_ERR_IO_ERROR;
            break;
        }

        /* full still at the timeout: EAGAIN (NO_RESOURCE); a signal: EINTR
         * before anything was connected, so the same socket tries again */
        status = uct_gaudi_ipc_sock_connect(srv, sock, name);
    } while ((status == UCS_ERR_NO_RESOURCE) ||
             ((status == UCS_ERR_UNREACHABLE) && (errno == EINTR)));

    if (status != UCS_OK) {
        err = errno;
        close(sock);
        errno = err;    /* the caller names the reason */
        return status;
    }

    /* what we send and receive on it never waits (MSG_DONTWAIT) */
    *sock_p = sock;
    return UCS_OK;
}

/* Wait until @a sock is readable or @a deadline */
static int uct_gaudi_ipc_client_wait(int sock, ucs_time_t deadline)
{
    struct pollfd pfd = {sock, POLLIN, 0};
    ucs_time_t now;
    int ret;

    while ((now = ucs_get_time()) < deadline) {
        ret = poll(&pfd, 1, (int)ucs_time_to_msec(deadline - now) + 1);
        if (ret > 0) {
            return 1;
        } else if ((ret < 0) && (errno != EINTR)) {
            return 0;
        }
    }

    return 0;
}

/* Ask the fd server connected at @a sock for export {export_id, cookie};
 * its descriptor in @a fd_p */
static ucs_status_t
uct_gaudi_ipc_client_request_fd(const uct_gaudi_ipc_srv_t *srv, int sock,
                                pid_t pid, uint64_t export_id,
                                uint64_t cookie, ucs_time_t deadline,
                                double timeout, int *fd_p)
{
    uct_gaudi_ipc_msg_t msg, reply;
    ucs_status_t status;
    pid_t server_pid;
    ssize_t len;
    int fd;

    /* nothing goes to a server before we know it is of our uid */
    if (!uct_gaudi_ipc_sock_peer_is_ours(sock, "the fd server", &server_pid)) {
        return UCS_ERR_UNREACHABLE;
    }

    uct_gaudi_ipc_msg_init(srv, &msg, UCT_GAUDI_IPC_MSG_GET_FD, export_id,
                           cookie);
    if (uct_gaudi_ipc_sock_send(sock, &msg, -1) != sizeof(msg)) {
        ucs_diag("gaudi_ipc: failed to send to pid %d: %m", (int)pid);
        return UCS_ERR_UNREACHABLE;
    }

    if (!uct_gaudi_ipc_client_wait(sock, deadline)) {
        ucs_error("gaudi_ipc: pid %d did not answer in %.1f s", (int)pid,
                  timeout);
        return UCS_ERR_TIMED_OUT;
    }

    len = uct_gaudi_ipc_sock_recv_fd(sock, &reply, &fd);
    if (!uct_gaudi_ipc_msg_is_valid(&reply, len) ||
        (reply.op != UCT_GAUDI_IPC_MSG_GET_FD) ||
        (reply.export_id != export_id)) {
        /* e.g. closed without an answer: it refused a malformed request */
        ucs_debug("gaudi_ipc: no valid answer from pid %d (%zd bytes)",
                  (int)pid, len);
        status = UCS_ERR_UNREACHABLE;
    } else {
        status = (ucs_status_t)reply.status;
    }

    if (fd >= 0) {
        if (status == UCS_OK) {
            *fd_p = fd;
        } else {
            close(fd);
        }
    } else if (status == UCS_OK) {
        ucs_error("gaudi_ipc: pid %d answered without a descriptor",
                  (int)pid);
        status = UCS_ERR_IO_ERROR;
    }

    return status;
}

ucs_status_t uct_gaudi_ipc_srv_get_fd(const uct_gaudi_ipc_srv_t *srv,
                                      const uct_gaudi_ipc_entry_t *peer,
                                      pid_t pid, uint64_t export_id,
                                      uint64_t cookie, double timeout,
                                      int *fd_p)
{
    ucs_time_t start    = ucs_get_time();
    ucs_time_t deadline = start + ucs_time_from_sec(timeout);
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    double budget       = ucs_min(timeout,
                                  UCT_GAUDI_IPC_CLIENT_CONNECT_BUDGET);
    const char *reason;
    ucs_status_t status;
    int sock, err;

    status = uct_gaudi_ipc_srv_check_entry(srv, peer, &reason);
    if (status != UCS_OK) {
        ucs_diag("gaudi_ipc: cannot reach pid %d: %s", (int)pid, reason);
        return UCS_ERR_UNREACHABLE;
    }

    uct_gaudi_ipc_srv_entry_name(&peer->id, 0, name);
    status = uct_gaudi_ipc_client_connect(srv, name,
                                          start + ucs_time_from_sec(budget),
                                          &sock);
    if (status == UCS_ERR_TIMED_OUT) {
        ucs_diag("gaudi_ipc: the queue of pid %d's fd server stayed full for "
                 "%.2f s", (int)pid, budget);
        return UCS_ERR_TIMED_OUT;
    } else if (status != UCS_OK) {
        err = errno;
        ucs_diag("gaudi_ipc: cannot reach pid %d at %s/%s: %s", (int)pid,
                 srv->dir.path, name, strerror(err));
        if (err == ECONNREFUSED) {
            uct_gaudi_ipc_client_forget(srv, &peer->id);
        }
        return UCS_ERR_UNREACHABLE;
    }

    status = uct_gaudi_ipc_client_request_fd(srv, sock, pid, export_id,
                                             cookie, deadline, timeout, fd_p);
    close(sock);
    return status;
}

int uct_gaudi_ipc_srv_probe(const uct_gaudi_ipc_srv_t *srv,
                            const uct_gaudi_ipc_entry_t *peer)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    ucs_status_t status;
    const char *reason;
    int sock, err;

    if (uct_gaudi_ipc_srv_check_entry(srv, peer, &reason) != UCS_OK) {
        ucs_debug("gaudi_ipc: peer %016" PRIx64 "%016" PRIx64 " is gone: %s",
                  peer->id.hi, peer->id.lo, reason);
        return 0;
    }

    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        return 1;   /* we cannot tell: not dead */
    }

    /* a full queue is a live one; only nobody listening is an answer */
    uct_gaudi_ipc_srv_entry_name(&peer->id, 0, name);
    status = uct_gaudi_ipc_sock_connect(srv, sock, name);
    err    = errno;
    close(sock);
    if (status != UCS_ERR_UNREACHABLE) {
        return 1;
    }

    ucs_debug("gaudi_ipc: peer %016" PRIx64 "%016" PRIx64 " is gone: %s",
              peer->id.hi, peer->id.lo, strerror(err));
    if (err == ECONNREFUSED) {
        uct_gaudi_ipc_client_forget(srv, &peer->id);
    }
    return 0;
}

void uct_gaudi_ipc_srv_revocation_init(uct_gaudi_ipc_srv_revocation_t *rev,
                                       unsigned max, uint64_t export_id,
                                       uint64_t cookie)
{
    rev->count     = 0;
    rev->max       = max;
    rev->export_id = export_id;
    rev->cookie    = cookie;
    rev->peers     = (max == 0) ? NULL :
                     ucs_malloc(max * sizeof(*rev->peers), "gaudi_ipc_revoke");
    if (rev->peers == NULL) {
        rev->max = 0;
    }
}

/* Connect to importer @a id's revocation entry and queue the REVOKE there
 * (it reads it even if we close first): UCS_OK with *sock_p to wait for the
 * answer on; UCS_ERR_NO_RESOURCE if its queue is full (try again);
 * UCS_ERR_UNREACHABLE if it is gone */
static ucs_status_t
uct_gaudi_ipc_client_revoke_send(const uct_gaudi_ipc_srv_t *srv,
                                 const uct_gaudi_ipc_srv_id_t *id,
                                 uint64_t export_id, uint64_t cookie,
                                 int *sock_p)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    uct_gaudi_ipc_msg_t msg;
    ucs_status_t status;
    pid_t pid;
    int sock;

    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
        return UCS_ERR_NO_RESOURCE;
    }

    uct_gaudi_ipc_srv_entry_name(id, 1, name);
    status = uct_gaudi_ipc_sock_connect(srv, sock, name);
    if (status != UCS_OK) {
        if (status == UCS_ERR_UNREACHABLE) {
            ucs_debug("gaudi_ipc: cannot reach importer %s/%s: %m",
                      srv->dir.path, name);
        }
        goto err_close;
    }

    if (!uct_gaudi_ipc_sock_peer_is_ours(sock, "an importer", &pid)) {
        status = UCS_ERR_UNREACHABLE;
        goto err_close;
    }

    uct_gaudi_ipc_msg_init(srv, &msg, UCT_GAUDI_IPC_MSG_REVOKE, export_id,
                           cookie);
    if (uct_gaudi_ipc_sock_send(sock, &msg, -1) != sizeof(msg)) {
        ucs_debug("gaudi_ipc: failed to send to importer %s: %m", name);
        status = UCS_ERR_UNREACHABLE;
        goto err_close;
    }

    *sock_p = sock;
    return UCS_OK;

err_close:
    close(sock);
    return status;
}

ucs_status_t uct_gaudi_ipc_srv_revoke(const uct_gaudi_ipc_srv_t *srv,
                                      uct_gaudi_ipc_srv_revocation_t *rev,
                                      const uct_gaudi_ipc_srv_id_t *importer)
{
    ucs_status_t status;
    int sock = -1;

    status = uct_gaudi_ipc_client_revoke_send(srv, importer, rev->export_id,
                                              rev->cookie, &sock);
    if (status == UCS_ERR_UNREACHABLE) {
        return status;
    }

    if (rev->count < rev->max) {
        rev->peers[rev->count].sock = sock;  /* -1: retried */
        rev->peers[rev->count].id   = *importer;
        ++rev->count;
    } else if (sock >= 0) {
        close(sock);
    } else {
        ucs_diag("gaudi_ipc: the revocation of export %" PRIu64 " found "
                 "an importer's queue full, and cannot be retried",
                 rev->export_id);
    }
    return UCS_OK;
}

/* The answer to a revocation came on @a sock (or it closed): log it */
static void uct_gaudi_ipc_client_answer(int sock, uint64_t export_id)
{
    uct_gaudi_ipc_msg_t reply;
    ssize_t len;
    int fd;

    len = uct_gaudi_ipc_sock_recv_fd(sock, &reply, &fd);
    if (fd >= 0) {
        close(fd);
    }

    ucs_debug("gaudi_ipc: pid %d answered the revocation of export %" PRIu64
              ": %s", uct_gaudi_ipc_msg_is_valid(&reply, len) ? reply.pid : 0,
              export_id, uct_gaudi_ipc_msg_is_valid(&reply, len) ?
              ucs_status_string((ucs_status_t)reply.status) : "(closed)");
}

static int uct_gaudi_ipc_client_answered(int sock)
{
    struct pollfd pfd = {sock, POLLIN, 0};

    return (poll(&pfd, 1, 0) > 0) && (pfd.revents != 0);
}

/* How many revocations to @a id the timer keeps, waiting for an answer
 * and to retry, and in all; srv->lock held */
static void
uct_gaudi_ipc_client_revoking_count(uct_gaudi_ipc_srv_t *srv,
                                    const uct_gaudi_ipc_srv_id_t *id,
                                    unsigned *waiting, unsigned *waiting_peer,
                                    unsigned *retry, unsigned *retry_peer)
{
    uct_gaudi_ipc_srv_revoking_t *r;
    int same;

    *waiting = *waiting_peer = *retry = *retry_peer = 0;
    ucs_list_for_each(r, &srv->revoking, list) {
        same = uct_gaudi_ipc_srv_id_equal(&r->id, id);
        if (r->sock >= 0) {
            ++*waiting;
            *waiting_peer += same;
        } else {
            ++*retry;
            *retry_peer += same;
        }
    }
}

/* Whether the timer may keep a revocation to @a id, connected (@a sock)
 * or to retry; srv->lock held */
static int uct_gaudi_ipc_client_revoking_room(uct_gaudi_ipc_srv_t *srv,
                                              const uct_gaudi_ipc_srv_id_t *id,
                                              int sock)
{
    unsigned waiting, waiting_peer, retry, retry_peer;

    uct_gaudi_ipc_client_revoking_count(srv, id, &waiting, &waiting_peer,
                                        &retry, &retry_peer);
    return (sock >= 0) ?
           ((waiting < UCT_GAUDI_IPC_CLIENT_MAX_WAITING) &&
            (waiting_peer < UCT_GAUDI_IPC_CLIENT_MAX_WAITING_PEER)) :
           ((retry < UCT_GAUDI_IPC_CLIENT_MAX_RETRY) &&
            (retry_peer < UCT_GAUDI_IPC_CLIENT_MAX_RETRY_PEER));
}

void uct_gaudi_ipc_srv_revoking_progress(uct_gaudi_ipc_srv_t *srv,
                                         ucs_time_t now)
{
    uct_gaudi_ipc_srv_revoking_t *r, *tmp;
    ucs_status_t status;
    int sock;

    pthread_mutex_lock(&srv->lock);
    ucs_list_for_each_safe(r, tmp, &srv->revoking, list) {
        if (r->sock >= 0) {
            if (uct_gaudi_ipc_client_answered(r->sock)) {
                uct_gaudi_ipc_client_answer(r->sock, r->export_id);
            } else if (r->deadline > now) {
                continue;
            } else {
                ucs_diag("gaudi_ipc: an importer did not answer the "
                         "revocation of export %" PRIu64 " in %.1f s: the "
                         "release of the memory waits for it", r->export_id,
                         srv->timeout);
            }
            close(r->sock);
        } else if (r->deadline <= now) {
            ucs_diag("gaudi_ipc: the revocation of export %" PRIu64 " did "
                     "not get through to an importer in %.1f s (its queue "
                     "stayed full): the release of the memory waits for it",
                     r->export_id, srv->timeout);
        } else {
            status = uct_gaudi_ipc_client_revoke_send(srv, &r->id,
                                                      r->export_id, r->cookie,
                                                      &sock);
            if (status == UCS_ERR_NO_RESOURCE) {
                continue;
            } else if (status == UCS_OK) {
                /* in the importer's socket now: wait for the answer if we
                 * may keep one more socket for it */
                ucs_list_del(&r->list);
                if (uct_gaudi_ipc_client_revoking_room(srv, &r->id, sock)) {
                    r->sock = sock;
                    ucs_list_add_tail(&srv->revoking, &r->list);
                    continue;
                }
                close(sock);
                ucs_free(r);
                continue;
            }
        }

        ucs_list_del(&r->list);
        ucs_free(r);
    }
    pthread_mutex_unlock(&srv->lock);
}

/* Leave @a peer's revocation to the timer, if it may keep it; srv->lock
 * held */
static void
uct_gaudi_ipc_client_leave(uct_gaudi_ipc_srv_t *srv,
                           const uct_gaudi_ipc_srv_revocation_t *rev,
                           const uct_gaudi_ipc_srv_rev_peer_t *peer,
                           ucs_time_t deadline)
{
    uct_gaudi_ipc_srv_revoking_t *r = NULL;

    if ((srv->fds[UCT_GAUDI_IPC_SRV_REQUESTS] >= 0) &&
        uct_gaudi_ipc_client_revoking_room(srv, &peer->id, peer->sock)) {
        r = ucs_malloc(sizeof(*r), "gaudi_ipc_revoking");
    }

    if (r == NULL) {
        ucs_diag("gaudi_ipc: an importer %s the revocation of export %"
                 PRIu64 " in time: not waited for",
                 (peer->sock >= 0) ? "did not answer" : "could not take",
                 rev->export_id);
        if (peer->sock >= 0) {
            close(peer->sock);
        }
        return;
    }

    r->sock      = peer->sock;
    r->id        = peer->id;
    r->export_id = rev->export_id;
    r->cookie    = rev->cookie;
    r->deadline  = deadline;
    ucs_list_add_tail(&srv->revoking, &r->list);
}

void uct_gaudi_ipc_srv_revocation_finish(uct_gaudi_ipc_srv_t *srv,
                                         uct_gaudi_ipc_srv_revocation_t *rev,
                                         double timeout)
{
    double grace        = ucs_min(timeout, UCT_GAUDI_IPC_CLIENT_REVOKE_GRACE);
    ucs_time_t start    = ucs_get_time();
    ucs_time_t deadline = start + ucs_time_from_sec(grace);
    uct_gaudi_ipc_srv_rev_peer_t *peer;
    struct pollfd *pfds;
    unsigned i, pending;
    ucs_status_t status;
    int ret;

    pfds = (rev->count == 0) ? NULL :
           ucs_malloc(rev->count * sizeof(*pfds), "gaudi_ipc_revoke_poll");
    for (i = 0; (pfds != NULL) && (i < rev->count); ++i) {
        pfds[i].fd      = rev->peers[i].sock;
        pfds[i].events  = POLLIN;
        pfds[i].revents = 0;
    }

    /* every importer answers or is retried (a full queue is drained in
     * microseconds when its owner is alive) until the grace is over */
    pending = (pfds != NULL) ? rev->count : 0;
    while ((pending > 0) && (ucs_get_time() < deadline)) {
        ret = poll(pfds, rev->count, 1);
        if ((ret < 0) && (errno != EINTR)) {
            ucs_diag("gaudi_ipc: poll failed: %m");
            break;
        }

        for (i = 0; i < rev->count; ++i) {
            peer = &rev->peers[i];
            if ((peer->sock >= 0) && (pfds[i].revents != 0)) {
                uct_gaudi_ipc_client_answer(peer->sock, rev->export_id);
                close(peer->sock);
            } else if (peer->sock == -1) {
                status = uct_gaudi_ipc_client_revoke_send(srv, &peer->id,
                                                          rev->export_id,
                                                          rev->cookie,
                                                          &peer->sock);
                if (status == UCS_OK) {
                    pfds[i].fd = peer->sock;
                    continue;
                } else if (status == UCS_ERR_NO_RESOURCE) {
                    continue;
                }
            } else {
                continue;
            }

            peer->sock = -2;    /* done: poll skips it from now on */
            pfds[i].fd = -1;
            --pending;
        }
    }

    /* the rest: the server's timer retries and waits for them, not the
     * caller */
    pthread_mutex_lock(&srv->lock);
    for (i = 0; i < rev->count; ++i) {
        if ((pfds == NULL) || (rev->peers[i].sock != -2)) {
            uct_gaudi_ipc_client_leave(srv, rev, &rev->peers[i],
                                       start + ucs_time_from_sec(timeout));
        }
    }
    pthread_mutex_unlock(&srv->lock);

    ucs_free(pfds);
    ucs_free(rev->peers);
    rev->peers = NULL;
    rev->count = 0;
    rev->max   = 0;
}
