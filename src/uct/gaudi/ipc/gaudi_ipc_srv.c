/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_sock.h"

#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>


/* Identities tried before giving up: a name taken is a collision (or a
 * process of our uid squatting it) each time */
#define UCT_GAUDI_IPC_SRV_BIND_ATTEMPTS  8

/* Connections accepted from one listener by one callback: the rest wait in
 * the backlog (the listening socket stays readable, so we are called again
 * after the other handlers of the async thread had their turn) */
#define UCT_GAUDI_IPC_SRV_ACCEPT_BURST   16

/* The queues of connections not accepted yet. Requests: short, because a
 * request waits behind all of its queue (accepted in order), and one that
 * a flood of our uid keeps full would hold it for SOMAXCONN (4096)
 * accepts; a client that finds it full waits in the kernel, which wakes it
 * at the next accept. Revocations: long, for bursts (their makers do not
 * wait: the timer retries them). */
#define UCT_GAUDI_IPC_SRV_REQ_BACKLOG    64

/* Silent connections a peer process may keep at once, at the requests'
 * and at the revocations' socket (its own requests come with their
 * connection: a silent one is slow or hostile), and all peers together;
 * past that, the oldest silent connection goes */
#define UCT_GAUDI_IPC_SRV_CONNS_PER_PEER_REQ  4
#define UCT_GAUDI_IPC_SRV_CONNS_PER_PEER_REV  2
#define UCT_GAUDI_IPC_SRV_MAX_CONNS           128

/* Most often the timer runs: it retries revocations that found a full
 * queue, so not much less often than a free's importers need them */
#define UCT_GAUDI_IPC_SRV_MAX_TICK       0.1

/* Linux 6.5: the peer's pidfd (older headers do not have it) */
#ifndef SO_PEERPIDFD
#  define SO_PEERPIDFD 77
#endif

void (*uct_gaudi_ipc_srv_id_hook)(unsigned attempt,
                                  uct_gaudi_ipc_srv_id_t *id) = NULL;

static const char *uct_gaudi_ipc_srv_listener_names[] = {
    [UCT_GAUDI_IPC_SRV_REQUESTS]    = "requests",
    [UCT_GAUDI_IPC_SRV_REVOCATIONS] = "revocations"
};


void uct_gaudi_ipc_srv_entry_name(const uct_gaudi_ipc_srv_id_t *id, int rev,
                                  char *name)
{
    snprintf(name, UCT_GAUDI_IPC_ENTRY_NAME_MAX, "%016" PRIx64 "%016" PRIx64
             "%s", id->hi, id->lo, rev ? UCT_GAUDI_IPC_REV_SUFFIX : "");
}

/*
 * Which process a connection comes from, to cap each one: its pid where we
 * see it; a process in another PID namespace (another container) has none
 * here (0), and is told apart by the inode of its pidfd where pidfds have
 * inodes of their own (Linux 6.9); else all such count as one.
 */
static uint64_t uct_gaudi_ipc_srv_peer(int sock, pid_t pid)
{
    socklen_t len = sizeof(int);
    struct stat st;
    int pidfd, ret;

    if (pid != 0) {
        return (uint64_t)pid;
    }

    if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) {
        return 0;
    }

    ret = fstat(pidfd, &st);
    close(pidfd);
    return (ret == 0) ? (UCS_BIT(63) | st.st_ino) : 0;
}

/* Answer request @a msg (@a len bytes, errno @a err if negative) that
 * arrived on @a sock at @a listener; the caller closes @a sock */
