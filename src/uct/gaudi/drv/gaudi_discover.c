/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_discover.h"
#include "gaudi_err.h"
#include "gaudi_ioctl.h"
#include "gaudi_seam.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char *uct_gaudi_discover_asic_name(uct_gaudi_asic_t asic)
{
    switch (asic) {
    case UCT_GAUDI_ASIC_GAUDI1:
        return "Gaudi1";
    case UCT_GAUDI_ASIC_GAUDI2:
        return "Gaudi2";
    case UCT_GAUDI_ASIC_GAUDI3:
        return "Gaudi3";
    default:
        return "unknown";
    }
}

uct_gaudi_asic_t uct_gaudi_discover_asic_from_id(uint32_t device_id)
{
    switch (device_id) {
    case UCT_GAUDI_PCI_ID_GAUDI1:
    case UCT_GAUDI_PCI_ID_GAUDI1_SEC:
        return UCT_GAUDI_ASIC_GAUDI1;
    case UCT_GAUDI_PCI_ID_GAUDI2:
        return UCT_GAUDI_ASIC_GAUDI2;
    case UCT_GAUDI_PCI_ID_GAUDI3:
    case UCT_GAUDI_PCI_ID_GAUDI3_HL338:
        return UCT_GAUDI_ASIC_GAUDI3;
    default:
        return UCT_GAUDI_ASIC_UNKNOWN;
    }
}

ucs_status_t uct_gaudi_discover_parse_bus_id(const char *str,
                                             ucs_sys_bus_id_t *bus_id)
{
    unsigned domain, bus, slot, function;
    size_t len;
    int end;

    /* sscanf's %x would also take "0x" prefixes and signs */
    len = strspn(str, "0123456789abcdefABCDEF:.");
    if ((len == 0) || (str[len + strspn(str + len, " \t\n")] != '\0')) {
        return UCS_ERR_INVALID_PARAM;
    }

    end = 0;
    if (sscanf(str, "%x:%x:%x.%x%n", &domain, &bus, &slot, &function,
               &end) != 4) {
        domain = 0;
        end    = 0;
        if (sscanf(str, "%x:%x.%x%n", &bus, &slot, &function, &end) != 3) {
            return UCS_ERR_INVALID_PARAM;
        }
    }

    while (isspace((unsigned char)str[end])) {
        ++end;
    }

    if ((str[end] != '\0') || (domain > 0xffff) || (bus > 0xff) ||
        (slot > 0x1f) || (function > 0x7)) {
        return UCS_ERR_INVALID_PARAM;
    }

    bus_id->domain   = domain;
    bus_id->bus      = bus;
    bus_id->slot     = slot;
    bus_id->function = function;
    return UCS_OK;
}

int uct_gaudi_discover_is_at(const uct_gaudi_dev_info_t *info,
                             const ucs_sys_bus_id_t *bus_id)
{
    return (info->bus_id[0] != '\0') &&
           (info->pci.domain == bus_id->domain) &&
           (info->pci.bus == bus_id->bus) && (info->pci.slot == bus_id->slot) &&
           (info->pci.function == bus_id->function);
}

static ucs_status_t uct_gaudi_dev_read_bus_id(uct_gaudi_dev_info_t *info)
{
    char path[UCT_GAUDI_PATH_MAX + 16];
    char buf[64];
    int abi;

    /* each generation's directory of pci_addr, the newest first
     * (driver-abi.md 1.4) */
    for (abi = UCT_GAUDI_ABI_LAST - 1; abi >= 0; --abi) {
        ucs_snprintf_safe(path, sizeof(path),
                          uct_gaudi_abi_desc(abi)->sysfs_dir, info->minor);
        ucs_snprintf_safe(path + strlen(path), sizeof(path) - strlen(path),
                          "/pci_addr");
        if (uct_gaudi_seam_ops->read_attr(path, buf, sizeof(buf)) < 0) {
            continue;
        }

        if (uct_gaudi_discover_parse_bus_id(buf, &info->pci) != UCS_OK) {
            ucs_debug("%s: unexpected content '%s'", path, buf);
            continue;
        }

        ucs_snprintf_safe(info->bus_id, sizeof(info->bus_id),
                          "%04x:%02x:%02x.%x", info->pci.domain, info->pci.bus,
                          info->pci.slot, info->pci.function);
        return UCS_OK;
    }

    ucs_debug("%s: no pci_addr attribute found", info->control_path);
    return UCS_ERR_NO_ELEM;
}

