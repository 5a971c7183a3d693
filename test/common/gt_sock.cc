/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "gt_sock.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>


namespace gaudi_test {

/* ---- sockets ------------------------------------------------------------- */

/* Room for the control messages of one sendmsg()/recvmsg(), aligned as
 * CMSG_FIRSTHDR() and CMSG_DATA() expect (a char array alone is not) */
union control_buf {
    struct cmsghdr align;
    char           buf[CMSG_SPACE(MAX_MSG_FDS * sizeof(int)) +
                       CMSG_SPACE(sizeof(struct ucred))];
};

socklen_t unix_addr(const std::string &path, struct sockaddr_un *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr->sun_path)) {
        /* a cut path names another socket: refuse, as the kernel would */
        errno = ENAMETOOLONG;
        return 0;
    }
    memcpy(addr->sun_path, path.data(), path.size());
    return offsetof(struct sockaddr_un, sun_path) + path.size() + 1;
}

/* Close @a fd keeping errno; -1 */
static int close_keep_errno(int fd)
{
    int err = errno;

    close(fd);
    errno = err;
    return -1;
}

int connect_unix(const std::string &path, int type, bool nonblock)
{
    struct sockaddr_un addr;
    socklen_t len = unix_addr(path, &addr);
    int fd;

    if (len == 0) {
        return -1;
    }
    fd = socket(AF_UNIX, type | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
                0);
    if ((fd >= 0) && (connect(fd, (struct sockaddr*)&addr, len) != 0)) {
        return close_keep_errno(fd);
    }
    return fd;
}

int listen_unix(const std::string &path, int backlog)
{
    struct sockaddr_un addr;
    socklen_t len = unix_addr(path, &addr);
    int fd;

    if (len == 0) {
        return -1;
    }
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if ((fd >= 0) && ((bind(fd, (struct sockaddr*)&addr, len) != 0) ||
                      (listen(fd, backlog) != 0))) {
        return close_keep_errno(fd);
    }
    return fd;
}

ssize_t send_fds(int sock, const void *data, size_t length, const int *fds,
                 unsigned num_fds, bool creds)
{
    struct iovec iov = {const_cast<void*>(data), length};
    struct ucred cred;
    struct cmsghdr *cmsg;
    struct msghdr hdr;
    control_buf control;

    num_fds = std::min(num_fds, MAX_MSG_FDS);
    memset(&control, 0, sizeof(control));
    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov    = &iov;
    hdr.msg_iovlen = 1;
    if ((num_fds == 0) && !creds) {
        return sendmsg(sock, &hdr, MSG_NOSIGNAL);
    }

    hdr.msg_control    = control.buf;
    hdr.msg_controllen = ((num_fds > 0) ? CMSG_SPACE(num_fds * sizeof(int)) :
                                          0) +
                         (creds ? CMSG_SPACE(sizeof(cred)) : 0);
    cmsg               = CMSG_FIRSTHDR(&hdr);
    if (num_fds > 0) {
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type  = SCM_RIGHTS;
        cmsg->cmsg_len   = CMSG_LEN(num_fds * sizeof(int));
        memcpy(CMSG_DATA(cmsg), fds, num_fds * sizeof(int));
        cmsg = CMSG_NXTHDR(&hdr, cmsg);
    }
    if (creds) {
        cred.pid         = getpid();
        cred.uid         = getuid();
        cred.gid         = getgid();
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type  = SCM_CREDENTIALS;
        cmsg->cmsg_len   = CMSG_LEN(sizeof(cred));
        memcpy(CMSG_DATA(cmsg), &cred, sizeof(cred));
    }
    return sendmsg(sock, &hdr, MSG_NOSIGNAL);
}

ssize_t recv_fds(int sock, void *data, size_t length, std::vector<int> *fds,
                 int flags)
{
    struct iovec iov = {data, length};
    struct cmsghdr *cmsg;
    struct msghdr hdr;
    control_buf control;
    size_t i, count;
    ssize_t len;
    int fd;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov        = &iov;
    hdr.msg_iovlen     = 1;
    hdr.msg_control    = control.buf;
    hdr.msg_controllen = sizeof(control.buf);
    len                = recvmsg(sock, &hdr, flags | MSG_CMSG_CLOEXEC);
    if (len < 0) {
        return len;
    }

    for (cmsg = CMSG_FIRSTHDR(&hdr); cmsg != NULL;
         cmsg = CMSG_NXTHDR(&hdr, cmsg)) {
        if ((cmsg->cmsg_level != SOL_SOCKET) ||
            (cmsg->cmsg_type != SCM_RIGHTS)) {
            continue;
        }
        count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (i = 0; i < count; ++i) {
            memcpy(&fd, CMSG_DATA(cmsg) + (i * sizeof(int)), sizeof(int));
            fds->push_back(fd);
        }
    }
    return len;
}

void close_fds(std::vector<int> *fds)
{
    for (int fd : *fds) {
        close(fd);
    }
    fds->clear();
}

} /* namespace gaudi_test */
