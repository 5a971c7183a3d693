/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_ROUTE_H_
#define UCT_GAUDI_IPC_ROUTE_H_

#include <uct/gaudi/drv/gaudi_device.h>
#include <uct/gaudi/drv/gaudi_pci.h>

#include <stdint.h>

/*
 * Whether this process's device reaches a peer's device over PCIe: decided
 * once per peer device (drv/gaudi_pci.h) before its memory is imported,
 * because the out-of-tree driver imports without asking and a DMA over no
 * route loses data or hangs the device.
 */

#define UCT_GAUDI_IPC_ROUTES_MAX  32


typedef struct uct_gaudi_ipc_route {
    uint64_t bus_hash;      /* the peer device's (rkey bus_hash) */
    int      refused;
    char     why[256];      /* why not, when refused */
} uct_gaudi_ipc_route_t;

typedef struct uct_gaudi_ipc_routes {
    int                         check;  /* UCX_GAUDI_IPC_CHECK_PCI_ROUTE */
    const uct_gaudi_dev_t       *local; /* the owned device */
    int                         mine_read;   /* its path was read: */
    ucs_status_t                mine_status;
    uct_gaudi_pci_path_t        mine;
    unsigned                    count;  /* entries decided (wraps) */
    uct_gaudi_ipc_route_t       entries[UCT_GAUDI_IPC_ROUTES_MAX];
} uct_gaudi_ipc_routes_t;


void uct_gaudi_ipc_routes_init(uct_gaudi_ipc_routes_t *routes, int check,
                               const uct_gaudi_dev_t *local);


/* NULL if a peer DMA to the Gaudi whose bus id hashes to @a bus_hash has a
 * route, or none can be told (this sysfs shows no other Gaudi: a debug
 * line); else why not (a device without a route: warned once per device;
 * a hash of no Gaudi shown here: one fixed text, not kept). The check
 * trusts a peer's key for its device: it protects against platforms, not
 * against a peer of our uid that lies (it could ptrace us). Caller
 * serializes. */
const char *uct_gaudi_ipc_routes_refusal(uct_gaudi_ipc_routes_t *routes,
                                         uint64_t bus_hash);

#endif
