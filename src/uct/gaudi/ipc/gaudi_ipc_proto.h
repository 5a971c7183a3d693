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
 * UNIX socket "\0" UCT_GAUDI_IPC_SOCK_PREFIX "<pid>" (SOCK_SEQPACKET).
 *   GET_FD  importer -> exporter: {export_id, cookie}; the reply carries the
 *           DMA-BUF fd (SCM_RIGHTS) when status is UCS_OK. Refused (status
 *           != UCS_OK, no fd, reason logged by the exporter) if the peer's
 *           uid (SO_PEERCRED) differs, or export id / cookie do not match a
 *           live export.
 *   REVOKE  exporter -> importer, at deregistration: {export_id, cookie};
 *           the importer drops its mapping of that export (now, or when the
 *           operations using it complete) and replies with its status.
 */

#include <stdint.h>


#define UCT_GAUDI_IPC_SOCK_PREFIX  "ucx-gaudi-ipc-"
#define UCT_GAUDI_IPC_MSG_MAGIC    0x43504947u  /* "GIPC" */


typedef enum {
    UCT_GAUDI_IPC_MSG_GET_FD = 1,
    UCT_GAUDI_IPC_MSG_REVOKE = 2
} uct_gaudi_ipc_msg_op_t;


/* A request or its reply (32 bytes) */
typedef struct uct_gaudi_ipc_msg {
    uint32_t magic;       /* UCT_GAUDI_IPC_MSG_MAGIC */
    uint32_t op;          /* uct_gaudi_ipc_msg_op_t */
    uint64_t export_id;
    uint64_t cookie;
    int32_t  pid;         /* sender's pid */
    int32_t  status;      /* reply: ucs_status_t; request: 0 */
} uct_gaudi_ipc_msg_t;


/* Packed remote key (64 bytes) */
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
} uct_gaudi_ipc_rkey_t;

#endif
