/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_asic.h"


/*
 * Values marked (S) come from the sources of driver-abi.md 12, the others are
 * emulator choices (documented in docs/emulator.md). Gaudi2 has the real,
 * non power-of-2 DRAM page (the unit of every HL_MEM_OP_ALLOC) and the real
 * HBM size, backed by a sparse file; Gaudi1 has no DRAM MMU (its 2 MiB page
 * is the granule of the user's own pool) and Gaudi3 (no DMA path) keeps
 * 2 MiB pages.
 */
static const emu_asic_t emu_asics[] = {
    {
        .asic            = UCT_GAUDI_ASIC_GAUDI1,
        .device_type     = "GAUDI",
        .card_name       = "HL-205",
        .device_id       = UCT_GAUDI_PCI_ID_GAUDI1,           /* (S) */
        .server_type     = 1,                                 /* HLS1 */
        .dram_vm         = 0,
        .dram_base       = 0x20000000ull,                     /* (S) */
        .dram_va_size    = 0,
        .dram_page_size  = 2 * EMU_MB,
        .hbm_size        = 4 * EMU_GB,
        .alloc_page_size = 2 * EMU_MB,
        .page_orders     = 0,
        .host_va_start   = 0x1000000000000ull,                /* (S) */
        .host_va_end     = 0x3FF8000000000ull,
        .huge_va_start   = 0,
        .huge_va_end     = 0,
        .sram_base       = 0x7FF0000080ull,                   /* (S) */
        .sram_size       = 20 * EMU_MB - 0x80,                /* (S) */
        .num_events      = 1024,
        .clk_mhz         = 2200,
        .edma_mask       = 0,
        .max_pending_cs  = 16384,   /* GAUDI_MAX_PENDING_CS = SZ_16K (S) */
        .tpc_mask        = 0xFF,
        .tpc_mask_ext    = 0xFF,
        .cs_supported    = 1
    },
    {
        .asic            = UCT_GAUDI_ASIC_GAUDI2,
        .device_type     = "GAUDI2",
        .card_name       = "HL-225",
        .device_id       = UCT_GAUDI_PCI_ID_GAUDI2,           /* (S) */
        .server_type     = 5,                                 /* HLS2 */
        .dram_vm         = 1,
        /* non-canonical on x86-64: a CPU dereference faults */
        .dram_base       = 0x1001000000000000ull,
        .dram_va_size    = 1ull << 44,
        .dram_page_size  = EMU_GAUDI2_DRAM_PAGE,              /* (S) */
        .hbm_size        = EMU_GAUDI2_HBM_SIZE,               /* (S) */
        .alloc_page_size = EMU_GAUDI2_DRAM_PAGE,              /* (S) */
        .page_orders     = 0,   /* only the default page is modelled */
        .host_va_start   = 0xFFF0000000000000ull,             /* (S) */
        .host_va_end     = 0xFFF0800000000000ull,             /* (S) */
        .huge_va_start   = 0xFFF0800000000000ull,             /* (S) */
        .huge_va_end     = 0xFFF1000000000000ull,             /* (S) */
        .sram_base       = 0x1000000000ull,
        .sram_size       = 48 * EMU_MB,                       /* (S) */
        .num_events      = 1024,
        .clk_mhz         = 1650,
        .edma_mask       = 0xFF,
        .max_pending_cs  = 64,      /* GAUDI2_MAX_PENDING_CS (S) */
        .tpc_mask        = 0xFF,
        .tpc_mask_ext    = 0xFFFFFF,
        .cs_supported    = 1
    },
    {
        .asic            = UCT_GAUDI_ASIC_GAUDI3,
        .device_type     = "GAUDI3",
        .card_name       = "HL-325",
        .device_id       = UCT_GAUDI_PCI_ID_GAUDI3,           /* (S) */
        .server_type     = 0,
        .dram_vm         = 1,
        .dram_base       = 0x1001000000000000ull,
        .dram_va_size    = 1ull << 44,
        .dram_page_size  = 2 * EMU_MB,
        .hbm_size        = 4 * EMU_GB,
        .alloc_page_size = 2 * EMU_MB,
        .page_orders     = 0x7FE00000ull,
        .host_va_start   = 0xFF70000000000000ull,             /* (S) */
        .host_va_end     = 0xFF70800000000000ull,
        .huge_va_start   = 0,
        .huge_va_end     = 0,
        .sram_base       = 0,
        .sram_size       = 0,                                 /* (S) */
        .num_events      = 1024,
        .clk_mhz         = 1600,
        .edma_mask       = 0xFF,
        .max_pending_cs  = 64,      /* no CS path emulated */
        .tpc_mask        = 0xFF,
        .tpc_mask_ext    = 0xFFFFFFFFFull,
        .cs_supported    = 0
    }
};


