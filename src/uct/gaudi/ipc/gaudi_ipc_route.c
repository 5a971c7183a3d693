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


void uct_gaudi_ipc_routes_init(uct_gaudi_ipc_routes_t *routes, int check,
                               const uct_gaudi_dev_t *local)
{
    memset(routes, 0, sizeof(*routes));
    routes->check = check;
    routes->local = local;
}

/* Decide the route to the device of @a route->bus_hash */
static void uct_gaudi_ipc_route_decide(const uct_gaudi_dev_t *dev,
                                       uct_gaudi_ipc_route_t *route)
{
    const uct_gaudi_dev_info_t *local = dev->info;
    uct_gaudi_pci_path_t mine, peer;
    char bdf[UCS_SYS_BDF_NAME_MAX], how[200];

    if ((uct_gaudi_pci_find(route->bus_hash, bdf, sizeof(bdf)) != UCS_OK) ||
        (uct_gaudi_pci_path_read(local->bus_id, &mine) != UCS_OK) ||
        (uct_gaudi_pci_path_read(bdf, &peer) != UCS_OK)) {
        /* a container that sees only its own device: nothing to read */
        ucs_debug("gaudi_ipc: the PCIe route from %s (%s) to a peer's device "
                  "cannot be told here (not in this sysfs): imported "
                  "unchecked", local->name, local->bus_id);
        return;
    }

    if (uct_gaudi_pci_route(&mine, &peer, uct_gaudi_pci_cpu_forwards(), how,
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
    uct_gaudi_ipc_route_t *route;
    unsigned i;

    if (!routes->check || (routes->local == NULL) ||
        (routes->local->info->bus_id[0] == '\0') ||
        (bus_hash == ucs_string_to_id(routes->local->info->bus_id))) {
        return NULL;
    }

    for (i = 0; i < ucs_min(routes->count, UCT_GAUDI_IPC_ROUTES_MAX); ++i) {
        if (routes->entries[i].bus_hash == bus_hash) {
            return routes->entries[i].refused ? routes->entries[i].why : NULL;
        }
    }

    /* more peer devices than entries: the oldest decision is made again */
    route = &routes->entries[routes->count++ % UCT_GAUDI_IPC_ROUTES_MAX];
    memset(route, 0, sizeof(*route));
    route->bus_hash = bus_hash;
    uct_gaudi_ipc_route_decide(routes->local, route);
    return route->refused ? route->why : NULL;
}