static int uct_gaudi_dev_read_numa(const uct_gaudi_dev_info_t *info)
{
    char path[UCT_GAUDI_PATH_MAX];
    char buf[32];
    char *end;
    long node;

    ucs_snprintf_safe(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node",
                      info->bus_id);
    if (uct_gaudi_seam_ops->read_attr(path, buf, sizeof(buf)) < 0) {
        ucs_debug("%s: cannot read %s: %m", info->control_path, path);
        return -1;
    }

    node = strtol(buf, &end, 10);
    if ((end == buf) || (node < 0)) {
        return -1;
    }

    /* an emulated node may place its devices on nodes this host lacks */
    if (!uct_gaudi_seam_is_emulated() &&
        ((numa_available() < 0) || (node > numa_max_node()))) {
        ucs_debug("%s: numa_node %ld is not a NUMA node of this host",
                  info->control_path, node);
        return -1;
    }

    return (int)node;
}

static void uct_gaudi_dev_read_topo(uct_gaudi_dev_info_t *info)
{
    ucs_status_t status;

    info->sys_dev   = UCS_SYS_DEVICE_ID_UNKNOWN;
    info->numa_node = -1;
    if (uct_gaudi_dev_read_bus_id(info) != UCS_OK) {
        return;
    }

    info->numa_node = uct_gaudi_dev_read_numa(info);
    status          = ucs_topo_find_device_by_bus_id(&info->pci,
                                                     &info->sys_dev);
    if (status != UCS_OK) {
        ucs_debug("%s: no UCS system device for %s: %s", info->control_path,
                  info->bus_id, ucs_status_string(status));
        info->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    }
}

/* A device that resets (a Gaudi2 does after every release) or is being
 * created is usable in a moment: its open answers EAGAIN and is retried
 * (hl_device_open); only a malfunction, or a reset its owner has yet to
 * do (the open: EPERM), leave it out */
static int uct_gaudi_dev_status_usable(uint32_t status)
{
    switch (status) {
    case HL_DEVICE_STATUS_OPERATIONAL:
    case HL_DEVICE_STATUS_IN_RESET:
    case HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE:
    case HL_DEVICE_STATUS_IN_DEVICE_CREATION:
        return 1;
    default:
        return 0;
    }
}

static void uct_gaudi_dev_set_usable(uct_gaudi_dev_info_t *info)
{
    static int gaudi3_reported = 0;

    info->usable = 0;
    if (info->asic == UCT_GAUDI_ASIC_GAUDI3) {
        if (!gaudi3_reported) {
            gaudi3_reported = 1;
            ucs_diag("%s is a Gaudi3: it is listed but not used, its DMA "
                     "queues are not part of any public driver uAPI",
                     info->control_path);
        }
    } else if (!uct_gaudi_dev_status_usable(info->status)) {
        /* at info level: a Gaudi the node has and UCX does not use is
         * something an operator wants to know without a debug log */
        ucs_diag("%s: device status %u is not operational: not used",
                 info->control_path, info->status);
    } else {
        info->usable = 1;
    }
}

