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
#include <errno.h>
#include <string.h>
#include <unistd.h>


/* Most descriptors a reply may carry that we still look at: with more the
 * kernel sets MSG_CTRUNC and drops the rest itself */
#define UCT_GAUDI_IPC_SOCK_MAX_RX_FDS  4


void uct_gaudi_ipc_msg_init(const uct_gaudi_ipc_srv_t *srv,
                            uct_gaudi_ipc_msg_t *msg, uint32_t op,
                            uint64_t export_id, uint64_t cookie)
{
    memset(msg, 0, sizeof(*msg));
    msg->magic     = UCT_GAUDI_IPC_MSG_MAGIC;
    msg->op        = op;
    msg->export_id = export_id;
    msg->cookie    = cookie;
    msg->sender    = srv->entry.id;
    msg->pid       = getpid();
}

ssize_t uct_gaudi_ipc_sock_send(int sock, const uct_gaudi_ipc_msg_t *msg,
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

    return sendmsg(sock, &hdr, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Close every descriptor of the SCM_RIGHTS messages in @a hdr but the
 * first one if @a keep; returns how many there were */
static unsigned uct_gaudi_ipc_sock_take_fds(struct msghdr *hdr, int keep,
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

ssize_t uct_gaudi_ipc_sock_recv_fd(int sock, uct_gaudi_ipc_msg_t *msg,
                                   int *fd_p)
{
    char control[CMSG_SPACE(UCT_GAUDI_IPC_SOCK_MAX_RX_FDS * sizeof(int))];
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
    len                = recvmsg(sock, &hdr, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (len < 0) {
        return len;
    }

    count = uct_gaudi_ipc_sock_take_fds(&hdr, 1, fd_p);
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
 * Without a control buffer the kernel installs no descriptor (it drops them
 * and sets MSG_CTRUNC), so nothing a peer attaches ever reaches our
 * descriptor table. A message longer than the protocol's is not one of
 * ours either: recvmsg() returns the bytes that fit (a valid request as its
 * first bytes would pass the length check) and says so only in MSG_TRUNC.
 */
ssize_t uct_gaudi_ipc_sock_recv_request(int sock, uct_gaudi_ipc_msg_t *msg)
{
    struct iovec iov = {msg, sizeof(*msg)};
    struct msghdr hdr;
    ssize_t len;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov    = &iov;
    hdr.msg_iovlen = 1;
    len            = recvmsg(sock, &hdr, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if ((len >= 0) && (hdr.msg_flags & MSG_CTRUNC)) {
        errno = EPROTO;  /* it attached descriptors (or credentials) */
        return -1;
    } else if ((len >= 0) && (hdr.msg_flags & MSG_TRUNC)) {
        errno = EMSGSIZE;
        return -1;
    }

    return len;
}

ucs_status_t uct_gaudi_ipc_sock_connect(const uct_gaudi_ipc_srv_t *srv,
                                        int sock, const char *name)
{
    struct sockaddr_un addr;
    socklen_t addr_len;

    addr_len = uct_gaudi_ipc_dir_addr(&srv->dir, name, &addr);
    if (addr_len == 0) {
        errno = ENAMETOOLONG;
        return UCS_ERR_UNREACHABLE;
    }

    if (connect(sock, (struct sockaddr*)&addr, addr_len) == 0) {
        return UCS_OK;
    }

    return ((errno == EAGAIN) || (errno == EWOULDBLOCK) ||
            (errno == EINPROGRESS)) ? UCS_ERR_NO_RESOURCE :
                                      UCS_ERR_UNREACHABLE;
}

int uct_gaudi_ipc_sock_peer_is_ours(int sock, const char *what, pid_t *pid_p)
{
    struct ucred cred;
    socklen_t cred_len = sizeof(cred);

    *pid_p = 0;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0) {
        ucs_diag("gaudi_ipc: SO_PEERCRED failed: %m");
        return 0;
    }

    *pid_p = cred.pid;
    if (cred.uid != geteuid()) {
        /* the directory is ours: only root or a misconfiguration puts
         * another uid's socket there */
        ucs_diag("gaudi_ipc: %s is pid %d of uid %u, not ours (uid %u): "
                 "refused", what, (int)cred.pid, cred.uid, geteuid());
        return 0;
    }

    return 1;
}
