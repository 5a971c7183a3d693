/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_CS_H_
#define GAUDI_EMU_CS_H_

#include "emu_ctx.h"

/* HL_IOCTL_CS; returns 0 or -errno */
int emu_cs_ioctl(emu_ctx_t *ctx, union hl_cs_args *args);

#endif
