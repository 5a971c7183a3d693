/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_TEST_GT_SOCK_H_
#define GAUDI_TEST_GT_SOCK_H_

/*
 * UNIX sockets as the tests use them: by path, with descriptors
 * (SCM_RIGHTS) and credentials (SCM_CREDENTIALS) attached. The one place in
 * test/ that builds control messages.
 */

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <string>
#include <vector>


namespace gaudi_test {

/* ---- sockets ------------------------------------------------------------- */

/* The most descriptors send_fds() attaches and recv_fds() takes */
static const unsigned MAX_MSG_FDS = 16;

/* The address of @a path and its length; 0 (errno ENAMETOOLONG) if the
 * path does not fit */
socklen_t unix_addr(const std::string &path, struct sockaddr_un *addr);

/* A socket of @a type connected to @a path, or -1 (errno) */
int connect_unix(const std::string &path, int type, bool nonblock);

/* A listening SOCK_SEQPACKET socket bound at @a path, or -1 (errno) */
int listen_unix(const std::string &path, int backlog = 64);

/* sendmsg() of @a length bytes with @a num_fds descriptors (at most
 * MAX_MSG_FDS) and, if @a creds, our pid, uid and gid attached; what
 * sendmsg() returned */
ssize_t send_fds(int sock, const void *data, size_t length, const int *fds,
                 unsigned num_fds, bool creds = false);

/* recvmsg() of one message of at most @a length bytes (@a flags, and
 * MSG_CMSG_CLOEXEC); the descriptors that came with it are appended to
 * *fds, which the caller closes. What recvmsg() returned */
ssize_t recv_fds(int sock, void *data, size_t length, std::vector<int> *fds,
                 int flags = 0);

/* Close every descriptor of @a fds and empty it */
void close_fds(std::vector<int> *fds);

} /* namespace gaudi_test */

#endif
