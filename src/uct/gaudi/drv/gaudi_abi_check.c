/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

/*
 * Cross-check of our ABI (gaudi_abi.h) against the system's uAPI header,
 * when one is installed: the same layout list, asserted on the system's
 * definitions. This file must not include gaudi_abi.h (the two define the
 * same names).
 */

#include "gaudi_abi_check.h"

#include <stddef.h>

#if defined(HAVE_MISC_HABANALABS_H)
#  include <misc/habanalabs.h>
#  define UCT_GAUDI_ABI_SYSTEM_HEADER "misc/habanalabs.h"
#elif defined(HAVE_DRM_HABANALABS_ACCEL_H)
#  include <drm/habanalabs_accel.h>
#  define UCT_GAUDI_ABI_SYSTEM_HEADER "drm/habanalabs_accel.h"
#endif

#ifdef UCT_GAUDI_ABI_SYSTEM_HEADER
#  include <uct/gaudi/seam/gaudi_abi_layout.h>

/* each message names what differs (stringified before expansion) */
#  define UCT_GAUDI_ABI_SYS_SIZE(_type, _size) \
    _Static_assert(sizeof(_type) == (_size), \
                   "system uAPI header differs: sizeof(" #_type ")");
#  define UCT_GAUDI_ABI_SYS_OFFSET(_type, _field, _offset) \
    _Static_assert(offsetof(_type, _field) == (_offset), \
                   "system uAPI header differs: offset of " #_type "." \
                   #_field);
#  define UCT_GAUDI_ABI_SYS_VALUE(_name, _value) \
    _Static_assert((_name) == (_value), \
                   "system uAPI header differs: value of " #_name);

UCT_GAUDI_ABI_LAYOUT(UCT_GAUDI_ABI_SYS_SIZE, UCT_GAUDI_ABI_SYS_OFFSET,
                     UCT_GAUDI_ABI_SYS_VALUE)
#  ifdef HAVE_MISC_HABANALABS_H
UCT_GAUDI_ABI_LAYOUT_MISC(UCT_GAUDI_ABI_SYS_SIZE, UCT_GAUDI_ABI_SYS_VALUE)
#  endif
#endif


const char *uct_gaudi_abi_check_header(void)
{
#ifdef UCT_GAUDI_ABI_SYSTEM_HEADER
    return UCT_GAUDI_ABI_SYSTEM_HEADER;
#else
    return NULL;
#endif
}
