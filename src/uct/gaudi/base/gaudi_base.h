/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_BASE_H_
#define UCT_GAUDI_BASE_H_

/*
 * Entry point of the base driver layer: configuration (UCX_GAUDI_*), the
 * one-time global initialization (seam selection, ABI probe, discovery) and
 * the discovered device list in logical order.
 */

#include "gaudi_dev.h"

#include <ucs/config/parser.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/* Values of UCX_GAUDI_EMU_ASIC, in the order of the config enum */
typedef enum {
    UCT_GAUDI_EMU_ASIC_GAUDI2,
    UCT_GAUDI_EMU_ASIC_GAUDI1,
    UCT_GAUDI_EMU_ASIC_GAUDI3,
    UCT_GAUDI_EMU_ASIC_LAST
} uct_gaudi_emu_asic_t;


/* Base layer configuration, read from UCX_GAUDI_* */
typedef struct uct_gaudi_base_config {
    char              *device;         /* which device to own */
    double            dma_timeout;     /* bound on a synchronous DMA wait */
    unsigned          emu_devices;     /* > 0: load the emulator */
    unsigned          emu_asic;        /* uct_gaudi_emu_asic_t */
    size_t            emu_hbm_size;    /* emulated HBM per device */
    unsigned          emu_abi;         /* uct_gaudi_abi_t */
    int               emu_oot_import;  /* emulate import op 99 */
    unsigned          emu_exec;        /* gaudi_emu_exec_t */
    double            emu_bw;          /* modelled bandwidth, B/s */
    double            emu_latency;     /* modelled CS latency, seconds */
    char              *emu_state_dir;  /* emulator state directory */
    char              *emu_faults;     /* fault injection specification */
    unsigned          emu_numa_nodes;  /* NUMA nodes of the emulated node */
    unsigned          emu_edma_disabled; /* EDMA engines binned out */
    unsigned long     emu_proc_numa;   /* test: NUMA node of the process's
                                          CPUs, or UCS_ULUNITS_AUTO */
} uct_gaudi_base_config_t;


/**
 * Initialize the base layer once per process: read the configuration, select
 * the driver seam (kernel or emulator), probe the ABI generation and discover
 * the devices. Thread safe; later calls return the first call's result.
 *
 * @return UCS_OK (possibly with zero devices), or an error that was logged
 *         (bad configuration, emulator failed to load); then there are no
 *         devices.
 */
ucs_status_t uct_gaudi_base_init(void);


/**
 * Test only: undo uct_gaudi_base_init() so the next call reads the
 * configuration again. No device may be acquired.
 */
void uct_gaudi_base_cleanup(void);


/* Configuration the base layer was initialized with (NULL before init) */
const uct_gaudi_base_config_t *uct_gaudi_base_config(void);


/* A bandwidth knob (@a knob names it) is "auto" or a positive finite
 * bandwidth: UCS's parser also takes inf, nan and negative numbers, which
 * UCP's protocol selection cannot use */
ucs_status_t uct_gaudi_base_check_bw(const char *knob, double bw);


/* Number of discovered devices (0 before a successful init) */
unsigned uct_gaudi_base_num_devices(void);


/* Number of discovered devices that may be owned and used for DMA */
unsigned uct_gaudi_base_num_usable(void);


/* Discovered device @a index in logical order, or NULL if out of range */
const uct_gaudi_dev_info_t *uct_gaudi_base_device(unsigned index);


/* The discovered devices in logical order (uct_gaudi_base_num_devices()) */
const uct_gaudi_dev_info_t *uct_gaudi_base_devices(void);

END_C_DECLS

#endif
