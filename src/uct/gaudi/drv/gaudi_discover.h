/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_DISCOVER_H_
#define UCT_GAUDI_DISCOVER_H_

/*
 * Device discovery through control nodes (no ownership): identity, PCI
 * location, NUMA node, DRAM geometry, status, UCS topology registration.
 */

#include <uct/gaudi/seam/gaudi_abi.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS


#define UCT_GAUDI_DEV_NAME_MAX   16
#define UCT_GAUDI_PATH_MAX       64
#define UCT_GAUDI_MAX_DEVICES    64


typedef struct uct_gaudi_dev uct_gaudi_dev_t;


/* A discovered device */
typedef struct uct_gaudi_dev_info {
    unsigned          index;            /* logical index (mapping table) */
    int               minor;            /* N of the accelN/hlN nodes */
    char              name[UCT_GAUDI_DEV_NAME_MAX]; /* "gaudi<index>" */
    uct_gaudi_asic_t  asic;             /* from the PCI device id */
    uint32_t          device_id;        /* PCI device id */
    uint32_t          module_id;        /* OAM slot (HW_IP_INFO) */
    uint32_t          status;           /* enum hl_device_status */
    int               usable;           /* may be owned and used for DMA */
    char              bus_id[UCS_SYS_BDF_NAME_MAX]; /* "dddd:bb:dd.f" or "" */
    ucs_sys_bus_id_t  pci;              /* parsed bus_id */
    ucs_sys_device_t  sys_dev;          /* UCS topology device, or UNKNOWN */
    int               numa_node;        /* -1 if unknown */
    uint64_t          dram_base;        /* Gaudi2+: DRAM VA; Gaudi1: phys */
    uint64_t          dram_size;        /* user-available HBM */
    uint64_t          dram_page_size;   /* DRAM physical page size */
    uint64_t          alloc_page_size;  /* default HL_MEM_OP_ALLOC page */
    uint32_t          edma_mask;        /* Gaudi2+: EDMA engines present
                                           (binning leaves some out) */
    char              compute_path[UCT_GAUDI_PATH_MAX]; /* exclusive node */
    char              control_path[UCT_GAUDI_PATH_MAX]; /* INFO-only node */
} uct_gaudi_dev_info_t;


/* Human-readable ASIC name ("Gaudi2") */
const char *uct_gaudi_discover_asic_name(uct_gaudi_asic_t asic);


/* ASIC generation of a PCI device id */
uct_gaudi_asic_t uct_gaudi_discover_asic_from_id(uint32_t device_id);


/**
 * Parse a PCI bus id, "dddd:bb:dd.f" or "bb:dd.f" (domain 0), with optional
 * trailing whitespace.
 */
ucs_status_t uct_gaudi_discover_parse_bus_id(const char *str,
                                             ucs_sys_bus_id_t *bus_id);


/* Whether @a info sits at PCI location @a bus_id */
int uct_gaudi_discover_is_at(const uct_gaudi_dev_info_t *info,
                             const ucs_sys_bus_id_t *bus_id);


/**
 * Discover the devices through their control nodes, in physical (node
 * number) order. The caller owns @a *devs_p (ucs_free). Devices that do not
 * answer are skipped with a debug message.
 */
ucs_status_t uct_gaudi_discover_devices(uct_gaudi_dev_info_t **devs_p,
                                        unsigned *num_devs_p);


/* Assign the logical @a index to @a info: name "gaudi<index>" */
void uct_gaudi_discover_set_index(uct_gaudi_dev_info_t *info, unsigned index);


/**
 * Name the UCS topology device of @a info, when its PCI location is known,
 * "GAUDI_<index> module <module id>". Once its index is final: newer UCX
 * keeps the first name of a given priority (gaudi_ucx_compat.h).
 */
void uct_gaudi_discover_name_sys_device(const uct_gaudi_dev_info_t *info);

END_C_DECLS

#endif
