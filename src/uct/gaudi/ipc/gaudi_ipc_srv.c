/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_srv.h"

#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/time/time.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/un.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* Names tried before giving up: another one taken is a collision (or an
 * attack) each time */
#define UCT_GAUDI_IPC_SRV_BIND_ATTEMPTS  8


/* Abstract socket address of the server of process @a pid under @a nonce;
 * returns the address length */
static socklen_t uct_gaudi_ipc_srv_addr(pid_t pid, uint64_t nonce,
                                        struct sockaddr_un *addr)
{
    int len;

    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    len = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1,
                   UCT_GAUDI_IPC_SOCK_PREFIX "%d-%016" PRIx64, (int)pid,
                   nonce);
    return offsetof(struct sockaddr_un, sun_path) + 1 + len;
}

static void uct_gaudi_ipc_srv_set_timeout(int fd, double timeout)
{
    struct timeval tv;

    tv.tv_sec  = (time_t)timeout;
    tv.tv_usec = (suseconds_t)((timeout - tv.tv_sec) * 1e6);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int uct_gaudi_ipc_msg_is_valid(const uct_gaudi_ipc_msg_t *msg,
                                      ssize_t len)
{
    return (len == sizeof(*msg)) && (msg->magic == UCT_GAUDI_IPC_MSG_MAGIC);
}

/* Send @a msg, with @a fd attached if >= 0 */
static ssize_t uct_gaudi_ipc_srv_send(int sock, const uct_gaudi_ipc_msg_t *msg,
                                      int fd)
{
    char control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {(void*)msg, sizeof(*msg)};
    struct msghdr hdr;
    struct cmsghdr *cmsg;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov    = &iov;
    hdr.msg_iovlen = 1;
    if (fd >= 0) {
        hdr.msg_control    = control;
        hdr.msg_controllen = sizeof(control);
        cmsg               = CMSG_FIRSTHDR(&hdr);
        cmsg->cmsg_level   = SOL_SOCKET;
        cmsg->cmsg_type    = SCM_RIGHTS;
        cmsg->cmsg_len     = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    }

    return sendmsg(sock, &hdr, MSG_NOSIGNAL);
}

/* Most descriptors a reply may carry that we still look at: with more the
 * kernel sets MSG_CTRUNC and drops the rest itself */
#define UCT_GAUDI_IPC_SRV_MAX_RX_FDS  4


/* Close every descriptor of the SCM_RIGHTS messages in @a hdr but the
 * first one if @a keep; returns how many there were */
static unsigned uct_gaudi_ipc_srv_take_fds(struct msghdr *hdr, int keep,
                                           int *fd_p)
{
    unsigned count = 0;
    struct cmsghdr *cmsg;
    size_t i, num;
    int fd;

    for (cmsg = CMSG_FIRSTHDR(hdr); cmsg != NULL;
         cmsg = CMSG_NXTHDR(hdr, cmsg)) {
        if ((cmsg->cmsg_level != SOL_SOCKET) ||
            (cmsg->cmsg_type != SCM_RIGHTS) ||
            (cmsg->cmsg_len < CMSG_LEN(0))) {
            continue;
        }

        num = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (i = 0; i < num; ++i, ++count) {
            memcpy(&fd, CMSG_DATA(cmsg) + (i * sizeof(int)), sizeof(int));
            if (keep && (count == 0)) {
                *fd_p = fd;
            } else {
                close(fd);
            }
        }
    }

    return count;
}

/*
 * Receive a message that may carry exactly one descriptor (a reply). Any
 * other number of descriptors, or a truncated control message, is an error
 * (-1, errno EPROTO) and every descriptor that came is closed.
 */
static ssize_t uct_gaudi_ipc_srv_recv_fd(int sock, uct_gaudi_ipc_msg_t *msg,
                                         int *fd_p)
{
    char control[CMSG_SPACE(UCT_GAUDI_IPC_SRV_MAX_RX_FDS * sizeof(int))];
    struct iovec iov = {msg, sizeof(*msg)};
    struct msghdr hdr;
    unsigned count;
    ssize_t len;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov        = &iov;
    hdr.msg_iovlen     = 1;
    hdr.msg_control    = control;
    hdr.msg_controllen = sizeof(control);
    *fd_p              = -1;
    len                = recvmsg(sock, &hdr, MSG_CMSG_CLOEXEC);
    if (len < 0) {
        return len;
    }

    count = uct_gaudi_ipc_srv_take_fds(&hdr, 1, fd_p);
    if ((count > 1) || (hdr.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
        ucs_diag("gaudi_ipc: refused an answer carrying %u%s descriptors%s",
                 count, (hdr.msg_flags & MSG_CTRUNC) ? " or more" : "",
                 (hdr.msg_flags & MSG_TRUNC) ? " and more than a message" :
                                               "");
        if (*fd_p >= 0) {
            close(*fd_p);
            *fd_p = -1;
        }
        errno = (hdr.msg_flags & MSG_TRUNC) ? EMSGSIZE : EPROTO;
        return -1;
    }

    return len;
}

/*
 * Receive a request: nobody sends us descriptors. Without a control buffer
 * the kernel installs none (it drops them and sets MSG_CTRUNC), so nothing
 * a peer attaches ever reaches our descriptor table. A message longer than
 * the protocol's is not one of ours either: recvmsg() returns the bytes
 * that fit (a valid request as its first 40 bytes would pass the length
 * check) and says so only in MSG_TRUNC.
 */
static ssize_t uct_gaudi_ipc_srv_recv_request(int sock,
                                              uct_gaudi_ipc_msg_t *msg)
{
    struct iovec iov = {msg, sizeof(*msg)};
    struct msghdr hdr;
    ssize_t len;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov    = &iov;
    hdr.msg_iovlen = 1;
    len            = recvmsg(sock, &hdr, MSG_CMSG_CLOEXEC);
    if ((len >= 0) && (hdr.msg_flags & MSG_CTRUNC)) {
        errno = EPROTO;  /* it attached descriptors (or credentials) */
        return -1;
    } else if ((len >= 0) && (hdr.msg_flags & MSG_TRUNC)) {
        errno = EMSGSIZE;
        return -1;
    }

    return len;
}

/* Connections accepted by one callback: the rest wait in the backlog (the
 * listening socket stays readable, so we are called again after the other
 * handlers of the async thread had their turn) */
#define UCT_GAUDI_IPC_SRV_ACCEPT_BURST  16

/* Connections of our uid waiting for their request at once; more are
 * closed at accept */
#define UCT_GAUDI_IPC_SRV_MAX_CONNS     64

/* How long a free or deregistration waits for its importers' answers
 * before leaving them to the timer: a live importer on the same node
 * answers within microseconds, a hostile or stuck one never */
#define UCT_GAUDI_IPC_SRV_REVOKE_GRACE  0.01

/* Unanswered revocations the timer keeps at most, in all and per process:
 * each holds a socket until its deadline, and an importer that accepts
 * and never answers must not take all our descriptors. Past these the
 * socket is closed at once (the release of the memory is deferred and
 * retried all the same). */
#define UCT_GAUDI_IPC_SRV_MAX_REVOKING      256
#define UCT_GAUDI_IPC_SRV_MAX_REVOKING_PID  2

uint64_t (*uct_gaudi_ipc_srv_nonce_hook)(unsigned attempt) = NULL;

/* A revocation whose answer the timer waits for */
typedef struct uct_gaudi_ipc_srv_revoking {
    ucs_list_link_t list;
    int             sock;
    pid_t           pid;
    ucs_time_t      deadline;
} uct_gaudi_ipc_srv_revoking_t;

static void uct_gaudi_ipc_srv_revocation_answer(int sock, pid_t pid);


/* Forget connection @a sock and close it; srv->lock held */
static void uct_gaudi_ipc_srv_conn_close(uct_gaudi_ipc_srv_t *srv, int sock)
{
    khiter_t iter = kh_get(uct_gaudi_ipc_srv_conns, &srv->conns, sock);

    ucs_assert(iter != kh_end(&srv->conns));
    kh_del(uct_gaudi_ipc_srv_conns, &srv->conns, iter);
    ucs_async_remove_handler(sock, 0);
    close(sock);
}

/* Answer the request that arrived on @a sock; srv->lock held */
static void uct_gaudi_ipc_srv_serve(uct_gaudi_ipc_srv_t *srv, int sock,
                                    pid_t pid)
{
    uct_gaudi_ipc_msg_t msg, reply;
    ucs_status_t status;
    ssize_t len;
    int fd;

    len = uct_gaudi_ipc_srv_recv_request(sock, &msg);
    if ((len < 0) && ((errno == EAGAIN) || (errno == EWOULDBLOCK))) {
        return;     /* not yet: it waits until its deadline */
    }

    if (!uct_gaudi_ipc_msg_is_valid(&msg, len)) {
        ucs_diag("gaudi_ipc: refused a malformed request (%zd bytes%s) from "
                 "pid %d", len, ((len < 0) && (errno == EPROTO)) ?
                 ", with descriptors" : ((len < 0) && (errno == EMSGSIZE)) ?
                 ", longer than a request" : "", (int)pid);
        goto out;
    }

    reply     = msg;
    reply.pid = getpid();
    fd        = -1;
    if (msg.op == UCT_GAUDI_IPC_MSG_GET_FD) {
        status = srv->ops->get_fd(srv->arg, &msg, pid, &fd);
    } else if ((msg.op == UCT_GAUDI_IPC_MSG_REVOKE) && (msg.pid == pid)) {
        status = srv->ops->revoke(srv->arg, &msg, pid);
    } else {
        ucs_diag("gaudi_ipc: refused request %u from pid %d (claims pid %d)",
                 msg.op, (int)pid, msg.pid);
        status = UCS_ERR_REJECTED;
    }

    /* a fresh connection has room for one reply: never waits */
    reply.status = status;
    if (uct_gaudi_ipc_srv_send(sock, &reply, fd) != sizeof(reply)) {
        ucs_diag("gaudi_ipc: failed to answer pid %d: %m", (int)pid);
    }

    if (fd >= 0) {
        close(fd);
    }

out:
    uct_gaudi_ipc_srv_conn_close(srv, sock);
}

/* A request (or the close) of an accepted connection */
static void uct_gaudi_ipc_srv_conn_event(int sock,
                                         ucs_event_set_types_t events,
                                         void *arg)
{
    uct_gaudi_ipc_srv_t *srv = arg;
    khiter_t iter;

    pthread_mutex_lock(&srv->lock);
    iter = kh_get(uct_gaudi_ipc_srv_conns, &srv->conns, sock);
    if (iter != kh_end(&srv->conns)) {  /* else closed by stop or expired */
        uct_gaudi_ipc_srv_serve(srv, sock, kh_val(&srv->conns, iter).pid);
    }
    pthread_mutex_unlock(&srv->lock);
}

/* Collect the answers of the revocations left to the server, and give up
 * on those past their deadline; srv->lock held. Never blocks. */
static void uct_gaudi_ipc_srv_revoking_poll(uct_gaudi_ipc_srv_t *srv,
                                            ucs_time_t now)
{
    uct_gaudi_ipc_srv_revoking_t *r, *tmp;
    struct pollfd pfd;

    ucs_list_for_each_safe(r, tmp, &srv->revoking, list) {
        pfd.fd      = r->sock;
        pfd.events  = POLLIN;
        pfd.revents = 0;
        if ((poll(&pfd, 1, 0) > 0) && (pfd.revents != 0)) {
            uct_gaudi_ipc_srv_revocation_answer(r->sock, r->pid);
        } else if (r->deadline <= now) {
            ucs_diag("gaudi_ipc: pid %d did not answer a revocation in "
                     "%.1f s: the release of the memory waits for it",
                     (int)r->pid, srv->timeout);
        } else {
            continue;
        }

        close(r->sock);
        ucs_list_del(&r->list);
        ucs_free(r);
    }
}

/* Close the connections whose request did not come in time */
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
    uct_gaudi_ipc_srv_revoking_poll(srv, now);
    pthread_mutex_unlock(&srv->lock);
}

/* Keep a new connection until its request comes (or close it at once) */
static void uct_gaudi_ipc_srv_conn_add(uct_gaudi_ipc_srv_t *srv, int sock)
{
    struct ucred cred;
    socklen_t cred_len = sizeof(cred);
    ucs_status_t status;
    khiter_t iter;
    int ret;

    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0) {
        ucs_diag("gaudi_ipc: SO_PEERCRED failed: %m");
        goto err_close;
    }

    if (cred.uid != getuid()) {
        /* nothing of ours is for other users: not even a reply */
        ucs_diag("gaudi_ipc: refused a connection from pid %d: its uid %u "
                 "is not ours (%u)", (int)cred.pid, cred.uid, getuid());
        goto err_close;
    }

    pthread_mutex_lock(&srv->lock);
    if (kh_size(&srv->conns) >= UCT_GAUDI_IPC_SRV_MAX_CONNS) {
        pthread_mutex_unlock(&srv->lock);
        ucs_diag("gaudi_ipc: refused a connection from pid %d: %d requests "
                 "are pending", (int)cred.pid, UCT_GAUDI_IPC_SRV_MAX_CONNS);
        goto err_close;
    }

    iter = kh_put(uct_gaudi_ipc_srv_conns, &srv->conns, sock, &ret);
    if (ret < 0) {
        pthread_mutex_unlock(&srv->lock);
        goto err_close;
    }

    kh_val(&srv->conns, iter).pid      = cred.pid;
    kh_val(&srv->conns, iter).deadline = ucs_get_time() +
                                         ucs_time_from_sec(srv->timeout);
    status = ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK, sock,
                                         UCS_EVENT_SET_EVREAD,
                                         uct_gaudi_ipc_srv_conn_event, srv,
                                         NULL);
    if (status != UCS_OK) {
        kh_del(uct_gaudi_ipc_srv_conns, &srv->conns, iter);
        pthread_mutex_unlock(&srv->lock);
        ucs_diag("gaudi_ipc: failed to watch a connection from pid %d: %s",
                 (int)cred.pid, ucs_status_string(status));
        goto err_close;
    }
    pthread_mutex_unlock(&srv->lock);
    return;