static void uct_gaudi_ipc_srv_serve(uct_gaudi_ipc_srv_t *srv, int sock,
                                    int listener, pid_t pid,
                                    const uct_gaudi_ipc_msg_t *msg,
                                    ssize_t len, int err)
{
    uct_gaudi_ipc_msg_t reply;
    ucs_status_t status;
    int fd;

    if (len == 0) {
        /* a liveness probe (or a peer that changed its mind) */
        ucs_trace("gaudi_ipc: pid %d closed its connection without a "
                  "request", (int)pid);
        return;
    } else if (!uct_gaudi_ipc_msg_is_valid(msg, len)) {
        ucs_diag("gaudi_ipc: refused a malformed request (%zd bytes%s) "
                 "from pid %d", len,
                 ((len < 0) && (err == EPROTO)) ? ", with descriptors" :
                 ((len < 0) && (err == EMSGSIZE)) ?
                 ", longer than a request" : "", (int)pid);
        return;
    }

    reply        = *msg;
    reply.sender = srv->entry.id;
    reply.pid    = getpid();
    fd           = -1;
    if ((listener == UCT_GAUDI_IPC_SRV_REQUESTS) &&
        (msg->op == UCT_GAUDI_IPC_MSG_GET_FD)) {
        status = srv->ops->get_fd(srv->arg, msg, &fd);
    } else if ((listener == UCT_GAUDI_IPC_SRV_REVOCATIONS) &&
               (msg->op == UCT_GAUDI_IPC_MSG_REVOKE)) {
        status = srv->ops->revoke(srv->arg, msg);
    } else {
        ucs_diag("gaudi_ipc: refused request %u from pid %d at the %s "
                 "socket", msg->op, (int)pid,
                 uct_gaudi_ipc_srv_listener_names[listener]);
        status = UCS_ERR_REJECTED;
    }

    /* a fresh connection has room for one reply: never waits */
    reply.status = status;
    if (uct_gaudi_ipc_sock_send(sock, &reply, fd) != sizeof(reply)) {
        ucs_diag("gaudi_ipc: failed to answer pid %d: %m", (int)pid);
    }

    if (fd >= 0) {
        close(fd);
    }
}

/* Forget connection @a sock and close it; srv->lock held */
static void uct_gaudi_ipc_srv_conn_close(uct_gaudi_ipc_srv_t *srv, int sock)
{
    khiter_t iter = kh_get(uct_gaudi_ipc_srv_conns, &srv->conns, sock);

    ucs_assert(iter != kh_end(&srv->conns));
    kh_del(uct_gaudi_ipc_srv_conns, &srv->conns, iter);
    ucs_async_remove_handler(sock, 0);
    close(sock);
}

/* The request (or the close) of a connection that was silent at accept */
static void uct_gaudi_ipc_srv_conn_event(int sock,
                                         ucs_event_set_types_t events,
                                         void *arg)
{
    uct_gaudi_ipc_srv_t *srv = arg;
    uct_gaudi_ipc_srv_conn_t conn;
    uct_gaudi_ipc_msg_t msg;
    khiter_t iter;
    ssize_t len;
    int err;

    /* handlers run on UCS's one async thread, one at a time; the lock is
     * against stop() and the timer's expiry */
    pthread_mutex_lock(&srv->lock);
    iter = kh_get(uct_gaudi_ipc_srv_conns, &srv->conns, sock);
    if (iter == kh_end(&srv->conns)) {
        /* closed by stop or expired meanwhile */
        pthread_mutex_unlock(&srv->lock);
        return;
    }

    conn = kh_val(&srv->conns, iter);
    len  = uct_gaudi_ipc_sock_recv_request(sock, &msg);
    err  = errno;
    if ((len < 0) && ((err == EAGAIN) || (err == EWOULDBLOCK))) {
        pthread_mutex_unlock(&srv->lock);
        return;     /* not yet: it waits until its deadline */
    }

    /* served under the lock: stop() waits for it before the MD goes */
    uct_gaudi_ipc_srv_serve(srv, sock, conn.listener, conn.pid, &msg, len,
                            err);
    uct_gaudi_ipc_srv_conn_close(srv, sock);
    pthread_mutex_unlock(&srv->lock);
}

/* Make room for a silent connection of @a peer at @a listener: if it keeps
 * its share already, its oldest silent connection there goes (its newest
 * is the one most likely to carry a request soon); if all are taken, the
 * oldest of anyone. srv->lock held. */
