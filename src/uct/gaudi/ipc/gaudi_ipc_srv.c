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
#include <ucs/sys/compiler_def.h>
#include <ucs/time/time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* Abstract socket address of process @a pid; returns the address length */
static socklen_t uct_gaudi_ipc_srv_addr(pid_t pid, struct sockaddr_un *addr)
{
    int len;

    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    len = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1,
                   UCT_GAUDI_IPC_SOCK_PREFIX "%d", (int)pid);
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

/* Receive a message and the fd attached to it, if any (*fd_p = -1 if not) */
static ssize_t uct_gaudi_ipc_srv_recv(int sock, uct_gaudi_ipc_msg_t *msg,
                                      int *fd_p)
{
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {msg, sizeof(*msg)};
    struct msghdr hdr;
    struct cmsghdr *cmsg;
    ssize_t len;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov        = &iov;
    hdr.msg_iovlen     = 1;
    hdr.msg_control    = control;
    hdr.msg_controllen = sizeof(control);
    *fd_p              = -1;
    len                = recvmsg(sock, &hdr, MSG_CMSG_CLOEXEC);
    for (cmsg = CMSG_FIRSTHDR(&hdr); (len >= 0) && (cmsg != NULL);
         cmsg = CMSG_NXTHDR(&hdr, cmsg)) {
        if ((cmsg->cmsg_level == SOL_SOCKET) &&
            (cmsg->cmsg_type == SCM_RIGHTS) &&
            (cmsg->cmsg_len == CMSG_LEN(sizeof(int)))) {
            memcpy(fd_p, CMSG_DATA(cmsg), sizeof(int));
        }
    }

    return len;
}

/* Serve one request on an accepted connection */
static void uct_gaudi_ipc_srv_serve(uct_gaudi_ipc_srv_t *srv, int sock)
{
    uct_gaudi_ipc_msg_t msg, reply;
    struct ucred cred;
    socklen_t cred_len = sizeof(cred);
    ucs_status_t status;
    int fd, rfd;
    ssize_t len;

    uct_gaudi_ipc_srv_set_timeout(sock, srv->timeout);
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0) {
        ucs_error("gaudi_ipc: SO_PEERCRED failed: %m");
        return;
    }

    len = uct_gaudi_ipc_srv_recv(sock, &msg, &rfd);
    if (rfd >= 0) {
        close(rfd);     /* nobody sends us descriptors */
    }

    if (!uct_gaudi_ipc_msg_is_valid(&msg, len)) {
        ucs_diag("gaudi_ipc: refused a malformed request (%zd bytes) from "
                 "pid %d", len, (int)cred.pid);
        return;
    }

    reply        = msg;
    reply.pid    = getpid();
    fd           = -1;
    if (cred.uid != getuid()) {
        ucs_diag("gaudi_ipc: refused request %u for export %" PRIu64
                 " from pid %d: its uid %u is not ours (%u)", msg.op,
                 msg.export_id, (int)cred.pid, cred.uid, getuid());
        status = UCS_ERR_REJECTED;
    } else if (msg.op == UCT_GAUDI_IPC_MSG_GET_FD) {
        status = srv->ops->get_fd(srv->arg, &msg, cred.pid, &fd);
    } else if ((msg.op == UCT_GAUDI_IPC_MSG_REVOKE) &&
               (msg.pid == cred.pid)) {
        status = srv->ops->revoke(srv->arg, &msg, cred.pid);
    } else {
        ucs_diag("gaudi_ipc: refused request %u from pid %d (claims pid %d)",
                 msg.op, (int)cred.pid, msg.pid);
        status = UCS_ERR_REJECTED;
    }

    reply.status = status;
    if (uct_gaudi_ipc_srv_send(sock, &reply, fd) != sizeof(reply)) {
        ucs_diag("gaudi_ipc: failed to answer pid %d: %m", (int)cred.pid);
    }

    if (fd >= 0) {
        close(fd);
    }
}

static void uct_gaudi_ipc_srv_event(int id, ucs_event_set_types_t events,
                                    void *arg)
{
    uct_gaudi_ipc_srv_t *srv = arg;
    int sock;

    while ((sock = accept4(srv->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
        uct_gaudi_ipc_srv_serve(srv, sock);
        close(sock);
    }
}

ucs_status_t uct_gaudi_ipc_srv_start(uct_gaudi_ipc_srv_t *srv,
                                     const uct_gaudi_ipc_srv_ops_t *ops,
                                     void *arg, double timeout)
{
    struct sockaddr_un addr;
    socklen_t addr_len;
    ucs_status_t status;

    srv->ops     = ops;
    srv->arg     = arg;
    srv->timeout = timeout;
    srv->fd      = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
                          SOCK_CLOEXEC, 0);
    if (srv->fd < 0) {
        ucs_error("gaudi_ipc: failed to create a UNIX socket: %m");
        return UCS_ERR_IO_ERROR;
    }

    addr_len = uct_gaudi_ipc_srv_addr(getpid(), &addr);
    if ((bind(srv->fd, (struct sockaddr*)&addr, addr_len) != 0) ||
        (listen(srv->fd, 64) != 0)) {
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

    ucs_debug("gaudi_ipc: serving exported memory on @%s",
              addr.sun_path + 1);
    return UCS_OK;

err_close:
    close(srv->fd);
    srv->fd = -1;
    return status;
}

void uct_gaudi_ipc_srv_stop(uct_gaudi_ipc_srv_t *srv)
{
    if (srv->fd < 0) {
        return;
    }

    ucs_async_remove_handler(srv->fd, 1);
    close(srv->fd);
    srv->fd = -1;
}

/* One request to process @a pid and its reply */
static ucs_status_t uct_gaudi_ipc_srv_request(pid_t pid, uint32_t op,
                                              uint64_t export_id,
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
    addr_len = uct_gaudi_ipc_srv_addr(pid, &addr);
    if (connect(sock, (struct sockaddr*)&addr, addr_len) != 0) {
        ucs_debug("gaudi_ipc: cannot reach pid %d at @%s: %m", (int)pid,
                  addr.sun_path + 1);
        status = UCS_ERR_UNREACHABLE;
        goto out;
    }

    memset(&msg, 0, sizeof(msg));
    msg.magic     = UCT_GAUDI_IPC_MSG_MAGIC;
    msg.op        = op;
    msg.export_id = export_id;
    msg.cookie    = cookie;
    msg.pid       = getpid();
    if (uct_gaudi_ipc_srv_send(sock, &msg, -1) != sizeof(msg)) {
        ucs_debug("gaudi_ipc: failed to send to pid %d: %m", (int)pid);
        status = UCS_ERR_UNREACHABLE;
        goto out;
    }

    len = uct_gaudi_ipc_srv_recv(sock, &reply, &fd);
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

ucs_status_t uct_gaudi_ipc_srv_get_fd(pid_t pid, uint64_t export_id,
                                      uint64_t cookie, double timeout,
                                      int *fd_p)
{
    return uct_gaudi_ipc_srv_request(pid, UCT_GAUDI_IPC_MSG_GET_FD, export_id,
                                     cookie, timeout, fd_p);
}

ucs_status_t uct_gaudi_ipc_srv_revoke(pid_t pid, uint64_t export_id,
                                      uint64_t cookie, double timeout)
{
    return uct_gaudi_ipc_srv_request(pid, UCT_GAUDI_IPC_MSG_REVOKE, export_id,
                                     cookie, timeout, NULL);
}