err_close:
    close(sock);
}

/*
 * Out of descriptors: the connection waiting in the backlog keeps the
 * listening socket readable, and UCS's async thread (level-triggered) would
 * call us again at once, forever. Give up the reserve descriptor to accept
 * it, drop it, and take the reserve back (the way libev and nginx do).
 */
static void uct_gaudi_ipc_srv_drop_one(uct_gaudi_ipc_srv_t *srv)
{
    int sock;

    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
        srv->reserve_fd = -1;
    }

    sock = accept4(srv->fd, NULL, NULL, SOCK_CLOEXEC);
    if (sock >= 0) {
        close(sock);
    }

    srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ucs_diag("gaudi_ipc: out of descriptors: %s a connection to the fd "
             "server", (sock >= 0) ? "dropped" : "could not accept");
}

static void uct_gaudi_ipc_srv_event(int id, ucs_event_set_types_t events,
                                    void *arg)
{
    uct_gaudi_ipc_srv_t *srv = arg;
    unsigned i;
    int sock;

    for (i = 0; i < UCT_GAUDI_IPC_SRV_ACCEPT_BURST; ++i) {
        sock = accept4(srv->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if ((sock < 0) && ((errno == EMFILE) || (errno == ENFILE))) {
            uct_gaudi_ipc_srv_drop_one(srv);
            break;
        } else if (sock < 0) {
            if ((errno != EAGAIN) && (errno != EWOULDBLOCK)) {
                ucs_diag("gaudi_ipc: accept failed: %m");
            }
            break;
        }

        uct_gaudi_ipc_srv_conn_add(srv, sock);
    }
}

ucs_status_t uct_gaudi_ipc_srv_start(uct_gaudi_ipc_srv_t *srv,
                                     const uct_gaudi_ipc_srv_ops_t *ops,
                                     void *arg, double timeout)
{
    struct sockaddr_un addr;
    socklen_t addr_len;
    ucs_status_t status;
    int attempt;

    srv->ops      = ops;
    srv->arg      = arg;
    srv->timeout  = timeout;
    srv->timer_id = -1;
    srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pthread_mutex_init(&srv->lock, NULL);
    kh_init_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    ucs_list_head_init(&srv->revoking);
    srv->fd       = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
                           SOCK_CLOEXEC, 0);
    if (srv->fd < 0) {
        ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
        status = UCS_ERR_IO_ERROR;
        goto err;
    }

    for (attempt = 0;; ++attempt) {
        if (uct_gaudi_ipc_srv_nonce_hook != NULL) {
            srv->nonce = uct_gaudi_ipc_srv_nonce_hook(attempt);
        } else if (getrandom(&srv->nonce, sizeof(srv->nonce), 0) !=
                   sizeof(srv->nonce)) {
            ucs_error("gaudi_ipc: getrandom failed: %m");
            status = UCS_ERR_IO_ERROR;
            goto err_close;
        }

        addr_len = uct_gaudi_ipc_srv_addr(getpid(), srv->nonce, &addr);
        if (bind(srv->fd, (struct sockaddr*)&addr, addr_len) == 0) {
            break;
        } else if ((errno != EADDRINUSE) ||
                   (attempt + 1 == UCT_GAUDI_IPC_SRV_BIND_ATTEMPTS)) {
            ucs_error("gaudi_ipc: failed to bind abstract socket @%s (attempt "
                      "%d of %d): %m; this process cannot share its Gaudi "
                      "memory", addr.sun_path + 1, attempt + 1,
                      UCT_GAUDI_IPC_SRV_BIND_ATTEMPTS);
            status = UCS_ERR_IO_ERROR;
            goto err_close;
        }

        ucs_diag("gaudi_ipc: abstract socket @%s is taken by another "
                 "process: trying another name", addr.sun_path + 1);
    }

    if (listen(srv->fd, 64) != 0) {
        ucs_error("gaudi_ipc: failed to listen on abstract socket @%s: %m",
                  addr.sun_path + 1);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    status = ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                         srv->fd, UCS_EVENT_SET_EVREAD,
                                         uct_gaudi_ipc_srv_event, srv, NULL);
    if (status != UCS_OK) {
        ucs_error("gaudi_ipc: failed to serve @%s from the async thread: %s",
                  addr.sun_path + 1, ucs_status_string(status));
        goto err_close;
    }

    /* a silent connection lives at most 1.25 times the timeout */
    status = ucs_async_add_timer(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                 ucs_time_from_sec(timeout / 4),
                                 uct_gaudi_ipc_srv_timer, srv, NULL,
                                 &srv->timer_id);
    if (status != UCS_OK) {
        ucs_error("gaudi_ipc: failed to add a timer to the async thread: %s",
                  ucs_status_string(status));
        ucs_async_remove_handler(srv->fd, 1);
        goto err_close;
    }

    ucs_debug("gaudi_ipc: serving exported memory on @%s",
              addr.sun_path + 1);
    return UCS_OK;

err_close:
    close(srv->fd);
    srv->fd = -1;
err:
    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
        srv->reserve_fd = -1;
    }
    kh_destroy_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    pthread_mutex_destroy(&srv->lock);
    return status;
}

