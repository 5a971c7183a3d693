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


/* Device address: the system and, outside the default one, the network
 * namespace (the fd server's abstract socket lives in one); interface
 * address: the process */
typedef uct_iface_local_addr_ns_t uct_gaudi_ipc_device_addr_t;
typedef uint64_t uct_gaudi_ipc_iface_addr_t;


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
