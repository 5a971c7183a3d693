/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_md.h"
#include "gaudi_tls.h"

#include <uct/gaudi/drv/gaudi_lib.h>


ucs_status_t uct_gaudi_query_mds(uct_component_t *component,
                                 uct_md_resource_desc_t **resources_p,
                                 unsigned *num_resources_p)
{
    /* UCP asks every component at ucp_init, before it selects transports
     * or opens an interface: the one point a UCX_TLS mistake is seen in
     * every UCX version (UCP 1.22 opens no interface for a list it cannot
     * use) */
    uct_gaudi_tls_check();

    if ((uct_gaudi_lib_init() != UCS_OK) ||
        (uct_gaudi_lib_num_usable() == 0)) {
        return uct_md_query_empty_md_resource(resources_p, num_resources_p);
    }

    return uct_md_query_single_md_resource(component, resources_p,
                                           num_resources_p);
}

ucs_status_t uct_gaudi_query_devices(uct_md_h md, uct_gaudi_dev_t *dev,
                                     const char *name,
                                     uct_tl_device_resource_t **tl_devices_p,
                                     unsigned *num_tl_devices_p)
{
    return uct_single_device_resource(md, name, UCT_DEVICE_TYPE_ACC,
                                      dev->info->sys_dev, tl_devices_p,
                                      num_tl_devices_p);
}
