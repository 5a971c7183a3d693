/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_SYSFS_H_
#define GAUDI_EMU_SYSFS_H_

#include "emu_common.h"

#include <sys/types.h>

/*
 * The emulated file-system view: device nodes under /dev and the sysfs
 * tree, laid out as the configured ABI generation does (docs/emulator.md).
 */

typedef enum {
    EMU_SYS_ROOT,
    EMU_SYS_DEV,               /* /dev                                  */
    EMU_SYS_DEV_ACCEL,         /* /dev/accel                            */
    EMU_SYS_NODE_COMPUTE,      /* char device                           */
    EMU_SYS_NODE_CONTROL,      /* char device                           */
    EMU_SYS_SYS,               /* /sys                                  */
    EMU_SYS_CLASS,             /* /sys/class                            */
    EMU_SYS_CLASS_DIR,         /* /sys/class/accel or habanalabs        */
    EMU_SYS_CDEV_COMPUTE,      /* class device of a compute node        */
    EMU_SYS_CDEV_CONTROL,      /* class device of a control node        */
    EMU_SYS_PCI,               /* the PCI function (".../device")       */
    EMU_SYS_BUS,               /* /sys/bus                              */
    EMU_SYS_BUS_PCI,           /* /sys/bus/pci                          */
    EMU_SYS_BUS_PCI_DEVICES,   /* /sys/bus/pci/devices                  */
    EMU_SYS_SYSDEV,            /* /sys/dev                              */
    EMU_SYS_SYSDEV_CHAR,       /* /sys/dev/char                         */
    EMU_SYS_MODULE,            /* /sys/module                           */
    EMU_SYS_MODULE_HL,         /* /sys/module/habanalabs                */
    EMU_SYS_PCI_BRIDGE,        /* a bridge above a device (attr: level),
                                  reached by ".." from the device       */
    EMU_SYS_PCI_ROOTBUS,       /* /sys/devices/pciDDDD:BB (dev: host
                                  bridge), ".." from a root port        */
    EMU_SYS_PCI_HOST,          /* /sys/bus/pci/devices/DDDD:BB:00.0 (dev:
                                  host bridge)                          */
    EMU_SYS_ATTR               /* a readable attribute file             */
} emu_sys_kind_t;

typedef struct {
    emu_sys_kind_t kind;
    int            dev;
    int            attr;
} emu_sys_node_t;

/* Resolve an absolute path in the emulated tree; -ENOENT/-ENOTDIR */
int emu_sys_resolve(const char *path, emu_sys_node_t *node);

/* Logical path of a device node of the configured generation */
void emu_sys_node_path(int dev, int control, char *buf, size_t max);

/* HW_IP_INFO.module_id == sysfs module_id of device @dev */
unsigned emu_sys_module_id(int dev);

/* sysfs numa_node of device @dev: consecutive blocks per NUMA node */
unsigned emu_sys_numa_node(int dev);

int emu_sys_exists(const char *path);

int emu_sys_list_dir(const char *path, uct_gaudi_drv_dir_cb_t cb, void *arg);

ssize_t emu_sys_read_attr(const char *path, char *buf, size_t max);

#endif
