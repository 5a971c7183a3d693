/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_CB_H_
#define GAUDI_EMU_CB_H_

#include "emu_ctx.h"

#include <sys/types.h>

/* HL_MMAP_TYPE_CB, in bytes: handles double as mmap offsets */
#define EMU_CB_HANDLE_TAG   (0x2ull << 59)

/* HL_IOCTL_CB; returns 0 or -errno */
int emu_cb_ioctl(emu_ctx_t *ctx, union hl_cb_args *args);

/* The seam's mmap of a CB handle (MAP_FAILED/errno on failure) */
void *emu_cb_mmap(emu_ctx_t *ctx, void *addr, size_t length, int prot,
                  int flags, off_t offset);

/* Forget a user mapping of a CB of @ctx at @addr (caller unmaps) */
void emu_cb_unmapped(emu_ctx_t *ctx, void *addr);

/* Copy the first @size bytes of kernel CB @handle; -EINVAL if there is no
 * such CB or @size is out of bounds */
int emu_cb_copy(emu_ctx_t *ctx, uint64_t handle, uint32_t size,
                uint8_t **copy_p);

void emu_cb_cleanup(emu_ctx_t *ctx);

#endif