void uct_gaudi_ipc_srv_stop(uct_gaudi_ipc_srv_t *srv)
{
    int socks[UCT_GAUDI_IPC_SRV_MAX_CONNS];
    unsigned i, num_socks;
    int sock;

    if (srv->fd < 0) {
        return;
    }

    /* no new connections, no expiry; then no handler runs any more */
    ucs_async_remove_handler(srv->fd, 1);
    ucs_async_remove_handler(srv->timer_id, 1);
    if (srv->reserve_fd >= 0) {
        close(srv->reserve_fd);
        srv->reserve_fd = -1;
    }
    close(srv->fd);
    srv->fd = -1;

    /* a handler may be waiting for the lock: it finds its connection gone,
     * and the removal waits for it to return */
    pthread_mutex_lock(&srv->lock);
    num_socks = 0;
    kh_foreach_key(&srv->conns, sock, {
        socks[num_socks++] = sock;
    })
    kh_clear(uct_gaudi_ipc_srv_conns, &srv->conns);
    /* what has not answered by now will not be waited for */
    uct_gaudi_ipc_srv_revoking_poll(srv, UCS_TIME_INFINITY);
    pthread_mutex_unlock(&srv->lock);

    for (i = 0; i < num_socks; ++i) {
        ucs_async_remove_handler(socks[i], 1);
        close(socks[i]);
    }

    kh_destroy_inplace(uct_gaudi_ipc_srv_conns, &srv->conns);
    pthread_mutex_destroy(&srv->lock);
}

