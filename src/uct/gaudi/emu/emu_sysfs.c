/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_sysfs.h"
#include "emu_dev.h"
#include "emu_global.h"
#include "emu_pci.h"
#include "emu_state.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define EMU_MISC_MAJOR      508  /* habanalabs' dynamic char major      */
#define EMU_ACCEL_MAJOR     261  /* ACCEL_MAJOR                         */
#define EMU_CONTROL_MAJOR   509  /* accel-era control cdev major        */
#define EMU_PCI_BUS_BASE    0x33

/* MODULE_VERSION of the out-of-tree package ("major.minor.patch-gitsha"):
 * the release emulated (gaudi_emu_config_t oot_version; 1.24.1 is the first
 * seen with op 99) and "emulated". Upstream sets none, so its
 * /sys/module/habanalabs has no version file */
#define EMU_OOT_VERSION_SUFFIX  "-emulated"

typedef enum {
    /* habanalabs driver attributes */
    EMU_ATTR_PCI_ADDR,
    EMU_ATTR_DEVICE_TYPE,
    EMU_ATTR_MODULE_ID,
    EMU_ATTR_STATUS,
    EMU_ATTR_HARD_RESET_CNT,
    EMU_ATTR_HL_LAST,
    /* PCI function attributes */
    EMU_ATTR_NUMA_NODE = EMU_ATTR_HL_LAST,
    EMU_ATTR_LOCAL_CPULIST,
    EMU_ATTR_VENDOR,
    EMU_ATTR_DEVICE,
    EMU_ATTR_PCI_LAST,
    /* "dev" of the class devices */
    EMU_ATTR_DEV_COMPUTE = EMU_ATTR_PCI_LAST,
    EMU_ATTR_DEV_CONTROL,
    /* /sys/module/habanalabs/version of the out-of-tree driver */
    EMU_ATTR_MODULE_VERSION,
    /* the PCIe tree above the devices (emu_pci.h): "uevent" of a root bus
     * (empty) and of a bridge (its PCI_SLOT_NAME; EMU_ATTR_BRIDGE_UEVENT +
     * level, dev the device below), vendor and device of a host bridge
     * (dev: the host bridge) */
    EMU_ATTR_HOST_VENDOR,
    EMU_ATTR_HOST_DEVICE,
    EMU_ATTR_ROOTBUS_UEVENT,
    EMU_ATTR_BRIDGE_UEVENT
} emu_attr_t;

static const char *emu_attr_names[] = {
    [EMU_ATTR_PCI_ADDR]       = "pci_addr",
    [EMU_ATTR_DEVICE_TYPE]    = "device_type",
    [EMU_ATTR_MODULE_ID]      = "module_id",
    [EMU_ATTR_STATUS]         = "status",
    [EMU_ATTR_HARD_RESET_CNT] = "hard_reset_cnt",
    [EMU_ATTR_NUMA_NODE]      = "numa_node",
    [EMU_ATTR_LOCAL_CPULIST]  = "local_cpulist",
    [EMU_ATTR_VENDOR]         = "vendor",
    [EMU_ATTR_DEVICE]         = "device",
    [EMU_ATTR_DEV_COMPUTE]    = "dev",
    [EMU_ATTR_DEV_CONTROL]    = "dev",
    [EMU_ATTR_MODULE_VERSION] = "version",
    [EMU_ATTR_HOST_VENDOR]    = "vendor",
    [EMU_ATTR_HOST_DEVICE]    = "device",
    [EMU_ATTR_ROOTBUS_UEVENT] = "uevent",
    [EMU_ATTR_BRIDGE_UEVENT]  = "uevent"
};

typedef int (*emu_sys_child_cb_t)(const char *name,
                                  const emu_sys_node_t *node, void *arg);


static void emu_sys_node_name(int dev, int control, char *buf, size_t max)
{
    const char *fmt = control ? emu_abi()->control_fmt :
                                emu_abi()->compute_fmt;

    /* the node's name: its path's last part */
    snprintf(buf, max, strrchr(fmt, '/') + 1, dev);
}

void emu_sys_node_path(int dev, int control, char *buf, size_t max)
{
    char name[32];

    emu_sys_node_name(dev, control, name, sizeof(name));
    snprintf(buf, max, "%s/%s", emu_abi()->node_dir, name);
}