static void uct_gaudi_ipc_srv_conn_room(uct_gaudi_ipc_srv_t *srv, int listener,
                                        uint64_t peer)
{
    unsigned cap = (listener == UCT_GAUDI_IPC_SRV_REQUESTS) ?
                   UCT_GAUDI_IPC_SRV_CONNS_PER_PEER_REQ :
                   UCT_GAUDI_IPC_SRV_CONNS_PER_PEER_REV;
    ucs_time_t oldest_deadline = UCS_TIME_INFINITY;
    ucs_time_t peer_deadline   = UCS_TIME_INFINITY;
    int sock, oldest = -1, peer_oldest = -1;
    uct_gaudi_ipc_srv_conn_t conn;
    unsigned of_peer = 0;
    int victim;

    kh_foreach(&srv->conns, sock, conn, {
        if ((conn.peer == peer) && (conn.listener == listener)) {
            ++of_peer;
            if (conn.deadline < peer_deadline) {
                peer_deadline = conn.deadline;
                peer_oldest   = sock;
            }
        }
        if (conn.deadline < oldest_deadline) {
            oldest_deadline = conn.deadline;
            oldest          = sock;
        }
    })

    if (of_peer >= cap) {
        victim = peer_oldest;
    } else if (kh_size(&srv->conns) >= UCT_GAUDI_IPC_SRV_MAX_CONNS) {
        victim = oldest;
    } else {
        return;
    }

    ucs_diag("gaudi_ipc: closing a silent connection of pid %d to the %s "
             "socket: %s", (int)kh_val(&srv->conns,
                                       kh_get(uct_gaudi_ipc_srv_conns,
                                              &srv->conns, victim)).pid,
             uct_gaudi_ipc_srv_listener_names[
                     kh_val(&srv->conns,
                            kh_get(uct_gaudi_ipc_srv_conns, &srv->conns,
                                   victim)).listener],
             (of_peer >= cap) ?
             "its process opened a newer one past its share" :
             "all places are taken, it is the oldest");
    uct_gaudi_ipc_srv_conn_close(srv, victim);
}

/* A new connection at @a listener: its request now if it came with it,
 * else keep it until the request comes (or close it at once) */
static void uct_gaudi_ipc_srv_conn_add(uct_gaudi_ipc_srv_t *srv, int sock,
                                       int listener)
{
    uct_gaudi_ipc_msg_t msg;
    ucs_status_t status;
    khiter_t iter;
    uint64_t peer;
    ssize_t len;
    pid_t pid;
    int ret, err;

    if (!uct_gaudi_ipc_sock_peer_is_ours(sock, "a connecting process",
                                         &pid)) {
        /* nothing of ours is for other users: not even a reply */
        goto out_close;
    }

    len = uct_gaudi_ipc_sock_recv_request(sock, &msg);
    err = errno;
    if ((len >= 0) || ((err != EAGAIN) && (err != EWOULDBLOCK))) {
        uct_gaudi_ipc_srv_serve(srv, sock, listener, pid, &msg, len, err);
        goto out_close;
    }

    peer = uct_gaudi_ipc_srv_peer(sock, pid);
    pthread_mutex_lock(&srv->lock);
    uct_gaudi_ipc_srv_conn_room(srv, listener, peer);
    iter = kh_put(uct_gaudi_ipc_srv_conns, &srv->conns, sock, &ret);
    if (ret < 0) {
        goto out_unlock_close;
    }

    kh_val(&srv->conns, iter).pid      = pid;
    kh_val(&srv->conns, iter).peer     = peer;
    kh_val(&srv->conns, iter).listener = listener;
    kh_val(&srv->conns, iter).deadline = ucs_get_time() +
                                         ucs_time_from_sec(srv->timeout);
    status = ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK, sock,
                                         UCS_EVENT_SET_EVREAD,
                                         uct_gaudi_ipc_srv_conn_event, srv,
                                         NULL);
    if (status != UCS_OK) {
        kh_del(uct_gaudi_ipc_srv_conns, &srv->conns, iter);
        ucs_diag("gaudi_ipc: failed to watch a connection from pid %d: %s",
                 (int)pid, ucs_status_string(status));
        goto out_unlock_close;
    }
    pthread_mutex_unlock(&srv->lock);
    return;

out_unlock_close:
    pthread_mutex_unlock(&srv->lock);
out_close:
    close(sock);
}

/*
 * Out of descriptors: the connection waiting in the backlog keeps the
 * listening socket readable, and UCS's async thread (level-triggered) would
 * call us again at once, forever. Give up the reserve descriptor to accept
 * it, drop it, and take the reserve back (the way libev and nginx do).
 */
static void uct_gaudi_ipc_srv_drop_one(uct_gaudi_ipc_srv_t *srv, int listener)
{
    int sock;

    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
        srv->reserve_fd = -1;
    }

    sock = accept4(srv->fds[listener], NULL, NULL, SOCK_CLOEXEC);
    if (sock >= 0) {
        close(sock);
    }

    srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ucs_diag("gaudi_ipc: out of descriptors: %s a connection to the fd "
             "server", (sock >= 0) ? "dropped" : "could not accept");
}

