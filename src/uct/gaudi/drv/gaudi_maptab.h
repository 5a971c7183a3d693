/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_MAPTAB_H_
#define UCT_GAUDI_MAPTAB_H_

/*
 * GAUDI_MAPPING_TABLE: an optional JSON array mapping logical device indices
 * to physical devices, e.g.
 *   [{"index":0,"module_id":2,"bus_id":"0000:33:00.0"}, ...]
 * Each entry needs "index" and at least one of "module_id" and "bus_id"
 * (both, when given, must name the same device). Devices the table does not
 * name take the remaining logical indices in physical order.
 */

#include "gaudi_discover.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/**
 * Parse @a json against the discovered devices @a devs (physical order).
 * Pure function: no environment, no device access.
 *
 * @param [out] order  order[logical index] = position in @a devs; filled
 *                     only on success.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM after one ucs_error naming the
 *         problem (and the entry number); the caller then keeps the
 *         identity order.
 */
ucs_status_t uct_gaudi_maptab_parse(const char *json,
                                    const uct_gaudi_dev_info_t *devs,
                                    unsigned num_devs, unsigned *order);

END_C_DECLS

#endif