/* Whether the server on @a sock is process @a pid of our uid (a squatter of
 * its name is not) */
static int uct_gaudi_ipc_srv_is_peer(int sock, pid_t pid)
{
    struct ucred cred;
    socklen_t cred_len = sizeof(cred);

    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0) {
        ucs_diag("gaudi_ipc: SO_PEERCRED failed: %m");
        return 0;
    }

    if ((cred.pid != pid) || (cred.uid != getuid())) {
        ucs_diag("gaudi_ipc: the fd server of pid %d is pid %d of uid %u, "
                 "not ours (uid %u): refused", (int)pid, (int)cred.pid,
                 cred.uid, getuid());
        return 0;
    }

    return 1;
}

static void uct_gaudi_ipc_srv_msg_init(const uct_gaudi_ipc_srv_t *srv,
                                       uct_gaudi_ipc_msg_t *msg, uint32_t op,
                                       uint64_t export_id, uint64_t cookie)
{
    memset(msg, 0, sizeof(*msg));
    msg->magic     = UCT_GAUDI_IPC_MSG_MAGIC;
    msg->op        = op;
    msg->export_id = export_id;
    msg->cookie    = cookie;
    msg->pid       = getpid();
    msg->nonce     = srv->nonce;
}

/* One request to process @a pid and its reply */
static ucs_status_t uct_gaudi_ipc_srv_request(const uct_gaudi_ipc_srv_t *srv,
                                              pid_t pid, uint64_t nonce,
                                              uint32_t op, uint64_t export_id,
                                              uint64_t cookie, double timeout,
                                              int *fd_p)
{
    uct_gaudi_ipc_msg_t msg, reply;
    struct sockaddr_un addr;
    socklen_t addr_len;
    ucs_status_t status;
    ssize_t len;
    int sock, fd;

    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
        return UCS_ERR_IO_ERROR;
    }

    uct_gaudi_ipc_srv_set_timeout(sock, timeout);
    addr_len = uct_gaudi_ipc_srv_addr(pid, nonce, &addr);
    if (connect(sock, (struct sockaddr*)&addr, addr_len) != 0) {
        ucs_debug("gaudi_ipc: cannot reach pid %d at @%s: %m", (int)pid,
                  addr.sun_path + 1);
        status = UCS_ERR_UNREACHABLE;
        goto out;
    }

    if (!uct_gaudi_ipc_srv_is_peer(sock, pid)) {
        status = UCS_ERR_UNREACHABLE;
        goto out;
    }

    uct_gaudi_ipc_srv_msg_init(srv, &msg, op, export_id, cookie);
    if (uct_gaudi_ipc_srv_send(sock, &msg, -1) != sizeof(msg)) {
        ucs_debug("gaudi_ipc: failed to send to pid %d: %m", (int)pid);
        status = UCS_ERR_UNREACHABLE;
        goto out;
    }

    len = uct_gaudi_ipc_srv_recv_fd(sock, &reply, &fd);
    if ((len < 0) && ((errno == EAGAIN) || (errno == EWOULDBLOCK))) {
        ucs_error("gaudi_ipc: pid %d did not answer in %.1f s", (int)pid,
                  timeout);
        status = UCS_ERR_TIMED_OUT;
    } else if (!uct_gaudi_ipc_msg_is_valid(&reply, len) ||
               (reply.op != op) || (reply.export_id != export_id)) {
        /* e.g. closed without an answer: it refused a malformed request */
        ucs_debug("gaudi_ipc: no valid answer from pid %d (%zd bytes)",
                  (int)pid, len);
        status = UCS_ERR_UNREACHABLE;
    } else {
        status = (ucs_status_t)reply.status;
    }

    if (fd >= 0) {
        if ((status == UCS_OK) && (fd_p != NULL)) {
            *fd_p = fd;
        } else {
            close(fd);
        }
    } else if ((status == UCS_OK) && (fd_p != NULL)) {
        ucs_error("gaudi_ipc: pid %d answered without a descriptor",
                  (int)pid);
        status = UCS_ERR_IO_ERROR;
    }