static void uct_gaudi_ipc_srv_accept(uct_gaudi_ipc_srv_t *srv, int listener)
{
    unsigned i;
    int sock;

    for (i = 0; i < UCT_GAUDI_IPC_SRV_ACCEPT_BURST; ++i) {
        sock = accept4(srv->fds[listener], NULL, NULL,
                       SOCK_CLOEXEC | SOCK_NONBLOCK);
        if ((sock < 0) && ((errno == EMFILE) || (errno == ENFILE))) {
            uct_gaudi_ipc_srv_drop_one(srv, listener);
            break;
        } else if (sock < 0) {
            if ((errno != EAGAIN) && (errno != EWOULDBLOCK)) {
                ucs_diag("gaudi_ipc: accept failed: %m");
            }
            break;
        }

        uct_gaudi_ipc_srv_conn_add(srv, sock, listener);
    }
}

/* Either listener is readable: revocations first, whichever it is (they
 * release memory a free is waiting for) */
static void uct_gaudi_ipc_srv_event(int fd, ucs_event_set_types_t events,
                                    void *arg)
{
    uct_gaudi_ipc_srv_t *srv = arg;

    uct_gaudi_ipc_srv_accept(srv, UCT_GAUDI_IPC_SRV_REVOCATIONS);
    if (fd == srv->fds[UCT_GAUDI_IPC_SRV_REQUESTS]) {
        uct_gaudi_ipc_srv_accept(srv, UCT_GAUDI_IPC_SRV_REQUESTS);
    }
}

/* Close the connections whose request did not come in time; retry and
 * collect the revocations left to us */
static void uct_gaudi_ipc_srv_timer(int id, ucs_event_set_types_t events,
                                    void *arg)
{
    uct_gaudi_ipc_srv_t *srv = arg;
    ucs_time_t now           = ucs_get_time();
    uct_gaudi_ipc_srv_conn_t conn;
    int sock;

    pthread_mutex_lock(&srv->lock);
    kh_foreach(&srv->conns, sock, conn, {
        if (conn.deadline <= now) {
            ucs_diag("gaudi_ipc: pid %d sent no request in %.1f s: closed",
                     (int)conn.pid, srv->timeout);
            uct_gaudi_ipc_srv_conn_close(srv, sock);
        }
    })
    pthread_mutex_unlock(&srv->lock);

    srv->ops->tick(srv, now);
}

static void uct_gaudi_ipc_srv_close_listeners(uct_gaudi_ipc_srv_t *srv,
                                              int unlink_entries)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    int i;

    for (i = 0; i < UCT_GAUDI_IPC_SRV_LAST; ++i) {
        if (srv->fds[i] < 0) {
            continue;
        }

        close(srv->fds[i]);
        srv->fds[i] = -1;
        if (unlink_entries) {
            uct_gaudi_ipc_srv_entry_name(&srv->entry.id, i, name);
            uct_gaudi_ipc_dir_unlink(&srv->dir, name);
        }
    }
}

/* Bind both listeners under identity srv->entry.id; UCS_ERR_BUSY if one of
 * the names is taken (nothing of this attempt is left then) */
