/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_pci.h"
#include "gaudi_seam.h"

#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UCT_GAUDI_PCI_DEVICES        "/sys/bus/pci/devices"
#define UCT_GAUDI_PCI_VENDOR_INTEL   0x8086
#define UCT_GAUDI_PCI_VENDOR_GOOGLE  0x1ae0
#define UCT_GAUDI_PCI_ANY_DEVICE     0xffff


/* Linux's pci_p2pdma_whitelist (drivers/pci/p2pdma.c, as of 6.1-6.8): the
 * host bridges known to forward peer DMA between their root ports, some
 * only within one host bridge. Later kernels add Sapphire Rapids and newer
 * accelerators' ids; a host bridge missing here is taken as not forwarding
 * (UCX_GAUDI_IPC_CHECK_PCI_ROUTE=n trusts the platform instead) */
static const struct {
    uint16_t vendor;
    uint16_t device;
    int      same_host_bridge;
} uct_gaudi_pci_forwarding[] = {
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x3c00, 1}, /* Xeon E5/Core i7 */
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x3c01, 1},
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2f00, 1}, /* Xeon E7 v3/E5 v3 */
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2f01, 1},
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2030, 0}, /* Skylake-E */
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2031, 0},
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2032, 0},
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2033, 0},
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x2020, 0},
    {UCT_GAUDI_PCI_VENDOR_INTEL,  0x09a2, 0}, /* Ice Lake-SP */
    {UCT_GAUDI_PCI_VENDOR_GOOGLE, UCT_GAUDI_PCI_ANY_DEVICE, 0}
};


static int uct_gaudi_pci_read(const char *path, char *buf, size_t max)
{
    return uct_gaudi_seam_ops->read_attr(path, buf, max) >= 0;
}

static uint16_t uct_gaudi_pci_read_id(const char *bdf, const char *attr)
{
    char path[PATH_MAX], buf[32];

    ucs_snprintf_safe(path, sizeof(path), UCT_GAUDI_PCI_DEVICES "/%s/%s",
                      bdf, attr);
    return uct_gaudi_pci_read(path, buf, sizeof(buf)) ?
           (uint16_t)strtoul(buf, NULL, 16) : 0;
}

/* The PCI_SLOT_NAME of a uevent, or 0 if it has none (a root bus) */
static int uct_gaudi_pci_slot_name(const char *uevent, char *bdf, size_t max)
{
    static const char key[] = "PCI_SLOT_NAME=";
    const char *p           = strstr(uevent, key);
    size_t len;

    if ((p == NULL) || ((p != uevent) && (p[-1] != '\n'))) {
        return 0;
    }

    p  += strlen(key);
    len = strcspn(p, "\n");
    if ((len == 0) || (len >= max)) {
        return 0;
    }

    memcpy(bdf, p, len);
    bdf[len] = '\0';
    return 1;
}

ucs_status_t uct_gaudi_pci_path_read(const char *bdf,
                                     uct_gaudi_pci_path_t *path)
{
    char above[UCT_GAUDI_PCI_MAX_DEPTH][UCS_SYS_BDF_NAME_MAX];
    char file[PATH_MAX], uevent[PATH_MAX], buf[512];
    const char *top;
    unsigned n, i;
    size_t len;

    memset(path, 0, sizeof(*path));
    ucs_snprintf_safe(path->bdf, sizeof(path->bdf), "%s", bdf);
    ucs_snprintf_safe(file, sizeof(file), UCT_GAUDI_PCI_DEVICES "/%s", bdf);
    if (uct_gaudi_seam_ops->exists(file) != 0) {
        return UCS_ERR_NO_ELEM;
    }

    /* upward, one ".." at a time, while a bridge answers */
    for (n = 0; n < UCT_GAUDI_PCI_MAX_DEPTH; ++n) {
        len = strlen(file);
        ucs_snprintf_safe(file + len, sizeof(file) - len, "/..");
        ucs_snprintf_safe(uevent, sizeof(uevent), "%s/uevent", file);
        if (!uct_gaudi_pci_read(uevent, buf, sizeof(buf)) ||
            !uct_gaudi_pci_slot_name(buf, above[n], sizeof(above[n]))) {
            break;
        }
    }

    path->depth = n;
    for (i = 0; i < n; ++i) {
        memcpy(path->bridges[i], above[n - 1 - i], sizeof(path->bridges[i]));
    }

    /* the root bus: the root port's bus ("dddd:bb" of "dddd:bb:dd.f") */
    top = (n > 0) ? path->bridges[0] : path->bdf;
    ucs_snprintf_safe(path->host, sizeof(path->host), "%.7s:00.0", top);
    path->host_vendor = uct_gaudi_pci_read_id(path->host, "vendor");
    path->host_device = uct_gaudi_pci_read_id(path->host, "device");
    return UCS_OK;
}