out:
    close(sock);
    return status;
}

ucs_status_t uct_gaudi_ipc_srv_get_fd(const uct_gaudi_ipc_srv_t *srv,
                                      pid_t pid, uint64_t nonce,
                                      uint64_t export_id, uint64_t cookie,
                                      double timeout, int *fd_p)
{
    return uct_gaudi_ipc_srv_request(srv, pid, nonce, UCT_GAUDI_IPC_MSG_GET_FD,
                                     export_id, cookie, timeout, fd_p);
}

void uct_gaudi_ipc_srv_revocation_init(uct_gaudi_ipc_srv_revocation_t *rev,
                                       unsigned max)
{
    rev->count = 0;
    rev->max   = max;
    rev->peers = (max == 0) ? NULL :
                 ucs_malloc(max * sizeof(*rev->peers), "gaudi_ipc_revoke");
    if (rev->peers == NULL) {
        rev->max = 0;
    }
}

ucs_status_t uct_gaudi_ipc_srv_revoke(const uct_gaudi_ipc_srv_t *srv,
                                      uct_gaudi_ipc_srv_revocation_t *rev,
                                      pid_t pid, uint64_t nonce,
                                      uint64_t export_id, uint64_t cookie)
{
    uct_gaudi_ipc_msg_t msg;
    struct sockaddr_un addr;
    socklen_t addr_len;
    int sock;

    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
        return UCS_ERR_IO_ERROR;
    }

    /* a UNIX connect completes at once, or fails (EAGAIN: backlog full) */
    addr_len = uct_gaudi_ipc_srv_addr(pid, nonce, &addr);
    if (connect(sock, (struct sockaddr*)&addr, addr_len) != 0) {
        ucs_debug("gaudi_ipc: cannot reach pid %d at @%s: %m", (int)pid,
                  addr.sun_path + 1);
        goto err_close;
    }

    if (!uct_gaudi_ipc_srv_is_peer(sock, pid)) {
        goto err_close;
    }

    /* queued in the peer's socket: it reads it even if we close first */
    uct_gaudi_ipc_srv_msg_init(srv, &msg, UCT_GAUDI_IPC_MSG_REVOKE, export_id,
                               cookie);
    if (uct_gaudi_ipc_srv_send(sock, &msg, -1) != sizeof(msg)) {
        ucs_debug("gaudi_ipc: failed to send to pid %d: %m", (int)pid);
        goto err_close;
    }

    if (rev->count < rev->max) {
        rev->peers[rev->count].sock = sock;
        rev->peers[rev->count].pid  = pid;
        ++rev->count;
    } else {
        close(sock);
    }
    return UCS_OK;

