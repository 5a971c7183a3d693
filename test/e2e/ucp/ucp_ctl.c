/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* UCX's config.h, included first, may have it */
#endif
#include "ucp_ctl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CTL_BLOB_MAX     (1 << 20)
#define CTL_RETRY_USEC   100000


/* ---- connecting --------------------------------------------------------- */

/* Whether a failed connect() may succeed later: the server does not listen
 * yet (its UNIX socket does not exist yet), is busy, or we were
 * interrupted. Anything else (no route, a bad address) will not pass. */
static int ctl_connect_retryable(int err)
{
    return (err == ECONNREFUSED) || (err == ENOENT) || (err == EINTR) ||
           (err == EAGAIN) || (err == ETIMEDOUT);
}

/* One attempt at each of @a ai's addresses: the connected socket, or -1
 * with *@a retry_p set if one of them may pass later and *@a err_p the last
 * error */
static int ctl_connect_once(const struct addrinfo *ai, int *retry_p,
                            int *err_p)
{
    int fd;

    for (; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            *err_p = errno; /* an address family this host does not have */
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            return fd;
        }
        *err_p    = errno;
        *retry_p |= ctl_connect_retryable(errno);
        close(fd);
    }
    return -1;
}

/* Connect to one of @a ai's addresses, retrying for up to @a timeout
 * seconds while the server may not listen yet */
static void ctl_connect(ucp_ctl_t *ctl, const struct addrinfo *ai,
                        const char *where, double timeout)
{
    double deadline = ucp_app_now() + timeout;
    int retry, err  = 0;

    for (;;) {
        retry   = 0;
        ctl->fd = ctl_connect_once(ai, &retry, &err);
        if (ctl->fd >= 0) {
            return;
        }
        UCP_APP_CHECK(retry, "control channel: connecting to the %s at %s: "
                      "%s", ctl->peer, where, strerror(err));
        UCP_APP_CHECK(ucp_app_now() < deadline, "control channel: "
                      "connecting to the %s at %s: %s (still after %.0f s)",
                      ctl->peer, where, strerror(err), timeout);
        usleep(CTL_RETRY_USEC);
    }
}

void ucp_ctl_connect_tcp(ucp_ctl_t *ctl, const char *host, int port,
                         double timeout)
{
    struct addrinfo hints = {.ai_family   = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    char service[16], where[256];
    int rc;

    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(host, service, &hints, &res);
    UCP_APP_CHECK(rc == 0, "getaddrinfo(%s): %s", host, gai_strerror(rc));
    snprintf(where, sizeof(where), "%s:%d", host, port);
    ctl_connect(ctl, res, where, timeout);
    freeaddrinfo(res);
}

void ucp_ctl_connect_unix(ucp_ctl_t *ctl, const char *path, double timeout)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct addrinfo ai      = {
        .ai_family   = AF_UNIX,
        .ai_socktype = SOCK_STREAM,
        .ai_addrlen  = sizeof(addr),
        .ai_addr     = (struct sockaddr*)&addr
    };

    UCP_APP_CHECK(strlen(path) < sizeof(addr.sun_path), "-u %s: too long",
                  path);
    strcpy(addr.sun_path, path);
    ctl_connect(ctl, &ai, path, timeout);
}

/* Bind @a lfd to @a addr, accept one connection, close @a lfd */
static void ctl_accept(ucp_ctl_t *ctl, int lfd, const struct sockaddr *addr,
                       socklen_t addrlen, const char *where)
{
    UCP_APP_CHECK(lfd >= 0, "socket: %s", strerror(errno));
    UCP_APP_CHECK(bind(lfd, addr, addrlen) == 0, "bind to %s: %s", where,
                  strerror(errno));
    UCP_APP_CHECK(listen(lfd, 1) == 0, "listen: %s", strerror(errno));
    do {
        ctl->fd = accept(lfd, NULL, NULL);
    } while ((ctl->fd < 0) && (errno == EINTR));
    UCP_APP_CHECK(ctl->fd >= 0, "accept: %s", strerror(errno));
    close(lfd);
}

void ucp_ctl_accept_tcp(ucp_ctl_t *ctl, int port)
{
    struct sockaddr_in addr = {
        .sin_family      = AF_INET,
        .sin_port        = htons(port),
        .sin_addr.s_addr = htonl(INADDR_ANY)
    };
    int one = 1, lfd;
    char where[32];

    lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd >= 0) {
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    }
    snprintf(where, sizeof(where), "port %d", port);
    ctl_accept(ctl, lfd, (struct sockaddr*)&addr, sizeof(addr), where);
}

void ucp_ctl_accept_unix(ucp_ctl_t *ctl, const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};

    UCP_APP_CHECK(strlen(path) < sizeof(addr.sun_path), "-u %s: too long",
                  path);
    strcpy(addr.sun_path, path);
    unlink(path);
    ctl_accept(ctl, socket(AF_UNIX, SOCK_STREAM, 0),
               (struct sockaddr*)&addr, sizeof(addr), path);
    unlink(path);
}

pid_t ucp_ctl_fork(ucp_ctl_t *ctl)
{
    int sv[2];
    pid_t pid;

    UCP_APP_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0,
                  "socketpair: %s", strerror(errno));
    fflush(stdout); /* or the child prints it again */
    pid = fork();
    UCP_APP_CHECK(pid >= 0, "fork: %s", strerror(errno));
    ctl->fd = (pid == 0) ? sv[1] : sv[0];
    close((pid == 0) ? sv[0] : sv[1]);
    return pid;
}

