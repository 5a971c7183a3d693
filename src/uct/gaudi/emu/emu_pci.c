/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_pci.h"
#include "emu_global.h"

#include <stdio.h>

/* Linux's pci_p2pdma whitelist (drivers/pci/p2pdma.c): Ice Lake-SP's host
 * bridge forwards peer DMA between any root ports; Haswell-EP's only
 * between the root ports of one host bridge (REQ_SAME_HOST_BRIDGE) */
#define EMU_PCI_VENDOR_INTEL    0x8086
#define EMU_PCI_HB_ICELAKE_SP   0x09a2
#define EMU_PCI_HB_HASWELL_EP   0x2f00
#define EMU_PCI_SOCKET1_BUS     0x80


static gaudi_emu_pci_topology_t emu_pci_topology(void)
{
    return emu_g.cfg.pci_topology;
}

unsigned emu_pci_depth(int dev)
{
    return (emu_pci_topology() == GAUDI_EMU_PCI_SWITCH) ? EMU_PCI_MAX_DEPTH :
                                                          1;
}

unsigned emu_pci_num_host_bridges(void)
{
    return (emu_pci_topology() == GAUDI_EMU_PCI_SOCKETS) ? 2 : 1;
}

/* sockets: the first half of the devices on the first (as the NUMA nodes
 * split them with UCX_GAUDI_EMU_NUMA_NODES=2) */
unsigned emu_pci_host_bridge(int dev)
{
    return dev * emu_pci_num_host_bridges() / emu_g.cfg.num_devices;
}

/* The first device below host bridge @hb */
static unsigned emu_pci_first_device(unsigned hb)
{
    unsigned dev = 0;

    while ((dev < emu_g.cfg.num_devices) && (emu_pci_host_bridge(dev) < hb)) {
        ++dev;
    }

    return dev;
}

static unsigned emu_pci_root_bus(unsigned hb)
{
    return (hb == 0) ? 0 : EMU_PCI_SOCKET1_BUS;
}

void emu_pci_host_bridge_bdf(unsigned hb, char *buf, size_t max)
{
    snprintf(buf, max, "0000:%02x:00.0", emu_pci_root_bus(hb));
}

void emu_pci_host_bridge_id(unsigned hb, uint16_t *vendor, uint16_t *device)
{
    *vendor = EMU_PCI_VENDOR_INTEL;
    *device = (emu_pci_topology() == GAUDI_EMU_PCI_SOCKETS) ?
              EMU_PCI_HB_HASWELL_EP : EMU_PCI_HB_ICELAKE_SP;
}

void emu_pci_bridge_bdf(int dev, unsigned level, char *buf, size_t max)
{
    unsigned hb = emu_pci_host_bridge(dev);

    unsigned port = dev - emu_pci_first_device(hb);

    /* ports are functions of slots, 8 each: 64 devices fit one bus */
    if (emu_pci_topology() != GAUDI_EMU_PCI_SWITCH) {
        /* a root port of its own on its host bridge's bus, from slot 1 */
        snprintf(buf, max, "0000:%02x:%02x.%x", emu_pci_root_bus(hb),
                 1 + port / 8, port % 8);
    } else if (level == 0) {
        snprintf(buf, max, "0000:00:01.0");         /* the root port */
    } else if (level == 1) {
        snprintf(buf, max, "0000:01:00.0");         /* switch upstream */
    } else {
        snprintf(buf, max, "0000:02:%02x.%x", port / 8, port % 8);
    }
}

int emu_pci_route(int a, int b)
{
    /* a switch forwards between its ports; Ice Lake-SP between any root
     * ports; Haswell-EP only below one host bridge (posted writes to the
     * other socket are dropped, reads never complete) */
    return (emu_pci_topology() != GAUDI_EMU_PCI_SOCKETS) ||
           (emu_pci_host_bridge(a) == emu_pci_host_bridge(b));
}
