/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_MEM_H_
#define GAUDI_EMU_MEM_H_

#include "emu_ctx.h"

/* HL_IOCTL_MEMORY; returns 0 or -errno */
int emu_mem_ioctl(emu_ctx_t *ctx, union hl_mem_args *args);

/* Drop every mapping of a closing context */
void emu_mem_cleanup(emu_ctx_t *ctx);

#endif
