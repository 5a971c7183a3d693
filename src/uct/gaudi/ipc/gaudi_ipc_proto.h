/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_PROTO_H_
#define UCT_GAUDI_IPC_PROTO_H_

/*
 * Wire formats of gaudi_ipc: the packed remote key and the messages of the
 * fd server. Both are fixed-size, host byte order (same host only).
 *
 * fd server: every process with an open gaudi_ipc MD listens on two
 * pathname UNIX sockets (SOCK_SEQPACKET) in the rendezvous directory
 * (UCX_GAUDI_IPC_DIR, gaudi_ipc_dir.h): "<id>" for requests and "<id>.rev"
 * for revocations, where <id> is 128 random bits in 32 hex digits, the
 * process's identity in gaudi_ipc. Only our uid can enter the directory
 * (0700, ours), so nobody else can connect, squat a name or learn one; a
 * peer is reachable when it shares the directory (a container mounts the
 * same host directory), whatever its PID or network namespace. A process's
 * identity is what its directory entry proves: the id, and the inode
 * number and change time the entry got when the process bound it (a later
 * socket on the same name, after the process exited, is another inode).
 * The remote key carries it; a GET_FD request carries the importer's id,
 * for the revocation. Both sides check the other's SO_PEERCRED uid.
 *   GET_FD  importer -> exporter "<id>": {export_id, cookie}; the reply
 *           carries the DMA-BUF fd (SCM_RIGHTS) when status is UCS_OK.
 *           Refused (status != UCS_OK, no fd, reason logged by the
 *           exporter) if export id / cookie do not match a live export, or
 *           the importer's own entry is not in the exporter's directory
 *           (it could not be revoked).
 *   REVOKE  exporter -> importer "<id>.rev", when the export goes
 *           (deregistration or free): {export_id, cookie}; the importer
 *           drops its mapping of that export (now, or when the operations
 *           using it complete) and replies with its status.
 *   A connection closed without a request is a liveness probe (ep_check).
 * No message may carry descriptors but a GET_FD reply (exactly one).
 */

#include <stdint.h>


#define UCT_GAUDI_IPC_MSG_MAGIC    0x32504947u  /* "GIP2" */
/* Suffix of the revocation socket's entry */
#define UCT_GAUDI_IPC_REV_SUFFIX   ".rev"
/* "<32 hex digits>.rev" and its NUL */
#define UCT_GAUDI_IPC_ENTRY_NAME_MAX  40


typedef enum {
    UCT_GAUDI_IPC_MSG_GET_FD = 1,
    UCT_GAUDI_IPC_MSG_REVOKE = 2
} uct_gaudi_ipc_msg_op_t;


/* A process's identity in gaudi_ipc: the name of its fd server's entry in
 * the rendezvous directory (random) */
typedef struct uct_gaudi_ipc_srv_id {
    uint64_t hi;
    uint64_t lo;
} uct_gaudi_ipc_srv_id_t;


/* What the entry of a process's fd server proves (32 bytes): its name, and
 * the inode it got when the process bound it */
typedef struct uct_gaudi_ipc_entry {
    uct_gaudi_ipc_srv_id_t id;
    uint64_t               ino;      /* st_ino of the socket's entry */
    uint64_t               ctime;    /* its st_ctim, in ns */
} uct_gaudi_ipc_entry_t;


/* A request or its reply (48 bytes) */
typedef struct uct_gaudi_ipc_msg {
    uint32_t               magic;     /* UCT_GAUDI_IPC_MSG_MAGIC */
    uint32_t               op;        /* uct_gaudi_ipc_msg_op_t */
    uint64_t               export_id;
    uint64_t               cookie;
    uct_gaudi_ipc_srv_id_t sender;    /* the sender's fd server */
    int32_t                pid;       /* sender's pid in its own PID
                                         namespace: for log lines only */
    int32_t                status;    /* reply: ucs_status_t; request: 0 */
} uct_gaudi_ipc_msg_t;


/* Packed remote key (112 bytes). [base, base + length) is the exported
 * allocation (what the importer maps); the key grants only the registered
 * range [base + range_offset, base + range_offset + range_length) of it. */
typedef struct uct_gaudi_ipc_rkey {
    uint64_t              system_id;  /* ucs_get_system_id() (boot id) */
    int32_t               pid;        /* exporter's pid in its own PID
                                         namespace: for log lines only */
    uint32_t              dev_index;  /* exporter's device (logical index) */
    uint64_t              export_id;  /* per-process export number, never
                                         reused */
    uint64_t              cookie;     /* random, checked by the exporter's fd
                                         server */
    uint64_t              base;       /* device VA of the exported
                                         allocation */
    uint64_t              length;     /* its length (the DMA-BUF size) */
    uint64_t              offset;     /* DMA-BUF offset of @base (0: whole
                                         allocation) */
    uint64_t              bus_hash;   /* uct_gaudi_pci_bus_hash of the
                                         exporter device's PCI bus id */
    uct_gaudi_ipc_entry_t srv;        /* the exporter's fd server */
    uint64_t              range_offset; /* registered range, from @base */
    uint64_t              range_length;
} uct_gaudi_ipc_rkey_t;


static inline int uct_gaudi_ipc_srv_id_equal(const uct_gaudi_ipc_srv_id_t *a,
                                             const uct_gaudi_ipc_srv_id_t *b)
{
    return (a->hi == b->hi) && (a->lo == b->lo);
}

#endif
