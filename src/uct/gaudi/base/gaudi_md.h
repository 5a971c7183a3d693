/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_MD_H_
#define UCT_GAUDI_MD_H_

/*
 * What the memory domains of both transports share (as src/uct/cuda/base
 * does for cuda_copy, cuda_ipc and gdr_copy): the resources they offer.
 */

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/gaudi/drv/gaudi_device.h>


/* One memory domain when this node has a Gaudi a process can own, none
 * otherwise (not uct_gaudi_query_md_resources: upstream's gaudi_gdr module
 * exports that name, and one process may load both modules) */
ucs_status_t uct_gaudi_query_mds(uct_component_t *component,
                                 uct_md_resource_desc_t **resources_p,
                                 unsigned *num_resources_p);


/* The one device of a transport on @a dev, named @a name, as an
 * accelerator near the Gaudi's PCI location */
ucs_status_t uct_gaudi_query_devices(uct_md_h md, uct_gaudi_dev_t *dev,
                                     const char *name,
                                     uct_tl_device_resource_t **tl_devices_p,
                                     unsigned *num_tl_devices_p);

#endif
