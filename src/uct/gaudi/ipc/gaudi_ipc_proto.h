/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_PROTO_H_
#define UCT_GAUDI_IPC_PROTO_H_

/*
 * Wire formats of gaudi_ipc: the packed remote key and the messages of the
 * fd server. Both are fixed-size, host byte order (same node only).
 *
 * fd server: every process with an open gaudi_ipc MD listens on the abstract
 * UNIX socket "\0" UCT_GAUDI_IPC_SOCK_PREFIX "<pid>-<nonce>"
 * (SOCK_SEQPACKET), the nonce a random 64-bit number in 16 hex digits, so
 * that nobody can take the name in advance. The remote key carries it; a
 * GET_FD request carries the importer's, for the revocation. Both sides
 * check the other's SO_PEERCRED: same uid (the server closes other uids'
 * connections unanswered), and the client the pid it meant to reach.
 *   GET_FD  importer -> exporter: {export_id, cookie}; the reply carries the
 *           DMA-BUF fd (SCM_RIGHTS) when status is UCS_OK. Refused (status
 *           != UCS_OK, no fd, reason logged by the exporter) if export id /
 *           cookie do not match a live export.
 *   REVOKE  exporter -> importer, when the export goes (deregistration or
 *           free): {export_id, cookie}; the importer drops its mapping of
 *           that export (now, or when the operations using it complete) and
 *           replies with its status. The exporter sends it to all its
 *           importers at once and waits for all under one deadline.
 * No message may carry descriptors but a GET_FD reply (exactly one).
 */

#include <stdint.h>


#define UCT_GAUDI_IPC_SOCK_PREFIX  "ucx-gaudi-ipc-"
#define UCT_GAUDI_IPC_MSG_MAGIC    0x43504947u  /* "GIPC" */


typedef enum {
    UCT_GAUDI_IPC_MSG_GET_FD = 1,
    UCT_GAUDI_IPC_MSG_REVOKE = 2
} uct_gaudi_ipc_msg_op_t;


/* A request or its reply (40 bytes) */
typedef struct uct_gaudi_ipc_msg {
    uint32_t magic;       /* UCT_GAUDI_IPC_MSG_MAGIC */
    uint32_t op;          /* uct_gaudi_ipc_msg_op_t */
    uint64_t export_id;
    uint64_t cookie;
    int32_t  pid;         /* sender's pid */
    int32_t  status;      /* reply: ucs_status_t; request: 0 */
    uint64_t nonce;       /* sender's fd-server nonce */
} uct_gaudi_ipc_msg_t;


/* Packed remote key (96 bytes). [base, base + length) is the exported
 * allocation (what the importer maps); the key grants only the registered
 * range [base + range_offset, base + range_offset + range_length) of it. */
typedef struct uct_gaudi_ipc_rkey {
    uint64_t system_id;   /* ucs_get_system_id() of the exporter */
    int32_t  pid;         /* exporter's pid */
    uint32_t dev_index;   /* exporter's device (logical index) */
    uint64_t export_id;   /* per-process export number, never reused */
    uint64_t cookie;      /* random, checked by the exporter's fd server */
    uint64_t base;        /* device VA of the exported allocation */
    uint64_t length;      /* its length (the DMA-BUF size) */
    uint64_t offset;      /* DMA-BUF offset of @base (0: whole allocation) */
    uint64_t bus_hash;    /* hash of the exporter device's PCI bus id */
    uint64_t srv_nonce;   /* of the exporter's fd-server name */
    uint64_t start_time;  /* ucs_sys_get_proc_create_time() of the pid */
    uint64_t range_offset; /* registered range, from @base */
    uint64_t range_length;
} uct_gaudi_ipc_rkey_t;

#endif
