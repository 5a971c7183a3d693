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
    char     host[UCS_SYS_BDF_NAME_MAX]; /* "dddd:bb:00.0" on its root bus */
    uint16_t host_vendor;           /* that function's ids; 0: none there */
    uint16_t host_device;
} uct_gaudi_pci_path_t;


/* Read @a bdf's path from sysfs: the bridges through ".." from
 * /sys/bus/pci/devices/<bdf> (each one's uevent says PCI_SLOT_NAME), and
 * its root bus's function 00.0. UCS_ERR_NO_ELEM if sysfs has no @a bdf */
ucs_status_t uct_gaudi_pci_path_read(const char *bdf,
                                     uct_gaudi_pci_path_t *path);


/* The PCI function of /sys/bus/pci/devices whose name hashes
 * (ucs_string_to_id) to @a hash; UCS_ERR_NO_ELEM if none */
ucs_status_t uct_gaudi_pci_find(uint64_t hash, char *bdf, size_t max);


/* Whether the CPU forwards peer DMA between any host bridges (Linux's
 * cpu_supports_p2pdma: AMD Zen or newer), from /proc/cpuinfo */
int uct_gaudi_pci_cpu_forwards(void);


/* Whether a peer DMA between @a a and @a b has a route, as the kernel would
 * decide; @a why says through what, or why not */
int uct_gaudi_pci_route(const uct_gaudi_pci_path_t *a,
                        const uct_gaudi_pci_path_t *b, int cpu_forwards,
                        char *why, size_t max);

END_C_DECLS

#endif