const emu_asic_t *emu_asic_get(uct_gaudi_asic_t asic)
{
    size_t i;

    if (asic == UCT_GAUDI_ASIC_UNKNOWN) {
        asic = UCT_GAUDI_ASIC_GAUDI2;
    }

    for (i = 0; i < emu_array_size(emu_asics); ++i) {
        if (emu_asics[i].asic == asic) {
            return &emu_asics[i];
        }
    }

    return NULL;
}

static emu_queue_type_t emu_asic_gaudi1_queue(uint32_t q)
{
    if (q <= GAUDI_QUEUE_ID_DMA_1_3) {
        return EMU_QUEUE_EXT_KERNEL;
    } else if (q == GAUDI_QUEUE_ID_CPU_PQ) {
        return EMU_QUEUE_CPU;
    } else if (q <= GAUDI_QUEUE_ID_DMA_7_3) {
        return EMU_QUEUE_INT_USER;
    } else if (q < GAUDI_QUEUE_ID_SIZE) {
        return EMU_QUEUE_NOT_EMULATED;
    }

    return EMU_QUEUE_INVALID;
}

/*
 * Gaudi2 user DMA queues: PDMA_0_0, PDMA_0_1 and PDMA_1_0 (the driver keeps
 * the other PDMA streams), and the 4 streams of each EDMA engine enabled in
 * edma_enabled_mask (engine 2 * dcore + n is DCOREx_EDMA_n_*)
 */
static emu_queue_type_t emu_asic_gaudi2_queue(const emu_asic_t *asic,
                                              uint32_t q)
{
    static const uint32_t dcore_edma[] = {
        GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0,
        GAUDI2_QUEUE_ID_DCORE2_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE3_EDMA_0_0
    };
    unsigned engine;

    if ((q == GAUDI2_QUEUE_ID_PDMA_0_0) || (q == GAUDI2_QUEUE_ID_PDMA_0_1) ||
        (q == GAUDI2_QUEUE_ID_PDMA_1_0)) {
        return EMU_QUEUE_HW_USER;
    }

    for (engine = 0; engine < 2 * emu_array_size(dcore_edma); ++engine) {
        if ((q >= dcore_edma[engine / 2] + 4 * (engine % 2)) &&
            (q < dcore_edma[engine / 2] + 4 * (engine % 2) + 4)) {
            return (asic->edma_mask & (1u << engine)) ? EMU_QUEUE_HW_USER :
                                                        EMU_QUEUE_INVALID;
        }
    }

    if (q < GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0) {
        return EMU_QUEUE_INVALID;   /* a PDMA stream the driver keeps */
    } else if (q == GAUDI2_QUEUE_ID_CPU_PQ) {
        return EMU_QUEUE_CPU;
    } else if (q < GAUDI2_QUEUE_ID_SIZE) {
        return EMU_QUEUE_NOT_EMULATED;
    }

    return EMU_QUEUE_INVALID;
}

int emu_asic_queue_reaches_pcie(const emu_asic_t *asic, uint32_t queue)
{
    return (asic->asic != UCT_GAUDI_ASIC_GAUDI2) ||
           (queue < GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0);
}

emu_queue_type_t emu_asic_queue_type(const emu_asic_t *asic, uint32_t queue)
{
    switch (asic->asic) {
    case UCT_GAUDI_ASIC_GAUDI1:
        return emu_asic_gaudi1_queue(queue);
    case UCT_GAUDI_ASIC_GAUDI2:
        return emu_asic_gaudi2_queue(asic, queue);
    default:
        return EMU_QUEUE_INVALID;
    }
}
