/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_PCI_H_
#define UCT_GAUDI_PCI_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

/*
 * Whether the platform forwards a peer DMA between two PCI functions: what
 * Linux's pci_p2pdma_distance decides (drivers/pci/p2pdma.c), rebuilt from
 * what sysfs shows any user. Habana's out-of-tree driver, the only one that
 * imports a DMA-BUF into a Gaudi, has that check compiled out, and a peer
 * DMA without a route loses its writes and hangs its reads
 * (docs/driver-abi.md §4.5).
 */

BEGIN_C_DECLS

#define UCT_GAUDI_PCI_MAX_DEPTH 16


/* A PCI function and what is above it */
typedef struct uct_gaudi_pci_path {
    char     bdf[UCS_SYS_BDF_NAME_MAX];
    unsigned depth;                 /* bridges above it */
    char     bridges[UCT_GAUDI_PCI_MAX_DEPTH][UCS_SYS_BDF_NAME_MAX];
                                    /* [0]: the root port */
    unsigned root_domain;           /* its root bus: the host bridge's */
    unsigned root_bus;
    char     host[UCS_SYS_BDF_NAME_MAX]; /* the function standing for the
                                            host bridge, as Linux's
                                            pci_host_bridge_dev picks it
                                            (or where it would be) */
    uint16_t host_vendor;           /* its ids; 0: no such function */
    uint16_t host_device;
} uct_gaudi_pci_path_t;


/* What an rkey carries of the exporter's device: a 64-bit FNV-1a hash of
 * its whole bus id ("dddd:bb:dd.f") */
uint64_t uct_gaudi_pci_bus_hash(const char *bdf);


/* Read @a bdf's path from sysfs: the bridges through ".." from
 * /sys/bus/pci/devices/<bdf> (each one's uevent says PCI_SLOT_NAME), and
 * its root bus's first function if that is 00.0 or a bridge (a root port).
 * UCS_ERR_NO_ELEM if sysfs has no @a bdf, UCS_ERR_EXCEEDS_LIMIT if more than
 * UCT_GAUDI_PCI_MAX_DEPTH bridges are above it */
ucs_status_t uct_gaudi_pci_path_read(const char *bdf,
                                     uct_gaudi_pci_path_t *path);


/* The Gaudi (Habana vendor id) of /sys/bus/pci/devices whose bus id hashes
 * (uct_gaudi_pci_bus_hash) to @a hash; UCS_ERR_NO_ELEM if none. Counts in
 * @a num_gaudis the Gaudis sysfs shows */
ucs_status_t uct_gaudi_pci_find(uint64_t hash, char *bdf, size_t max,
                                unsigned *num_gaudis);


/* Whether the CPU forwards peer DMA between any host bridges (Linux's
 * cpu_supports_p2pdma: AMD Zen or newer), from /proc/cpuinfo */
int uct_gaudi_pci_cpu_forwards(void);


/* Whether @a a and @a b are in different IOMMU groups: the kernel enabled
 * ACS on the way between them, whose redirection sends their peer traffic
 * up to the host bridge even below a common switch (ACS itself is in
 * configuration space only root may read). 0 without an IOMMU */
int uct_gaudi_pci_isolated(const char *a, const char *b);


/* Whether a peer DMA between @a a and @a b has a route, as the kernel would
 * decide (drivers/pci/p2pdma.c: calc_map_type_and_dist); @a isolated from
 * uct_gaudi_pci_isolated. @a why says through what, or why not */
int uct_gaudi_pci_route(const uct_gaudi_pci_path_t *a,
                        const uct_gaudi_pci_path_t *b, int cpu_forwards,
                        int isolated, char *why, size_t max);

END_C_DECLS

#endif