static void emu_sys_char_dev(int dev, int control, unsigned *major,
                             unsigned *minor)
{
    if (!emu_abi()->accel) {
        *major = EMU_MISC_MAJOR;
        *minor = 2 * dev + !!control;
    } else {
        *major = control ? EMU_CONTROL_MAJOR : EMU_ACCEL_MAJOR;
        *minor = dev;
    }
}

static void emu_sys_bdf(int dev, char *buf, size_t max)
{
    snprintf(buf, max, "%04x:%02x:%02x.%x", 0,
             (EMU_PCI_BUS_BASE + dev) & 0xff, 0, 0);
}

static const char *emu_sys_status_str(uint32_t status)
{
    static const char *names[] = {
        [HL_DEVICE_STATUS_OPERATIONAL]         = "Operational",
        [HL_DEVICE_STATUS_IN_RESET]            = "In reset",
        [HL_DEVICE_STATUS_MALFUNCTION]         = "Disabled",
        [HL_DEVICE_STATUS_NEEDS_RESET]         = "Needs reset",
        [HL_DEVICE_STATUS_IN_DEVICE_CREATION]  = "In device creation",
        [HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE] =
                "In reset after device release"
    };

    return (status < emu_array_size(names)) ? names[status] : "Unknown";
}

/* module_id: a permutation of the indices, so that index != module id */
unsigned emu_sys_module_id(int dev)
{
    return emu_g.cfg.num_devices - 1 - dev;
}

unsigned emu_sys_numa_node(int dev)
{
    return dev * emu_g.cfg.numa_nodes / emu_g.cfg.num_devices;
}

/* What the sysfs of the PCIe tree above the devices says (emu_pci.h) */
static int emu_sys_pci_attr_value(int dev, int attr, char *buf, size_t max)
{
    uint16_t vendor, device;
    char bdf[32];

    switch (attr) {
    case EMU_ATTR_HOST_VENDOR:
    case EMU_ATTR_HOST_DEVICE:
        emu_pci_host_bridge_id(dev, &vendor, &device);
        return snprintf(buf, max, "0x%04x\n",
                        (attr == EMU_ATTR_HOST_VENDOR) ? vendor : device);
    case EMU_ATTR_ROOTBUS_UEVENT:
        return snprintf(buf, max, "%s", "");
    default:
        emu_pci_bridge_bdf(dev, attr - EMU_ATTR_BRIDGE_UEVENT, bdf,
                           sizeof(bdf));
        return snprintf(buf, max, "DRIVER=pcieport\nPCI_CLASS=60400\n"
                        "PCI_SLOT_NAME=%s\n", bdf);
    }
}

static int emu_sys_attr_value(int dev, int attr, char *buf, size_t max)
{
    emu_shm_dev_t *sdev;
    unsigned major, minor;
    char bdf[32];

    if (attr == EMU_ATTR_MODULE_VERSION) {
        return snprintf(buf, max, "%s" EMU_OOT_VERSION_SUFFIX "\n",
                        emu_g.oot_version);                  /* no device */
    } else if (attr >= EMU_ATTR_HOST_VENDOR) {
        return emu_sys_pci_attr_value(dev, attr, buf, max);
    }

    sdev = emu_state_dev(dev);
    switch (attr) {
    case EMU_ATTR_PCI_ADDR:
        emu_sys_bdf(dev, bdf, sizeof(bdf));
        return snprintf(buf, max, "%s\n", bdf);
    case EMU_ATTR_DEVICE_TYPE:
        return snprintf(buf, max, "%s\n", emu_g.asic->device_type);
    case EMU_ATTR_MODULE_ID:
        return snprintf(buf, max, "%u\n", emu_sys_module_id(dev));
    case EMU_ATTR_STATUS:
        return snprintf(buf, max, "%s\n",
                        emu_sys_status_str(emu_dev_status(sdev)));
    case EMU_ATTR_HARD_RESET_CNT:
        return snprintf(buf, max, "%u\n", sdev->hard_reset_cnt);
    case EMU_ATTR_NUMA_NODE:
        return snprintf(buf, max, "%u\n", emu_sys_numa_node(dev));
    case EMU_ATTR_LOCAL_CPULIST:
        return snprintf(buf, max, "0-%ld\n",
                        emu_max(sysconf(_SC_NPROCESSORS_CONF), 1) - 1);
    case EMU_ATTR_VENDOR:
        return snprintf(buf, max, "0x%04x\n", UCT_GAUDI_PCI_VENDOR_ID);
    case EMU_ATTR_DEVICE:
        return snprintf(buf, max, "0x%04x\n", emu_g.asic->device_id);
    default:
        emu_sys_char_dev(dev, attr == EMU_ATTR_DEV_CONTROL, &major, &minor);
        return snprintf(buf, max, "%u:%u\n", major, minor);
    }
}

