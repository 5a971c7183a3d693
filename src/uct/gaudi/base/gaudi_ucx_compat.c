/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

/*
 * The base iface class's answers to the forms of UCT's questions that only
 * a newer UCX asks (gaudi_ucx_compat.h says which): reachability with
 * parameters and a reason, and whether an endpoint is connected to a peer.
 * Each goes through the transport's own check (uct_gaudi_iface_ops_t).
 */

#include "gaudi_iface.h"


#define uct_gaudi_compat_ops(_iface) \
    ucs_derived_of((_iface)->super.internal_ops, uct_gaudi_iface_ops_t)

#if UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2
int uct_gaudi_iface_is_reachable_v2(
        const uct_iface_h tl_iface,
        const uct_iface_is_reachable_params_t *params)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_iface, uct_gaudi_iface_t);

    /* both addresses present, the info string cleared */
    if (!uct_iface_is_reachable_params_addrs_valid(params)) {
        return 0;
    }

    /* then, for the device scope, the same device (UCP asks both) */
    return uct_gaudi_compat_ops(iface)->iface_reachable(iface,
                                                         params->device_addr,
                                                         params->iface_addr,
                                                         params) &&
           uct_iface_scope_is_reachable(tl_iface, params);
}
#endif

#if UCX_GAUDI_HAVE_EP_IS_CONNECTED
int uct_gaudi_ep_is_connected(const uct_ep_h tl_ep,
                              const uct_ep_is_connected_params_t *params)
{
    uct_gaudi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                              uct_gaudi_iface_t);
    uct_gaudi_ep_is_peer_func_t is_peer;

    if (!uct_base_ep_is_connected(tl_ep, params)) {
        return 0;
    }

    /* reachable is not enough where the endpoint is of one peer only */
    is_peer = uct_gaudi_compat_ops(iface)->ep_is_peer;
    return (is_peer == NULL) ||
           ((params->field_mask & UCT_EP_IS_CONNECTED_FIELD_IFACE_ADDR) &&
            is_peer(tl_ep, params->iface_addr));
}
#endif