static ucs_status_t uct_gaudi_ipc_srv_bind(uct_gaudi_ipc_srv_t *srv)
{
    int bound[UCT_GAUDI_IPC_SRV_LAST] = {0};
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    ucs_status_t status = UCS_OK;
    struct sockaddr_un addr;
    socklen_t addr_len;
    int i;

    for (i = 0; (status == UCS_OK) && (i < UCT_GAUDI_IPC_SRV_LAST); ++i) {
        uct_gaudi_ipc_srv_entry_name(&srv->entry.id, i, name);
        addr_len    = uct_gaudi_ipc_dir_addr(&srv->dir, name, &addr);
        srv->fds[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
                             SOCK_CLOEXEC, 0);
        if (srv->fds[i] < 0) {
            ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
            status = UCS_ERR_IO_ERROR;
        } else if (bind(srv->fds[i], (struct sockaddr*)&addr,
                        addr_len) != 0) {
            if (errno == EADDRINUSE) {
                ucs_diag("gaudi_ipc: %s/%s is taken by another process: "
                         "trying another name", srv->dir.path, name);
                status = UCS_ERR_BUSY;
            } else {
                ucs_error("gaudi_ipc: failed to bind %s/%s: %m",
                          srv->dir.path, name);
                status = UCS_ERR_IO_ERROR;
            }
        } else {
            bound[i] = 1;
            if (listen(srv->fds[i], (i == UCT_GAUDI_IPC_SRV_REQUESTS) ?
                                    UCT_GAUDI_IPC_SRV_REQ_BACKLOG :
                                    SOMAXCONN) != 0) {
                ucs_error("gaudi_ipc: failed to listen on %s/%s: %m",
                          srv->dir.path, name);
                status = UCS_ERR_IO_ERROR;
            }
        }
    }

    if (status == UCS_OK) {
        return UCS_OK;
    }

    for (i = 0; i < UCT_GAUDI_IPC_SRV_LAST; ++i) {
        if (srv->fds[i] >= 0) {
            close(srv->fds[i]);
            srv->fds[i] = -1;
        }
        if (bound[i]) {
            uct_gaudi_ipc_srv_entry_name(&srv->entry.id, i, name);
            uct_gaudi_ipc_dir_unlink(&srv->dir, name);
        }
    }
    return status;
}

/* Take a fresh identity and bind it; what its entry proves goes into
 * srv->entry */
static ucs_status_t uct_gaudi_ipc_srv_listen(uct_gaudi_ipc_srv_t *srv)
{
    char name[UCT_GAUDI_IPC_ENTRY_NAME_MAX];
    ucs_status_t status;
    struct stat st;
    unsigned attempt;

    for (attempt = 0;; ++attempt) {
        if (uct_gaudi_ipc_srv_id_hook != NULL) {
            uct_gaudi_ipc_srv_id_hook(attempt, &srv->entry.id);
        } else if (getrandom(&srv->entry.id, sizeof(srv->entry.id), 0) !=
                   sizeof(srv->entry.id)) {
            ucs_error("gaudi_ipc: getrandom failed: %m");
            return UCS_ERR_IO_ERROR;
        }

        status = uct_gaudi_ipc_srv_bind(srv);
        if (status == UCS_OK) {
            break;
        } else if ((status != UCS_ERR_BUSY) ||
                   (attempt + 1 == UCT_GAUDI_IPC_SRV_BIND_ATTEMPTS)) {
            ucs_error("gaudi_ipc: no fd server in %s after %u attempt(s); "
                      "this process cannot share its Gaudi memory",
                      srv->dir.path, attempt + 1);
            return UCS_ERR_IO_ERROR;
        }
    }

    uct_gaudi_ipc_srv_entry_name(&srv->entry.id, 0, name);
    if (uct_gaudi_ipc_dir_stat(&srv->dir, name, &st) != 0) {
        ucs_error("gaudi_ipc: cannot stat our own entry %s/%s: %m",
                  srv->dir.path, name);
        uct_gaudi_ipc_srv_close_listeners(srv, 1);
        return UCS_ERR_IO_ERROR;
    }

    srv->entry.ino   = st.st_ino;
    srv->entry.ctime = (uint64_t)st.st_ctim.tv_sec * UCS_NSEC_PER_SEC +
                       st.st_ctim.tv_nsec;
    ucs_debug("gaudi_ipc: serving exported memory on %s/%s (inode %" PRIu64
              ")", srv->dir.path, name, srv->entry.ino);
    return UCS_OK;
}