static int emu_sys_emit(emu_sys_child_cb_t cb, void *arg, const char *name,
                        emu_sys_kind_t kind, int dev, int attr)
{
    emu_sys_node_t node = {kind, dev, attr};

    return cb(name, &node, arg);
}

static int emu_sys_emit_attrs(emu_sys_child_cb_t cb, void *arg, int dev,
                              int first, int last)
{
    int attr, ret;

    for (attr = first; attr < last; ++attr) {
        ret = emu_sys_emit(cb, arg, emu_attr_names[attr], EMU_SYS_ATTR, dev,
                           attr);
        if (ret) {
            return ret;
        }
    }

    return 0;
}

/* Compute and control nodes (or their class devices) of every device */
static int emu_sys_emit_nodes(emu_sys_child_cb_t cb, void *arg,
                              emu_sys_kind_t compute, emu_sys_kind_t control)
{
    char name[32];
    unsigned dev;
    int ret;

    for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
        emu_sys_node_name(dev, 0, name, sizeof(name));
        if ((ret = emu_sys_emit(cb, arg, name, compute, dev, 0))) {
            return ret;
        }
        emu_sys_node_name(dev, 1, name, sizeof(name));
        if ((ret = emu_sys_emit(cb, arg, name, control, dev, 0))) {
            return ret;
        }
    }

    return 0;
}

static int emu_sys_emit_pci(emu_sys_child_cb_t cb, void *arg)
{
    char bdf[32];
    unsigned dev, hb;
    int ret;

    for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
        emu_sys_bdf(dev, bdf, sizeof(bdf));
        if ((ret = emu_sys_emit(cb, arg, bdf, EMU_SYS_PCI, dev, 0))) {
            return ret;
        }
    }

    /* the host bridges, whose ids say whether they forward peer DMA */
    for (hb = 0; hb < emu_pci_num_host_bridges(); ++hb) {
        emu_pci_host_bridge_bdf(hb, bdf, sizeof(bdf));
        if ((ret = emu_sys_emit(cb, arg, bdf, EMU_SYS_PCI_HOST, hb, 0))) {
            return ret;
        }
    }

    return 0;
}

static int emu_sys_emit_chardevs(emu_sys_child_cb_t cb, void *arg)
{
    unsigned dev, major, minor;
    char name[32];
    int control, ret;

    for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
        for (control = 0; control < 2; ++control) {
            emu_sys_char_dev(dev, control, &major, &minor);
            snprintf(name, sizeof(name), "%u:%u", major, minor);
            ret = emu_sys_emit(cb, arg, name, control ? EMU_SYS_CDEV_CONTROL :
                                                        EMU_SYS_CDEV_COMPUTE,
                               dev, 0);
            if (ret) {
                return ret;
            }
        }
    }

    return 0;
}

static int emu_sys_emit_cdev(emu_sys_child_cb_t cb, void *arg,
                             const emu_sys_node_t *dir)
{
    int ret;

    if (dir->kind == EMU_SYS_CDEV_CONTROL) {
        return emu_sys_emit(cb, arg, "dev", EMU_SYS_ATTR, dir->dev,
                            EMU_ATTR_DEV_CONTROL);
    }

    if ((ret = emu_sys_emit(cb, arg, "dev", EMU_SYS_ATTR, dir->dev,
                            EMU_ATTR_DEV_COMPUTE)) ||
        (ret = emu_sys_emit(cb, arg, "device", EMU_SYS_PCI, dir->dev, 0))) {
        return ret;
    }

    /* DRM era: the driver attributes live on the PCI function */
    return emu_abi()->attrs_on_pci ? 0 :
           emu_sys_emit_attrs(cb, arg, dir->dev, 0, EMU_ATTR_HL_LAST);
}

