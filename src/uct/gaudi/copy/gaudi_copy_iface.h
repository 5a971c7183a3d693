/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_COPY_IFACE_H_
#define UCT_GAUDI_COPY_IFACE_H_

#include <uct/gaudi/base/gaudi_iface.h>


typedef uint64_t uct_gaudi_copy_iface_addr_t;


typedef struct uct_gaudi_copy_iface_config {
    uct_gaudi_iface_config_t super;
} uct_gaudi_copy_iface_config_t;


/* gaudi_copy: host <-> Gaudi and Gaudi <-> Gaudi on the owned device */
typedef struct uct_gaudi_copy_iface {
    uct_gaudi_iface_t            super;
    uct_gaudi_copy_iface_addr_t  id;         /* reachable only to itself */
} uct_gaudi_copy_iface_t;

#endif
