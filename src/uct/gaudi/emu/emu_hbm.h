/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_HBM_H_
#define GAUDI_EMU_HBM_H_

#include "emu_state.h"

/*
 * Device-memory page allocator over the shared page map of a device. All
 * functions need the device section lock.
 */

/* Allocate @size bytes in pages of @page_size (a multiple of the DRAM page
 * size), contiguously; returns the new slot or NULL (-ENOMEM in *err_p) */
emu_shm_alloc_t *emu_hbm_alloc(emu_shm_dev_t *sdev, uint64_t size,
                               uint64_t page_size, uint64_t owner,
                               uint32_t flags, int *err_p);

emu_shm_alloc_t *emu_hbm_find(emu_shm_dev_t *sdev, uint64_t handle);

/* Byte offset of an allocation in the HBM backing */
uint64_t emu_hbm_offset(const emu_shm_alloc_t *alloc);

void emu_hbm_free(int dev, emu_shm_dev_t *sdev, emu_shm_alloc_t *alloc);

/* Free every allocation of @owner (0: of everybody except those kept for a
 * live DMA-BUF, EMU_ALLOC_OWNER_EXPORTED) */
void emu_hbm_free_owner(int dev, emu_shm_dev_t *sdev, uint64_t owner);

#endif
