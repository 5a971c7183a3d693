/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_IFACE_H_
#define UCT_GAUDI_IPC_IFACE_H_

#include "gaudi_ipc_md.h"

#include <uct/gaudi/base/gaudi_iface.h>


#define UCT_GAUDI_IPC_DEV_NAME "gaudi_ipc"


/* Device address: the host, and the rendezvous directory (whoever shares
 * it can reach us, whatever its network or PID namespace) */
typedef struct uct_gaudi_ipc_device_addr {
    uint64_t system_id;   /* ucs_get_system_id(): the boot id */
    uint64_t dir_dev;     /* the directory's st_dev and st_ino */
    uint64_t dir_ino;
} uct_gaudi_ipc_device_addr_t;


/* Interface address: the process, by what its fd server's entry proves */
typedef struct uct_gaudi_ipc_iface_addr {
    uct_gaudi_ipc_entry_t srv;
    uint64_t              pid;  /* in its own PID namespace: log lines */
} uct_gaudi_ipc_iface_addr_t;


typedef struct uct_gaudi_ipc_iface_config {
    uct_gaudi_iface_config_t super;
} uct_gaudi_ipc_iface_config_t;


/* gaudi_ipc: the owned device's DMA engine between this process's memory
 * and a peer's Gaudi memory it imported */
typedef struct uct_gaudi_ipc_iface {
    uct_gaudi_iface_t  super;
    uct_gaudi_ipc_md_t *md;
} uct_gaudi_ipc_iface_t;


/* One zero-copy operation in flight: holds the remote mapping */
typedef struct uct_gaudi_ipc_op {
    uct_gaudi_op_t      super;
    uct_gaudi_ipc_map_t *map;
} uct_gaudi_ipc_op_t;

#endif
