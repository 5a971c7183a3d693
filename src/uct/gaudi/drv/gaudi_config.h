/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_CONFIG_H_
#define UCT_GAUDI_CONFIG_H_

/*
 * The driver library's configuration (UCX_GAUDI_*), as read by gaudi_lib.c
 * and handed to the seam selection (gaudi_seam.c): a type of its own, so
 * that the two need not know each other.
 */

#include <ucs/sys/compiler_def.h>
#include <stddef.h>

BEGIN_C_DECLS


/* Values of UCX_GAUDI_EMU_ASIC, in the order of the config enum */
typedef enum {
    UCT_GAUDI_EMU_ASIC_GAUDI2,
    UCT_GAUDI_EMU_ASIC_GAUDI1,
    UCT_GAUDI_EMU_ASIC_GAUDI3,
    UCT_GAUDI_EMU_ASIC_LAST
} uct_gaudi_emu_asic_t;


/* The driver library's configuration, read from UCX_GAUDI_* */
typedef struct uct_gaudi_lib_config {
    char              *device;         /* which device to own */
    double            dma_timeout;     /* bound on a synchronous DMA wait */
    unsigned          emu_devices;     /* > 0: load the emulator */
    unsigned          emu_asic;        /* uct_gaudi_emu_asic_t */
    size_t            emu_hbm_size;    /* emulated HBM per device */
    unsigned          emu_abi;         /* uct_gaudi_abi_t */
    int               emu_oot_import;  /* emulate import op 99 */
    char              *emu_oot_version; /* the out-of-tree release */
    int               emu_pin_shared_files; /* pre-6.5 long-term pins */
    int               emu_page_fault_reset; /* Gaudi2 resets at a page fault */
    size_t            emu_dram_bar_size; /* PCIe DRAM BAR window */
    unsigned          emu_pci_topology; /* gaudi_emu_pci_topology_t */
    unsigned          emu_exec;        /* gaudi_emu_exec_t */
    double            emu_bw;          /* modelled bandwidth, B/s */
    double            emu_latency;     /* modelled CS latency, seconds */
    unsigned          emu_profile;     /* gaudi_emu_profile_t */
    double            emu_profile_latency; /* its latency L, seconds */
    unsigned          emu_copy_slowdown;
    char              *emu_state_dir;  /* emulator state directory */
    char              *emu_faults;     /* fault injection specification */
    unsigned          emu_numa_nodes;  /* NUMA nodes of the emulated node */
    unsigned          emu_edma_disabled; /* EDMA engines binned out */
    unsigned long     emu_proc_numa;   /* test: NUMA node of the process's
                                          CPUs, or UCS_ULUNITS_AUTO */
    double            reset_wait;      /* retry an open that says the device
                                          resets (EAGAIN) this long */
    int               app_memory;      /* hook the application's memory
                                          requests (gaudi_app.h) */
    int               perf_probe;      /* measure the DMA at iface open
                                          (base/gaudi_probe.h) */
    int               emu_reset_on_lockup; /* a CS timeout resets */
    double            emu_watchdog;    /* release watchdog, seconds */
    int               emu_kill;        /* kill holders of a reset device */
    double            emu_release_reset; /* reset after release, seconds */
} uct_gaudi_lib_config_t;

END_C_DECLS

#endif
