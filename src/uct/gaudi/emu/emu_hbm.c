/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_hbm.h"
#include "emu_global.h"

#include <string.h>


/* First fit of @count pages aligned to @align pages; -1 if none */
static int64_t emu_hbm_find_run(emu_shm_dev_t *sdev, uint64_t count,
                                uint64_t align)
{
    uint8_t *map = emu_state_page_map(sdev);
    uint64_t start, i;

    for (start = 0; start + count <= sdev->num_pages; start += align) {
        for (i = 0; (i < count) && !map[start + i]; ++i) {
        }
        if (i == count) {
            return start;
        }
        /* skip past the used page */
        start = emu_align_down(start + i, align);
    }

    return -1;
}

static emu_shm_alloc_t *emu_hbm_free_slot(emu_shm_dev_t *sdev)
{
    unsigned i;

    for (i = 0; i < EMU_MAX_ALLOCS; ++i) {
        if (sdev->allocs[i].handle == 0) {
            return &sdev->allocs[i];
        }
    }

    return NULL;
}

emu_shm_alloc_t *emu_hbm_alloc(emu_shm_dev_t *sdev, uint64_t size,
                               uint64_t page_size, uint64_t owner,
                               uint32_t flags, int *err_p)
{
    uint64_t dram_page = emu_g.asic->dram_page_size;
    uint64_t rounded   = emu_align_up(size, page_size);
    emu_shm_alloc_t *alloc;
    int64_t first;

    *err_p = -ENOMEM;
    if ((rounded < size) || (rounded > emu_g.dram_size)) {
        return NULL;
    }

    alloc = emu_hbm_free_slot(sdev);
    if (alloc == NULL) {
        return NULL;
    }

    first = emu_hbm_find_run(sdev, rounded / dram_page, page_size / dram_page);
    if (first < 0) {
        return NULL;
    }

    memset(emu_state_page_map(sdev) + first, 1, rounded / dram_page);
    alloc->first_page = first;
    alloc->num_pages  = rounded / dram_page;
    alloc->size       = rounded;
    alloc->owner      = owner;
    alloc->flags      = flags;
    alloc->map_count  = 0;
    alloc->handle     = sdev->next_handle++;
    sdev->dram_used  += rounded;
    ++sdev->num_allocs;
    *err_p = 0;
    return alloc;
}

emu_shm_alloc_t *emu_hbm_find(emu_shm_dev_t *sdev, uint64_t handle)
{
    unsigned i;

    if (handle == 0) {
        return NULL;
    }

    for (i = 0; i < EMU_MAX_ALLOCS; ++i) {
        if (sdev->allocs[i].handle == handle) {
            return &sdev->allocs[i];
        }
    }

    return NULL;
}

uint64_t emu_hbm_offset(const emu_shm_alloc_t *alloc)
{
    return alloc->first_page * emu_g.asic->dram_page_size;
}

void emu_hbm_free(int dev, emu_shm_dev_t *sdev, emu_shm_alloc_t *alloc)
{
    uint64_t length = alloc->num_pages * emu_g.asic->dram_page_size;

    emu_state_hbm_discard(dev, emu_hbm_offset(alloc), length);
    memset(emu_state_page_map(sdev) + alloc->first_page, 0,
           alloc->num_pages);
    sdev->dram_used -= emu_min(sdev->dram_used, alloc->size);
    --sdev->num_allocs;
    memset(alloc, 0, sizeof(*alloc));
}

void emu_hbm_free_owner(int dev, emu_shm_dev_t *sdev, uint64_t owner)
{
    unsigned i;

    for (i = 0; i < EMU_MAX_ALLOCS; ++i) {
        if ((sdev->allocs[i].handle != 0) &&
            (((owner == 0) &&
              (sdev->allocs[i].owner != EMU_ALLOC_OWNER_EXPORTED)) ||
             (sdev->allocs[i].owner == owner))) {
            emu_hbm_free(dev, sdev, &sdev->allocs[i]);
        }
    }
}
