/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_route.h"

#include <uct/gaudi/drv/gaudi_pci.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <string.h>

/* the refusal of a key whose device this host does not show: one text, so
 * that a peer sending many such keys cannot fill the log (it is logged
 * once, by the caller) */
#define UCT_GAUDI_IPC_ROUTE_UNKNOWN \
    "its device is no Gaudi this host shows: no PCIe route can be checked"


void uct_gaudi_ipc_routes_init(uct_gaudi_ipc_routes_t *routes, int check,
                               const uct_gaudi_dev_t *local)
{
    memset(routes, 0, sizeof(*routes));
    routes->check = check;
    routes->local = local;
}

/* Decide the route to the Gaudi at @a bdf into @a route */
static void uct_gaudi_ipc_route_decide(uct_gaudi_ipc_routes_t *routes,
                                       const char *bdf,
                                       uct_gaudi_ipc_route_t *route)
{
    const uct_gaudi_dev_info_t *local = routes->local->info;
    uct_gaudi_pci_path_t peer;
    char how[200];

    if (!routes->mine_read) {
        routes->mine_status = uct_gaudi_pci_path_read(local->bus_id,
                                                      &routes->mine);
        routes->mine_read   = 1;
    }

    if ((routes->mine_status != UCS_OK) ||
        (uct_gaudi_pci_path_read(bdf, &peer) != UCS_OK)) {
        ucs_debug("gaudi_ipc: the PCIe path of %s (%s) or of the Gaudi at %s "
                  "cannot be read here: imported unchecked", local->name,
                  local->bus_id, bdf);
        return;
    }

    if (uct_gaudi_pci_route(&routes->mine, &peer,
                            uct_gaudi_pci_cpu_forwards(),
                            uct_gaudi_pci_isolated(local->bus_id, bdf), how,
                            sizeof(how))) {
        ucs_debug("gaudi_ipc: PCIe route from %s (%s) to the Gaudi at %s: "
                  "%s", local->name, local->bus_id, bdf, how);
        return;
    }

    route->refused = 1;
    ucs_snprintf_safe(route->why, sizeof(route->why),
                      "no PCIe peer-to-peer route from %s to %s: %s",
                      local->bus_id, bdf, how);
    ucs_warn("gaudi_ipc: %s (%s); transfers between them are staged through "
             "host memory (UCX_GAUDI_IPC_CHECK_PCI_ROUTE=n imports anyway, "
             "for a platform known to forward peer DMA)", local->name,
             route->why);
}

const char *uct_gaudi_ipc_routes_refusal(uct_gaudi_ipc_routes_t *routes,
                                         uint64_t bus_hash)
{
    const uct_gaudi_dev_info_t *local;
    char bdf[UCS_SYS_BDF_NAME_MAX];
    uct_gaudi_ipc_route_t *route;
    unsigned i, num_gaudis;

    if (!routes->check || (routes->local == NULL)) {
        return NULL;
    }

    local = routes->local->info;
    if ((local->bus_id[0] == '\0') ||
        (bus_hash == uct_gaudi_pci_bus_hash(local->bus_id))) {
        return NULL;
    }

    for (i = 0; i < ucs_min(routes->count, UCT_GAUDI_IPC_ROUTES_MAX); ++i) {
        if (routes->entries[i].bus_hash == bus_hash) {
            return routes->entries[i].refused ? routes->entries[i].why : NULL;
        }
    }

    if (uct_gaudi_pci_find(bus_hash, bdf, sizeof(bdf), &num_gaudis) !=
        UCS_OK) {
        /* a container shown only its own device cannot tell; where others
         * are shown, the key names a device that is not there (a peer of
         * an older version, or one that lies): not imported. Not kept, so
         * that such keys cannot push real decisions out */
        if (num_gaudis <= 1) {
            ucs_debug("gaudi_ipc: the PCIe route from %s to a peer's device "
                      "cannot be told here (this sysfs shows no other Gaudi): "
                      "imported unchecked", local->name);
            return NULL;
        }
        return UCT_GAUDI_IPC_ROUTE_UNKNOWN;
    }

    /* more peer devices than entries: the oldest decision is made again */
    route = &routes->entries[routes->count++ % UCT_GAUDI_IPC_ROUTES_MAX];
    memset(route, 0, sizeof(*route));
    route->bus_hash = bus_hash;
    uct_gaudi_ipc_route_decide(routes, bdf, route);
    return route->refused ? route->why : NULL;
}
