/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The out-of-band control channel of the two-process e2e UCP programs
 * (gaudi_ipc_ucp, gaudi_fault_ucp): a stream socket between the two (TCP,
 * a UNIX socket, or a socketpair across a fork) that carries their worker
 * addresses, buffer addresses and rkeys, the results of each side, and the
 * lockstep (barriers) of their operations.
 *
 * Every call writes or reads whole messages: a short read or write goes
 * on, and an error or the peer closing the channel fails the program
 * (ucp_app_die) naming the peer and the step (@a what) that failed.
 */

#ifndef UCP_CTL_H_
#define UCP_CTL_H_

#include "ucp_app.h"

#include <sys/types.h>


typedef struct {
    int        fd;     /* the socket to the peer, -1 none */
    const char *peer;  /* the other process, as errors name it */
    /*
     * Called while waiting for the peer's bytes: progress what the peer may
     * need from this process to answer (UCP). Returns 0 if there is
     * nothing to progress: the read then blocks. NULL: always block.
     */
    int        (*progress)(void *arg);
    void       *arg;
} ucp_ctl_t;


/* The server: accept one connection on TCP @a port */
void ucp_ctl_accept_tcp(ucp_ctl_t *ctl, int port);

/* The client: connect to @a host:@a port. While the server does not
 * listen yet (refused, timed out, interrupted, busy), retry for up to
 * @a timeout seconds; any other error fails at once. */
void ucp_ctl_connect_tcp(ucp_ctl_t *ctl, const char *host, int port,
                         double timeout);

/* The same over a UNIX socket at @a path (reaches across network
 * namespaces): the server binds it and removes it once connected */
void ucp_ctl_accept_unix(ucp_ctl_t *ctl, const char *path);
void ucp_ctl_connect_unix(ucp_ctl_t *ctl, const char *path, double timeout);

/* fork() with a socketpair between parent and child: each keeps its end
 * in @a ctl. Returns fork's result (0 in the child). */
pid_t ucp_ctl_fork(ucp_ctl_t *ctl);

void ucp_ctl_close(ucp_ctl_t *ctl);

/* Whether the peer has written something not read yet */
int ucp_ctl_pending(ucp_ctl_t *ctl);

void ucp_ctl_write(ucp_ctl_t *ctl, const void *buf, size_t len,
                   const char *what);

/* Read exactly @a len bytes, progressing meanwhile (ucp_ctl_t::progress) */
void ucp_ctl_read(ucp_ctl_t *ctl, void *buf, size_t len, const char *what);

/* Write @a len bytes of ours, then read the peer's @a len */
void ucp_ctl_swap(ucp_ctl_t *ctl, const void *mine, void *peers, size_t len,
                  const char *what);

/* A blob of variable length (below 1 MiB) */
void ucp_ctl_send_blob(ucp_ctl_t *ctl, const void *buf, uint64_t len,
                       const char *what);

/* The peer's blob, malloc()ed with a '\0' after its *@a len_p (if not
 * NULL) bytes */
void *ucp_ctl_recv_blob(ucp_ctl_t *ctl, uint64_t *len_p, const char *what);

/* Lockstep: tell the peer this process reached @a step; wait until the
 * peer says it reached @a step; both (a barrier) */
void ucp_ctl_signal(ucp_ctl_t *ctl, uint32_t step);
void ucp_ctl_expect(ucp_ctl_t *ctl, uint32_t step);
void ucp_ctl_sync(ucp_ctl_t *ctl, uint32_t step);

/* Swap worker addresses: the peer's, malloc()ed */
ucp_address_t *ucp_ctl_swap_address(ucp_ctl_t *ctl, ucp_worker_h worker);

/* Swap the rkeys of @a memh and of the peer's counterpart: the peer's,
 * unpacked on @a ep */
ucp_rkey_h ucp_ctl_swap_rkey(ucp_ctl_t *ctl, ucp_context_h context,
                             ucp_mem_h memh, ucp_ep_h ep);

#endif
