/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_DMABUF_H_
#define GAUDI_EMU_DMABUF_H_

#include "emu_ctx.h"

/* HL_MEM_OP_EXPORT_DMABUF_FD and the out-of-tree import (op 99) */

int emu_dmabuf_export(emu_ctx_t *ctx, union hl_mem_args *args);

int emu_dmabuf_import(emu_ctx_t *ctx, union hl_mem_args *args);

/* Is the DRAM mapping at @va exported (UNMAP must fail)? ctx->lock held */
int emu_dmabuf_exported(emu_ctx_t *ctx, uint64_t va);

/* Does a live DMA-BUF of this context hold HBM backing bytes
 * [offset, offset + length)? ctx->lock held */
int emu_dmabuf_range_exported(emu_ctx_t *ctx, uint64_t offset,
                              uint64_t length);

/* Number of this context's exported DMA-BUFs still referenced by anybody
 * (the exporter's fd or an importer); ctx->lock held */
unsigned emu_dmabuf_count_alive(emu_ctx_t *ctx);

/* A host-range mapping goes away: release its import, if it is one */
void emu_dmabuf_unmap_import(emu_ctx_t *ctx, emu_map_t *map);

/* Forget the exports of a closing context (live DMA-BUFs stay valid) */
void emu_dmabuf_cleanup(emu_ctx_t *ctx);

/* Device section lock held: mark the allocations behind live DMA-BUFs of
 * @dev as EMU_ALLOC_OWNER_EXPORTED (and give back those no longer held),
 * removing the files of dead DMA-BUFs */
void emu_dmabuf_protect(int dev, emu_shm_dev_t *sdev);

/* A DMA-BUF exported from device @dev that somebody still holds (an fd, an
 * import) keeps its exporter's device file open (export_dmabuf: get_file,
 * hl_ctx_get): returns that exporter's pid, 0 if none is held */
pid_t emu_dmabuf_holder(int dev);

#endif