typedef struct {
    uint64_t hash;
    char     *bdf;
    size_t   max;
    int      found;
} uct_gaudi_pci_find_t;

static int uct_gaudi_pci_find_cb(const char *name, void *arg)
{
    uct_gaudi_pci_find_t *find = arg;

    if (ucs_string_to_id(name) != find->hash) {
        return 0;
    }

    ucs_snprintf_safe(find->bdf, find->max, "%s", name);
    find->found = 1;
    return 1;
}

ucs_status_t uct_gaudi_pci_find(uint64_t hash, char *bdf, size_t max)
{
    uct_gaudi_pci_find_t find = {hash, bdf, max, 0};

    if (uct_gaudi_seam_ops->list_dir(UCT_GAUDI_PCI_DEVICES,
                                     uct_gaudi_pci_find_cb, &find) != 0) {
        return UCS_ERR_NO_ELEM;
    }

    return find.found ? UCS_OK : UCS_ERR_NO_ELEM;
}

int uct_gaudi_pci_cpu_forwards(void)
{
    char buf[1024], vendor[32];
    const char *p;
    unsigned family;

    if (!uct_gaudi_pci_read("/proc/cpuinfo", buf, sizeof(buf)) ||
        ((p = strstr(buf, "vendor_id")) == NULL) ||
        (sscanf(p, "vendor_id : %31s", vendor) != 1) ||
        ((p = strstr(buf, "cpu family")) == NULL) ||
        (sscanf(p, "cpu family : %u", &family) != 1)) {
        return 0;   /* not an x86 that says so: not known to forward */
    }

    /* Zen is family 0x17 */
    return !strcmp(vendor, "AuthenticAMD") && (family >= 0x17);
}

/* Whether host bridge @a path->host is known to forward peer DMA (with
 * @a same_host_bridge: between its own root ports only) */
static int uct_gaudi_pci_host_forwards(const uct_gaudi_pci_path_t *path,
                                       int same_host_bridge)
{
    size_t i;

    for (i = 0; i < ucs_static_array_size(uct_gaudi_pci_forwarding); ++i) {
        if ((uct_gaudi_pci_forwarding[i].vendor == path->host_vendor) &&
            ((uct_gaudi_pci_forwarding[i].device == path->host_device) ||
             (uct_gaudi_pci_forwarding[i].device ==
              UCT_GAUDI_PCI_ANY_DEVICE))) {
            return same_host_bridge ||
                   !uct_gaudi_pci_forwarding[i].same_host_bridge;
        }
    }

    return 0;
}

int uct_gaudi_pci_route(const uct_gaudi_pci_path_t *a,
                        const uct_gaudi_pci_path_t *b, int cpu_forwards,
                        char *why, size_t max)
{
    int same_host_bridge = !strcmp(a->host, b->host);
    const uct_gaudi_pci_path_t *refused;
    unsigned i, j;

    /* a bridge above both (a switch port, or one root port): it forwards
     * (ACS redirection would send the traffic up to the host bridge, but
     * only root can read the ACS capability) */
    for (i = a->depth; i-- > 0;) {
        for (j = b->depth; j-- > 0;) {
            if (!strcmp(a->bridges[i], b->bridges[j])) {
                ucs_snprintf_safe(why, max, "both below PCIe bridge %s",
                                  a->bridges[i]);
                return 1;
            }
        }
    }

    /* through the host bridge(s) */
    if (cpu_forwards) {
        ucs_snprintf_safe(why, max, "through the host bridges of an AMD Zen "
                          "CPU");
        return 1;
    }

    refused = !uct_gaudi_pci_host_forwards(a, same_host_bridge) ? a :
              !uct_gaudi_pci_host_forwards(b, same_host_bridge) ? b : NULL;
    if (refused == NULL) {
        ucs_snprintf_safe(why, max, "through host bridge%s %s%s%s",
                          same_host_bridge ? "" : "s", a->host,
                          same_host_bridge ? "" : " and ",
                          same_host_bridge ? "" : b->host);
        return 1;
    } else if (refused->host_vendor == 0) {
        ucs_snprintf_safe(why, max, "no common PCIe bridge, and no host "
                          "bridge function at %s", refused->host);
    } else if (!same_host_bridge &&
               uct_gaudi_pci_host_forwards(refused, 1)) {
        ucs_snprintf_safe(why, max, "host bridges %s and %s (%04x:%04x) "
                          "forward peer DMA only below one of them", a->host,
                          b->host, refused->host_vendor,
                          refused->host_device);
    } else {
        ucs_snprintf_safe(why, max, "no common PCIe bridge, and host bridge "
                          "%s (%04x:%04x) is not known to forward peer DMA "
                          "(Linux's pci_p2pdma whitelist)", refused->host,
                          refused->host_vendor, refused->host_device);
    }

    return 0;
}