ucs_status_t uct_gaudi_ipc_srv_start(uct_gaudi_ipc_srv_t *srv,
                                     const uct_gaudi_ipc_srv_ops_t *ops,
                                     void *arg, double timeout,
                                     const char *dir_path)
{
    ucs_status_t status;
    int i;

    memset(&srv->entry, 0, sizeof(srv->entry));
    for (i = 0; i < UCT_GAUDI_IPC_SRV_LAST; ++i) {
        srv->fds[i] = -1;
    }
    srv->pid        = getpid();
    srv->ops        = ops;
    srv->arg        = arg;
    srv->timeout    = timeout;
    srv->timer_id   = -1;
    srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pthread_mutex_init(&srv->lock, NULL);
    kh_init_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    ucs_list_head_init(&srv->revoking);

    status = uct_gaudi_ipc_dir_open(&srv->dir, dir_path);
    if (status != UCS_OK) {
        goto err;
    }

    status = uct_gaudi_ipc_srv_listen(srv);
    if (status != UCS_OK) {
        goto err_dir;
    }

    for (i = 0; i < UCT_GAUDI_IPC_SRV_LAST; ++i) {
        status = ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                             srv->fds[i], UCS_EVENT_SET_EVREAD,
                                             uct_gaudi_ipc_srv_event, srv,
                                             NULL);
        if (status != UCS_OK) {
            ucs_error("gaudi_ipc: failed to serve from the async thread: %s",
                      ucs_status_string(status));
            goto err_handlers;
        }
    }

    /* a silent connection lives at most 1.25 times the timeout */
    status = ucs_async_add_timer(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                 ucs_time_from_sec(
                                         ucs_min(timeout / 4,
                                                 UCT_GAUDI_IPC_SRV_MAX_TICK)),
                                 uct_gaudi_ipc_srv_timer, srv, NULL,
                                 &srv->timer_id);
    if (status != UCS_OK) {
        ucs_error("gaudi_ipc: failed to add a timer to the async thread: %s",
                  ucs_status_string(status));
        goto err_handlers;
    }

    return UCS_OK;

err_handlers:
    while (--i >= 0) {
        ucs_async_remove_handler(srv->fds[i], 1);
    }
    uct_gaudi_ipc_srv_close_listeners(srv, 1);
err_dir:
    uct_gaudi_ipc_dir_close(&srv->dir);
err:
    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
        srv->reserve_fd = -1;
    }
    kh_destroy_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    pthread_mutex_destroy(&srv->lock);
    return status;
}

/*
 * A forked child closes the MD it inherited: the server is its parent's.
 * The entries stay in the directory, and the registrations in UCS's async
 * thread stay too (the child shares its epoll set, so removing them would
 * remove the parent's); the child has no async thread, and may have been
 * forked while it held the lock. Only the child's descriptors go.
 */
static void uct_gaudi_ipc_srv_stop_forked(uct_gaudi_ipc_srv_t *srv)
{
    int sock;

    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
    }
    uct_gaudi_ipc_srv_close_listeners(srv, 0);
    kh_foreach_key(&srv->conns, sock, {
        close(sock);
    })
    kh_destroy_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    uct_gaudi_ipc_dir_close(&srv->dir);
}

void uct_gaudi_ipc_srv_stop(uct_gaudi_ipc_srv_t *srv)
{
    int socks[UCT_GAUDI_IPC_SRV_MAX_CONNS + 1];
    unsigned i, num_socks;
    int sock;

    if (srv->fds[UCT_GAUDI_IPC_SRV_REQUESTS] < 0) {
        return;
    } else if (getpid() != srv->pid) {
        uct_gaudi_ipc_srv_stop_forked(srv);
        return;
    }

    /* no new connections, no expiry; then no handler runs any more */
    for (i = 0; i < UCT_GAUDI_IPC_SRV_LAST; ++i) {
        ucs_async_remove_handler(srv->fds[i], 1);
    }
    ucs_async_remove_handler(srv->timer_id, 1);
    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
        srv->reserve_fd = -1;
    }
    uct_gaudi_ipc_srv_close_listeners(srv, 1);

    /* a handler may be waiting for the lock: it finds its connection gone,
     * and the removal waits for it to return */
    pthread_mutex_lock(&srv->lock);
    num_socks = 0;
    kh_foreach_key(&srv->conns, sock, {
        if (num_socks < ucs_static_array_size(socks)) {
            socks[num_socks++] = sock;
        }
    })
    kh_clear(uct_gaudi_ipc_srv_conns, &srv->conns);
    pthread_mutex_unlock(&srv->lock);

    for (i = 0; i < num_socks; ++i) {
        ucs_async_remove_handler(socks[i], 1);
        close(socks[i]);
    }

    /* what has not answered by now will not be waited for */
    srv->ops->tick(srv, UCS_TIME_INFINITY);
    uct_gaudi_ipc_dir_close(&srv->dir);
    kh_destroy_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    pthread_mutex_destroy(&srv->lock);
}