static int emu_sys_children(const emu_sys_node_t *dir, emu_sys_child_cb_t cb,
                            void *arg)
{
    int ret;

    switch (dir->kind) {
    case EMU_SYS_ROOT:
        return emu_sys_emit(cb, arg, "dev", EMU_SYS_DEV, -1, 0) ||
               emu_sys_emit(cb, arg, "sys", EMU_SYS_SYS, -1, 0);
    case EMU_SYS_DEV:
        return !emu_abi()->accel ?
               emu_sys_emit_nodes(cb, arg, EMU_SYS_NODE_COMPUTE,
                                  EMU_SYS_NODE_CONTROL) :
               emu_sys_emit(cb, arg, "accel", EMU_SYS_DEV_ACCEL, -1, 0);
    case EMU_SYS_DEV_ACCEL:
        return emu_sys_emit_nodes(cb, arg, EMU_SYS_NODE_COMPUTE,
                                  EMU_SYS_NODE_CONTROL);
    case EMU_SYS_SYS:
        return emu_sys_emit(cb, arg, "bus", EMU_SYS_BUS, -1, 0) ||
               emu_sys_emit(cb, arg, "class", EMU_SYS_CLASS, -1, 0) ||
               emu_sys_emit(cb, arg, "dev", EMU_SYS_SYSDEV, -1, 0) ||
               emu_sys_emit(cb, arg, "module", EMU_SYS_MODULE, -1, 0);
    case EMU_SYS_MODULE:
        return emu_sys_emit(cb, arg, "habanalabs", EMU_SYS_MODULE_HL, -1, 0);
    case EMU_SYS_MODULE_HL:
        /* only Habana's package states a module version */
        return emu_g.cfg.oot_import ?
               emu_sys_emit(cb, arg, "version", EMU_SYS_ATTR, -1,
                            EMU_ATTR_MODULE_VERSION) : 0;
    case EMU_SYS_CLASS:
        return emu_sys_emit(cb, arg, emu_abi()->sysfs_class,
                            EMU_SYS_CLASS_DIR, -1, 0);
    case EMU_SYS_CLASS_DIR:
        return emu_sys_emit_nodes(cb, arg, EMU_SYS_CDEV_COMPUTE,
                                  EMU_SYS_CDEV_CONTROL);
    case EMU_SYS_CDEV_COMPUTE:
    case EMU_SYS_CDEV_CONTROL:
        return emu_sys_emit_cdev(cb, arg, dir);
    case EMU_SYS_PCI:
        ret = emu_sys_emit_attrs(cb, arg, dir->dev, EMU_ATTR_HL_LAST,
                                 EMU_ATTR_PCI_LAST);
        return (ret || !emu_abi()->attrs_on_pci) ? ret :
               emu_sys_emit_attrs(cb, arg, dir->dev, 0, EMU_ATTR_HL_LAST);
    case EMU_SYS_BUS:
        return emu_sys_emit(cb, arg, "pci", EMU_SYS_BUS_PCI, -1, 0);
    case EMU_SYS_BUS_PCI:
        return emu_sys_emit(cb, arg, "devices", EMU_SYS_BUS_PCI_DEVICES, -1,
                            0);
    case EMU_SYS_BUS_PCI_DEVICES:
        return emu_sys_emit_pci(cb, arg);
    case EMU_SYS_SYSDEV:
        return emu_sys_emit(cb, arg, "char", EMU_SYS_SYSDEV_CHAR, -1, 0);
    case EMU_SYS_SYSDEV_CHAR:
        return emu_sys_emit_chardevs(cb, arg);
    case EMU_SYS_PCI_HOST:
        return emu_sys_emit_attrs(cb, arg, dir->dev, EMU_ATTR_HOST_VENDOR,
                                  EMU_ATTR_HOST_DEVICE + 1);
    case EMU_SYS_PCI_ROOTBUS:
        return emu_sys_emit(cb, arg, "uevent", EMU_SYS_ATTR, dir->dev,
                            EMU_ATTR_ROOTBUS_UEVENT);
    case EMU_SYS_PCI_BRIDGE:
        return emu_sys_emit(cb, arg, "uevent", EMU_SYS_ATTR, dir->dev,
                            EMU_ATTR_BRIDGE_UEVENT + dir->attr);
    default:
        return 0;
    }
}

static int emu_sys_is_dir(emu_sys_kind_t kind)
{
    return (kind != EMU_SYS_ATTR) && (kind != EMU_SYS_NODE_COMPUTE) &&
           (kind != EMU_SYS_NODE_CONTROL);
}

typedef struct {
    const char     *name;
    size_t         len;
    emu_sys_node_t found;
    int            hit;
} emu_sys_lookup_t;

