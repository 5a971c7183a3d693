/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_SHARE_H_
#define UCT_GAUDI_SHARE_H_

/*
 * Sharing device memory between processes (driver-abi.md 4.4, 4.5):
 * export an allocation of the owned device as a DMA-BUF fd, and import a
 * peer's DMA-BUF into the owned device's MMU (HL_MEM_OP_REG_DMABUF_FD,
 * op 99 of Habana's out-of-tree driver; upstream kernels reject it).
 */

#include "gaudi_device.h"
#include "gaudi_mem.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS


/* An exported allocation. Whatever form the export took (allocation,
 * whole chunk, offset applied by the driver or not), byte o of the DMA-BUF
 * is the device memory at base + o: an importer's offset of an address A is
 * A - base (the DMA-BUF provider of gaudi_cpy relies on it) */
typedef struct uct_gaudi_export {
    int      fd;      /* the DMA-BUF; owned by the caller */
    uint64_t base;    /* device address of its first byte (Gaudi1:
                         physical) */
    size_t   length;  /* its length = the DMA-BUF size */
} uct_gaudi_export_t;


/**
 * Prepare the allocation of this process that contains [addr, addr +
 * length) for a later export (gaudi_ipc exports when a peer first asks):
 * nothing is exported yet, but its free now calls the free callback
 * (uct_gaudi_mem_set_free_cb), so that whoever shares it learns that it
 * goes. Returns the allocation in @a mem and the range an export of it
 * holds in @a base_p and @a length_p: the allocation itself, or its whole
 * chunk where the driver might not apply the offset of an export (the 6.1
 * ABI has none; drivers before the offset handling ignore it; driver-abi.md
 * 4.4). That range is the export's identity (uct_gaudi_mem_free_cb_t gets
 * it).
 *
 * @return UCS_ERR_INVALID_ADDR if the range is not inside one allocation
 *         made by this process (uct_gaudi_mem_alloc()).
 */
ucs_status_t uct_gaudi_share_prepare(uct_gaudi_dev_t *dev, uint64_t addr,
                                   size_t length, uct_gaudi_mem_t *mem,
                                   uint64_t *base_p, size_t *length_p);


/**
 * Export the whole allocation of this process that contains
 * [addr, addr + length), or the chunk that is exactly that range, in the
 * form the driver generation and ASIC need:
 * Gaudi2+ its chunk's MAP VA plus the allocation's offset in it where the
 * driver applies offsets, else the whole chunk at offset 0 (the 6.1 ABI:
 * by its ALLOC handle); Gaudi1 the physical address. Marks what is
 * exported (uct_gaudi_mem_free() then tolerates importers that still hold
 * it).
 *
 * @return UCS_ERR_INVALID_ADDR if the range is not inside one allocation
 *         made by this process (uct_gaudi_mem_alloc()).
 */
ucs_status_t uct_gaudi_share_export(uct_gaudi_dev_t *dev, uint64_t addr,
                                  size_t length, uct_gaudi_export_t *exp);


/**
 * Export device memory of the owned device that this process did not
 * allocate through UCX (the application's runtime did, on the same device
 * file), by its address, where the driver takes one: Gaudi1 any whole pages
 * of physical HBM around [addr, addr + length); Gaudi2+ with the
 * transitional or DRM ABI a mapping from its exact start (@a addr must be
 * where MAP put it; offset 0). Not with the 6.1 ABI on Gaudi2+, whose export
 * takes only the allocation's handle, which this process does not know
 * (UCS_ERR_UNSUPPORTED). Nothing is marked: the allocation is not ours.
 */
ucs_status_t uct_gaudi_share_export_addr(uct_gaudi_dev_t *dev, uint64_t addr,
                                         size_t length,
                                         uct_gaudi_export_t *exp);


/**
 * Whether the driver imports DMA-BUFs (op 99). Not in the 'H' generations
 * nor with the upstream driver, as the ABI generation and sysfs state
 * (uct_gaudi_ioctl_driver()); the out-of-tree driver (or one sysfs does not
 * name) is asked once per process and device, which costs a line in the
 * kernel log.
 */
int uct_gaudi_share_can_import(uct_gaudi_dev_t *dev);


/**
 * Import @a length bytes of the DMA-BUF @a fd into the owned device; the
 * returned device VA is usable in DMA packets until uct_gaudi_mem_unmap().
 * The caller may close @a fd afterwards (the mapping holds the buffer).
 */
ucs_status_t uct_gaudi_share_import(uct_gaudi_dev_t *dev, int fd, size_t length,
                                  uint64_t *dva_p);

END_C_DECLS

#endif
