/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_PCI_H_
#define GAUDI_EMU_PCI_H_

#include "emu_common.h"

#include <stddef.h>
#include <stdint.h>

/*
 * The emulated node's PCIe tree above its devices (gaudi_emu_config_t
 * pci_topology): the bridges sysfs shows, the host bridges, and which peer
 * DMA between two devices the platform forwards (docs/emulator.md §11).
 */

/* The longest chain of bridges above a device (switch: root port, switch
 * upstream port, switch downstream port) */
#define EMU_PCI_MAX_DEPTH  3

/* Bridges between device @dev and its root bus */
unsigned emu_pci_depth(int dev);

/* Bus id of the bridge at @level above @dev (0: the root port) */
void emu_pci_bridge_bdf(int dev, unsigned level, char *buf, size_t max);

/* Host bridges of the node, and the one @dev is below */
unsigned emu_pci_num_host_bridges(void);
unsigned emu_pci_host_bridge(int dev);

/* Bus id ("dddd:bb:00.0"), vendor and device id of host bridge @hb */
void emu_pci_host_bridge_bdf(unsigned hb, char *buf, size_t max);
void emu_pci_host_bridge_id(unsigned hb, uint16_t *vendor, uint16_t *device);

/* Whether the platform forwards a DMA of device @a to device @b's BAR */
int emu_pci_route(int a, int b);

#endif