static int emu_sys_lookup_cb(const char *name, const emu_sys_node_t *node,
                             void *arg)
{
    emu_sys_lookup_t *lookup = arg;

    if ((strlen(name) == lookup->len) &&
        !strncmp(name, lookup->name, lookup->len)) {
        lookup->found = *node;
        lookup->hit   = 1;
        return 1;
    }

    return 0;
}

/* ".." where the emulated tree models it: upward from a PCI function
 * through the bridges above it to its root bus, as from a real device's
 * directory under /sys/devices (what /sys/bus/pci/devices/X links to) */
static int emu_sys_parent(emu_sys_node_t *node)
{
    switch (node->kind) {
    case EMU_SYS_PCI:
        node->kind = EMU_SYS_PCI_BRIDGE;
        node->attr = emu_pci_depth(node->dev) - 1;
        return 0;
    case EMU_SYS_PCI_BRIDGE:
        if (node->attr > 0) {
            --node->attr;
        } else {
            node->kind = EMU_SYS_PCI_ROOTBUS;
            node->dev  = emu_pci_host_bridge(node->dev);
            node->attr = 0;
        }
        return 0;
    case EMU_SYS_PCI_ROOTBUS:
        node->kind = EMU_SYS_SYS;   /* /sys/devices: nothing modelled */
        node->dev  = -1;
        return 0;
    default:
        return -1;
    }
}

int emu_sys_resolve(const char *path, emu_sys_node_t *node)
{
    emu_sys_node_t cur = {EMU_SYS_ROOT, -1, 0};
    emu_sys_lookup_t lookup;
    const char *p = path;

    if ((path == NULL) || (path[0] != '/')) {
        return -ENOENT;
    }

    for (;;) {
        while (*p == '/') {
            ++p;
        }
        if (*p == '\0') {
            break;
        }

        lookup.name = p;
        lookup.len  = strcspn(p, "/");
        lookup.hit  = 0;
        p          += lookup.len;

        if (!emu_sys_is_dir(cur.kind)) {
            return -ENOTDIR;
        } else if ((lookup.len == 2) && !strncmp(lookup.name, "..", 2)) {
            if (emu_sys_parent(&cur) != 0) {
                return -ENOENT;
            }
            continue;
        }

        emu_sys_children(&cur, emu_sys_lookup_cb, &lookup);
        if (!lookup.hit) {
            return -ENOENT;
        }
        cur = lookup.found;
    }

    *node = cur;
    return 0;
}

int emu_sys_exists(const char *path)
{
    emu_sys_node_t node;
    int ret = emu_sys_resolve(path, &node);

    return (ret == 0) ? 0 : emu_fail(-ret);
}

typedef struct {
    uct_gaudi_drv_dir_cb_t cb;
    void                   *arg;
} emu_sys_list_t;

static int emu_sys_list_cb(const char *name, const emu_sys_node_t *node,
                           void *arg)
{
    emu_sys_list_t *list = arg;

    return list->cb(name, list->arg);
}

int emu_sys_list_dir(const char *path, uct_gaudi_drv_dir_cb_t cb, void *arg)
{
    emu_sys_list_t list = {cb, arg};
    emu_sys_node_t node;
    int ret;

    if (cb == NULL) {
        return emu_fail(EINVAL);
    }

    ret = emu_sys_resolve(path, &node);
    if (ret != 0) {
        return emu_fail(-ret);
    }

    if (!emu_sys_is_dir(node.kind)) {
        return emu_fail(ENOTDIR);
    }

    emu_sys_children(&node, emu_sys_list_cb, &list);
    return 0;
}

ssize_t emu_sys_read_attr(const char *path, char *buf, size_t max)
{
    emu_sys_node_t node;
    char value[128];
    int ret, len;

    if ((buf == NULL) || (max == 0)) {
        return emu_fail(EINVAL);
    }

    ret = emu_sys_resolve(path, &node);
    if (ret != 0) {
        return emu_fail(-ret);
    }

    if (emu_sys_is_dir(node.kind)) {
        return emu_fail(EISDIR);
    } else if (node.kind != EMU_SYS_ATTR) {
        return emu_fail(EINVAL);    /* a device node, not an attribute */
    }

    len = emu_sys_attr_value(node.dev, node.attr, value, sizeof(value));
    len = emu_min((size_t)len, max - 1);
    memcpy(buf, value, len);
    buf[len] = '\0';
    return len;
}
