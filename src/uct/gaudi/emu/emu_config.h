/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_CONFIG_H_
#define GAUDI_EMU_CONFIG_H_

#include "emu_common.h"

#define EMU_MAX_HBM_SIZE       (1ull << 40)

/* Validate @config and load it into emu_g; -EINVAL with a message */
int emu_config_load(const gaudi_emu_config_t *config);

/* Does @config equal the loaded configuration? */
int emu_config_same(const gaudi_emu_config_t *config);

#endif
