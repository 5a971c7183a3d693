/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_GLOBAL_H_
#define GAUDI_EMU_GLOBAL_H_

#include "emu_common.h"
#include "emu_asic.h"

#include <limits.h>
#include <sys/types.h>

/* Process-wide emulator configuration, fixed between init and fini */
typedef struct emu_global {
    int                initialized;
    gaudi_emu_config_t cfg;            /* copy; pointers below          */
    char               faults[1024];
    char               state_dir[PATH_MAX];
    int                state_dir_set;  /* cfg.state_dir was given       */
    const emu_asic_t   *asic;          /* &asic_cfg                     */
    emu_asic_t         asic_cfg;       /* the ASIC's constants, less the
                                          engines the config binned out */
    uint64_t           hbm_size;       /* backing size per device       */
    uint64_t           dram_size;      /* user DRAM: whole DRAM pages   */
    uint64_t           watchdog_ns;    /* release watchdog after a reset
                                          event                         */
    uint64_t           release_reset_ns; /* reset after release; 0 none */
    char               oot_version[32]; /* out-of-tree release emulated */
    int                export_offset;  /* the driver applies the offset of
                                          a DMA-BUF export (else it exports
                                          from the mapping's start)      */
} emu_global_t;

extern emu_global_t emu_g;

/* What the emulated driver's ABI generation is (gaudi_abi.h) */
static inline const uct_gaudi_abi_desc_t *emu_abi(void)
{
    return uct_gaudi_abi_desc(emu_g.cfg.abi);
}

#endif