/* Fill @a info from the INFO ioctls of control node @a minor */
static ucs_status_t uct_gaudi_dev_query(int minor, uct_gaudi_dev_info_t *info)
{
    struct hl_info_device_status dev_status;
    struct hl_info_hw_ip_info hw_ip;
    int fd;

    memset(info, 0, sizeof(*info));
    info->minor = minor;
    uct_gaudi_ioctl_node_path(UCT_GAUDI_NODE_CONTROL, minor,
                              info->control_path, sizeof(info->control_path));
    uct_gaudi_ioctl_node_path(UCT_GAUDI_NODE_COMPUTE, minor,
                              info->compute_path, sizeof(info->compute_path));

    /* a device that does not answer is skipped: debug level */
    if (UCT_GAUDI_NODE_FUNC(info->control_path,
                            fd = uct_gaudi_seam_ops->open(info->control_path,
                                                          O_RDWR | O_CLOEXEC),
                            UCS_LOG_LEVEL_DEBUG) != UCS_OK) {
        return UCS_ERR_NO_DEVICE;
    }

    memset(&hw_ip, 0, sizeof(hw_ip));
    if (UCT_GAUDI_NODE_FUNC(info->control_path,
                            uct_gaudi_ioctl_info(fd, HL_INFO_HW_IP_INFO,
                                                 &hw_ip, sizeof(hw_ip)),
                            UCS_LOG_LEVEL_DEBUG) != UCS_OK) {
        uct_gaudi_seam_ops->close(fd);
        return UCS_ERR_NO_DEVICE;
    }

    memset(&dev_status, 0, sizeof(dev_status));
    if (UCT_GAUDI_NODE_FUNC(info->control_path,
                            uct_gaudi_ioctl_info(fd, HL_INFO_DEVICE_STATUS,
                                                 &dev_status,
                                                 sizeof(dev_status)),
                            UCS_LOG_LEVEL_DEBUG) != UCS_OK) {
        dev_status.status = HL_DEVICE_STATUS_MALFUNCTION;
    }

    uct_gaudi_seam_ops->close(fd);

    info->device_id       = hw_ip.device_id;
    info->module_id       = hw_ip.module_id;
    info->asic            = uct_gaudi_discover_asic_from_id(hw_ip.device_id);
    info->status          = dev_status.status;
    info->dram_base       = hw_ip.dram_base_address;
    info->dram_size       = hw_ip.dram_size;
    info->dram_page_size  = hw_ip.dram_page_size;
    info->alloc_page_size = hw_ip.device_mem_alloc_default_page_size;
    info->edma_mask       = hw_ip.edma_enabled_mask;
    if (info->asic == UCT_GAUDI_ASIC_UNKNOWN) {
        ucs_debug("%s: PCI device id 0x%x is not a Gaudi", info->control_path,
                  hw_ip.device_id);
        return UCS_ERR_UNSUPPORTED;
    }

    uct_gaudi_dev_read_topo(info);
    uct_gaudi_dev_set_usable(info);
    ucs_debug("%s: %s module %u bus %s numa %d dram 0x%" PRIx64 "+%" PRIu64
              " status %u", info->control_path,
              uct_gaudi_discover_asic_name(info->asic), info->module_id,
              info->bus_id, info->numa_node, info->dram_base, info->dram_size,
              info->status);
    return UCS_OK;
}

ucs_status_t uct_gaudi_discover_devices(uct_gaudi_dev_info_t **devs_p,
                                        unsigned *num_devs_p)
{
    int minors[UCT_GAUDI_MAX_DEVICES];
    uct_gaudi_dev_info_t *devs;
    unsigned num_minors, i, num_devs;

    num_minors = uct_gaudi_ioctl_scan_nodes(minors, UCT_GAUDI_MAX_DEVICES);
    devs       = ucs_calloc(ucs_max(num_minors, 1), sizeof(*devs),
                            "gaudi_devices");
    if (devs == NULL) {
        ucs_error("failed to allocate %u Gaudi device descriptors",
                  num_minors);
        return UCS_ERR_NO_MEMORY;
    }

    num_devs = 0;
    for (i = 0; i < num_minors; ++i) {
        if (uct_gaudi_dev_query(minors[i], &devs[num_devs]) == UCS_OK) {
            uct_gaudi_discover_set_index(&devs[num_devs], num_devs);
            ++num_devs;
        }
    }

    *devs_p     = devs;
    *num_devs_p = num_devs;
    return UCS_OK;
}

void uct_gaudi_discover_set_index(uct_gaudi_dev_info_t *info, unsigned index)
{
    info->index = index;
    ucs_snprintf_safe(info->name, sizeof(info->name), "gaudi%u", index);
}

void uct_gaudi_discover_name_sys_device(const uct_gaudi_dev_info_t *info)
{
    char topo_name[UCT_GAUDI_DEV_NAME_MAX + 32];

    if (info->sys_dev == UCS_SYS_DEVICE_ID_UNKNOWN) {
        return;
    }

    /* the module ID is what Habana's tools and runtime call the device by;
     * "ucx_info -d" prints this name as the System device of the TLs */
    ucs_snprintf_safe(topo_name, sizeof(topo_name), "GAUDI_%u module %u",
                      info->index, info->module_id);
    uct_gaudi_topo_set_name(info->sys_dev, topo_name);
}
