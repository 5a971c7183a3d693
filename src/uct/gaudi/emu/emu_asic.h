/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_ASIC_H_
#define GAUDI_EMU_ASIC_H_

#include "emu_common.h"

/*
 * Gaudi2 device memory pages (gaudi2_set_dram_properties): a 8 MiB basic
 * page per functional HBM, times 16 for a TLB workaround, so 640 MiB with
 * 5 functional HBMs (HL-225); dram_size = 16 GiB per functional HBM.
 */
#define EMU_GAUDI2_NUM_HBM    5
#define EMU_GAUDI2_DRAM_PAGE  (16ull * EMU_GAUDI2_NUM_HBM * 8 * EMU_MB)
#define EMU_GAUDI2_HBM_SIZE   (EMU_GAUDI2_NUM_HBM * 16 * EMU_GB)
/* The Gaudi2 variant with 6 functional HBMs (96 GiB), chosen by its size */
#define EMU_GAUDI2_DRAM_PAGE_6 (16ull * 6 * 8 * EMU_MB)
#define EMU_GAUDI2_HBM_SIZE_6  (6 * 16 * EMU_GB)

/* How the emulator treats a CS queue index */
typedef enum {
    EMU_QUEUE_INVALID = 0,  /* out of range / not public: EINVAL         */
    EMU_QUEUE_CPU,          /* driver-only CPU queue: EINVAL             */
    EMU_QUEUE_EXT_KERNEL,   /* Gaudi1 external: kernel CB handle         */
    EMU_QUEUE_INT_USER,     /* Gaudi1 internal DMA: user CB address      */
    EMU_QUEUE_HW_USER,      /* Gaudi2 PDMA/EDMA: user CB (device VA)     */
    EMU_QUEUE_NOT_EMULATED  /* real queue, engine not modelled: EINVAL   */
} emu_queue_type_t;

/* Per-ASIC constants; see docs/emulator.md for their sources */
typedef struct emu_asic {
    uct_gaudi_asic_t asic;
    const char       *device_type;      /* sysfs device_type          */
    const char       *card_name;
    uint32_t         device_id;         /* PCI device id              */
    uint16_t         server_type;
    int              dram_vm;           /* HBM behind the DMMU        */
    uint64_t         dram_base;         /* DRAM VA start or phys base */
    uint64_t         dram_va_size;      /* size of the DRAM VA range  */
    uint64_t         dram_page_size;
    uint64_t         hbm_size;          /* default emulated HBM size  */
    uint64_t         alloc_page_size;   /* default ALLOC page size    */
    uint64_t         page_orders;       /* DEV_MEM_ALLOC_PAGE_SIZES   */
    uint64_t         host_va_start;     /* userptr range, 4 KiB pages */
    uint64_t         host_va_end;
    uint64_t         huge_va_start;     /* userptr range, 2 MiB pages */
    uint64_t         huge_va_end;       /* (0, 0): none               */
    uint64_t         sram_base;
    uint32_t         sram_size;
    uint32_t         num_events;
    uint32_t         clk_mhz;
    uint32_t         edma_mask;
    /* max_pending_cs of the driver: both the in-flight limit (a CS whose
     * slot still holds an incomplete one gets EAGAIN) and the window of
     * retained fences (older: FLAG_GONE); a power of two */
    uint32_t         max_pending_cs;
    uint8_t          tpc_mask;
    uint64_t         tpc_mask_ext;
    int              cs_supported;
} emu_asic_t;

const emu_asic_t *emu_asic_get(uct_gaudi_asic_t asic);

emu_queue_type_t emu_asic_queue_type(const emu_asic_t *asic, uint32_t queue);

/* Whether the DMA engine of @queue reaches PCIe (host memory, peers' BARs):
 * PCI DMA engines do; Gaudi2's EDMA engines move data inside the device */
int emu_asic_queue_reaches_pcie(const emu_asic_t *asic, uint32_t queue);

#endif