err_close:
    close(sock);
    return UCS_ERR_UNREACHABLE;
}

/* The answer to a revocation came on @a sock (or it closed): log it */
static void uct_gaudi_ipc_srv_revocation_answer(int sock, pid_t pid)
{
    uct_gaudi_ipc_msg_t reply;
    ssize_t len;
    int fd;

    len = uct_gaudi_ipc_srv_recv_fd(sock, &reply, &fd);
    if (fd >= 0) {
        close(fd);
    }

    ucs_debug("gaudi_ipc: pid %d answered the revocation: %s", (int)pid,
              uct_gaudi_ipc_msg_is_valid(&reply, len) ?
              ucs_status_string((ucs_status_t)reply.status) : "(closed)");
}

/* Whether the timer may keep another unanswered revocation to @a pid;
 * srv->lock held */
static int uct_gaudi_ipc_srv_revoking_room(uct_gaudi_ipc_srv_t *srv, pid_t pid)
{
    unsigned total = 0, of_pid = 0;
    uct_gaudi_ipc_srv_revoking_t *r;

    ucs_list_for_each(r, &srv->revoking, list) {
        ++total;
        of_pid += (r->pid == pid);
    }

    return (total < UCT_GAUDI_IPC_SRV_MAX_REVOKING) &&
           (of_pid < UCT_GAUDI_IPC_SRV_MAX_REVOKING_PID);
}

