/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_INFO_H_
#define GAUDI_EMU_INFO_H_

#include "emu_ctx.h"

/* HL_IOCTL_INFO; returns 0 or -errno */
int emu_info_ioctl(emu_ctx_t *ctx, struct hl_info_args *args);

#endif