void ucp_ctl_close(ucp_ctl_t *ctl)
{
    if (ctl->fd >= 0) {
        close(ctl->fd);
        ctl->fd = -1;
    }
}


/* ---- messages ----------------------------------------------------------- */

int ucp_ctl_pending(ucp_ctl_t *ctl)
{
    struct pollfd pfd = {.fd = ctl->fd, .events = POLLIN};

    return poll(&pfd, 1, 0) > 0;
}

void ucp_ctl_write(ucp_ctl_t *ctl, const void *buf, size_t len,
                   const char *what)
{
    const char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = send(ctl->fd, p, len, MSG_NOSIGNAL);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        }
        UCP_APP_CHECK(n > 0, "control channel: sending %s to the %s: %s",
                      what, ctl->peer, (n < 0) ? strerror(errno) :
                      "nothing was sent");
        p   += n;
        len -= n;
    }
}

void ucp_ctl_read(ucp_ctl_t *ctl, void *buf, size_t len, const char *what)
{
    char *p     = buf;
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        /* the peer may need us to progress before it can answer */
        if ((ctl->progress != NULL) && !ucp_ctl_pending(ctl) &&
            ctl->progress(ctl->arg)) {
            continue;
        }
        n = recv(ctl->fd, p + done, len - done, 0);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        }
        UCP_APP_CHECK(n >= 0, "control channel: reading %s from the %s: %s",
                      what, ctl->peer, strerror(errno));
        UCP_APP_CHECK(n > 0, "control channel: reading %s from the %s: it "
                      "closed the channel after %zu of %zu bytes (the %s "
                      "failed?)", what, ctl->peer, done, len, ctl->peer);
        done += n;
    }
}

void ucp_ctl_swap(ucp_ctl_t *ctl, const void *mine, void *peers, size_t len,
                  const char *what)
{
    ucp_ctl_write(ctl, mine, len, what);
    ucp_ctl_read(ctl, peers, len, what);
}

void ucp_ctl_send_blob(ucp_ctl_t *ctl, const void *buf, uint64_t len,
                       const char *what)
{
    ucp_ctl_write(ctl, &len, sizeof(len), what);
    ucp_ctl_write(ctl, buf, len, what);
}

void *ucp_ctl_recv_blob(ucp_ctl_t *ctl, uint64_t *len_p, const char *what)
{
    uint64_t len;
    char *buf;

    ucp_ctl_read(ctl, &len, sizeof(len), what);
    UCP_APP_CHECK(len < CTL_BLOB_MAX, "control channel: reading %s from the "
                  "%s: bad length %llu", what, ctl->peer,
                  (unsigned long long)len);
    buf = malloc(len + 1);
    UCP_APP_CHECK(buf != NULL, "out of memory");
    ucp_ctl_read(ctl, buf, len, what);
    buf[len] = '\0';
    if (len_p != NULL) {
        *len_p = len;
    }
    return buf;
}

void ucp_ctl_signal(ucp_ctl_t *ctl, uint32_t step)
{
    char what[32];

    snprintf(what, sizeof(what), "step %u", step);
    ucp_ctl_write(ctl, &step, sizeof(step), what);
}

void ucp_ctl_expect(ucp_ctl_t *ctl, uint32_t step)
{
    char what[32];
    uint32_t got;

    snprintf(what, sizeof(what), "step %u", step);
    ucp_ctl_read(ctl, &got, sizeof(got), what);
    UCP_APP_CHECK(got == step, "control channel out of step with the %s: "
                  "%u != %u", ctl->peer, got, step);
}

void ucp_ctl_sync(ucp_ctl_t *ctl, uint32_t step)
{
    ucp_ctl_signal(ctl, step);
    ucp_ctl_expect(ctl, step);
}


/* ---- UCP objects -------------------------------------------------------- */

ucp_address_t *ucp_ctl_swap_address(ucp_ctl_t *ctl, ucp_worker_h worker)
{
    ucp_address_t *address;
    size_t address_len;
    ucs_status_t status;

    status = ucp_worker_get_address(worker, &address, &address_len);
    UCP_APP_CHECK(status == UCS_OK, "ucp_worker_get_address: %s",
                  ucs_status_string(status));
    ucp_ctl_send_blob(ctl, address, address_len, "the worker address");
    ucp_worker_release_address(worker, address);
    return ucp_ctl_recv_blob(ctl, NULL, "the worker address");
}

ucp_rkey_h ucp_ctl_swap_rkey(ucp_ctl_t *ctl, ucp_context_h context,
                             ucp_mem_h memh, ucp_ep_h ep)
{
    void *rkey_buf, *peer_rkey_buf;
    ucs_status_t status;
    size_t rkey_len;
    ucp_rkey_h rkey;

    status = ucp_rkey_pack(context, memh, &rkey_buf, &rkey_len);
    UCP_APP_CHECK(status == UCS_OK, "ucp_rkey_pack: %s",
                  ucs_status_string(status));
    ucp_ctl_send_blob(ctl, rkey_buf, rkey_len, "an rkey");
    ucp_rkey_buffer_release(rkey_buf);
    peer_rkey_buf = ucp_ctl_recv_blob(ctl, NULL, "an rkey");
    status        = ucp_ep_rkey_unpack(ep, peer_rkey_buf, &rkey);
    UCP_APP_CHECK(status == UCS_OK, "ucp_ep_rkey_unpack: %s",
                  ucs_status_string(status));
    free(peer_rkey_buf);
    return rkey;
}
