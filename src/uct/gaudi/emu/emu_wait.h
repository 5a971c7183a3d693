/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_WAIT_H_
#define GAUDI_EMU_WAIT_H_

#include "emu_ctx.h"

/* HL_IOCTL_WAIT_CS; returns 0 or -errno (status in args->out either way) */
int emu_wait_ioctl(emu_ctx_t *ctx, union hl_wait_cs_args *args);

#endif