void uct_gaudi_ipc_srv_revocation_finish(uct_gaudi_ipc_srv_t *srv,
                                         uct_gaudi_ipc_srv_revocation_t *rev,
                                         double timeout)
{
    ucs_time_t start    = ucs_get_time();
    ucs_time_t deadline = start + ucs_time_from_sec(
                                      ucs_min(timeout,
                                              UCT_GAUDI_IPC_SRV_REVOKE_GRACE));
    uct_gaudi_ipc_srv_revoking_t *r;
    struct pollfd *pfds;
    unsigned i, pending;
    ucs_time_t now;
    int ret;

    if (rev->count == 0) {
        ucs_free(rev->peers);
        rev->peers = NULL;
        rev->max   = 0;
        return;
    }

    pfds = (rev->count == 0) ? NULL :
           ucs_malloc(rev->count * sizeof(*pfds), "gaudi_ipc_revoke_poll");
    for (i = 0; (pfds != NULL) && (i < rev->count); ++i) {
        pfds[i].fd     = rev->peers[i].sock;
        pfds[i].events = POLLIN;
    }

    pending = (pfds != NULL) ? rev->count : 0;
    while ((pending > 0) && ((now = ucs_get_time()) < deadline)) {
        ret = poll(pfds, rev->count,
                   (int)ucs_time_to_msec(deadline - now) + 1);
        if ((ret < 0) && (errno != EINTR)) {
            ucs_diag("gaudi_ipc: poll failed: %m");
            break;
        }

        for (i = 0; (ret > 0) && (i < rev->count); ++i) {
            if ((pfds[i].fd >= 0) && (pfds[i].revents != 0)) {
                uct_gaudi_ipc_srv_revocation_answer(pfds[i].fd,
                                                    rev->peers[i].pid);
                close(pfds[i].fd);
                pfds[i].fd = -1;    /* poll skips it from now on */
                --pending;
            }
        }
    }

    /* the rest: the server's timer waits for them, not the caller */
    pthread_mutex_lock(&srv->lock);
    for (i = 0; i < rev->count; ++i) {
        if ((pfds != NULL) && (pfds[i].fd < 0)) {
            continue;
        }

        r = NULL;
        if ((srv->fd >= 0) &&
            uct_gaudi_ipc_srv_revoking_room(srv, rev->peers[i].pid)) {
            r = ucs_malloc(sizeof(*r), "gaudi_ipc_revoking");
        }

        if (r == NULL) {
            ucs_diag("gaudi_ipc: pid %d did not answer a revocation in "
                     "time: not waited for", (int)rev->peers[i].pid);
            close(rev->peers[i].sock);
            continue;
        }

        r->sock     = rev->peers[i].sock;
        r->pid      = rev->peers[i].pid;
        r->deadline = start + ucs_time_from_sec(timeout);
        ucs_list_add_tail(&srv->revoking, &r->list);
    }
    pthread_mutex_unlock(&srv->lock);

    ucs_free(pfds);
    ucs_free(rev->peers);
    rev->peers = NULL;
    rev->count = 0;
    rev->max   = 0;
}
