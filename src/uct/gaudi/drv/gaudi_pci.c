/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_pci.h"
#include <uct/gaudi/seam/gaudi_abi.h>
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

/* The longest sysfs path built here: a bus id, UCT_GAUDI_PCI_MAX_DEPTH + 1
 * times "/..", an attribute (small: UCX's plugin build limits a frame to
 * 8 KiB, and these functions inline into each other) */
#define UCT_GAUDI_PCI_PATH_MAX       256


/* Linux's pci_p2pdma_whitelist (drivers/pci/p2pdma.c, a 6.x tree): the
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
    char path[UCT_GAUDI_PCI_PATH_MAX], buf[32];

    ucs_snprintf_safe(path, sizeof(path), UCT_GAUDI_PCI_DEVICES "/%s/%s",
                      bdf, attr);
    return uct_gaudi_pci_read(path, buf, sizeof(buf)) ?
           (uint16_t)strtoul(buf, NULL, 16) : 0;
}

/* "dddd:bb:dd.f" (the domain may have more digits: VMD's 10000) */
static int uct_gaudi_pci_parse(const char *bdf, unsigned *domain,
                               unsigned *bus, unsigned *devfn)
{
    unsigned dev, fn;
    int end = 0;

    if ((sscanf(bdf, "%x:%x:%x.%x%n", domain, bus, &dev, &fn, &end) != 4) ||
        (bdf[end] != '\0') || (dev > 31) || (fn > 7)) {
        return 0;
    }

    *devfn = (dev << 3) | fn;
    return 1;
}

uint64_t uct_gaudi_pci_bus_hash(const char *bdf)
{
    uint64_t hash = 0xcbf29ce484222325ull;   /* FNV-1a, 64 bits */

    for (; *bdf != '\0'; ++bdf) {
        hash = (hash ^ (uint8_t)*bdf) * 0x100000001b3ull;
    }

    return hash;
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

typedef struct {
    unsigned domain;
    unsigned bus;
    unsigned devfn;             /* the lowest seen on that bus */
    char     bdf[UCS_SYS_BDF_NAME_MAX];
} uct_gaudi_pci_first_t;

static int uct_gaudi_pci_first_cb(const char *name, void *arg)
{
    uct_gaudi_pci_first_t *first = arg;
    unsigned domain, bus, devfn;

    if (uct_gaudi_pci_parse(name, &domain, &bus, &devfn) &&
        (domain == first->domain) && (bus == first->bus) &&
        (devfn < first->devfn)) {
        first->devfn = devfn;
        ucs_snprintf_safe(first->bdf, sizeof(first->bdf), "%s", name);
    }

    return 0;
}

/* The function Linux's pci_host_bridge_dev takes for the host bridge of a
 * root bus (5.18 on): the bus's first device, if it is 00.0 or a root port */
static void uct_gaudi_pci_host_read(uct_gaudi_pci_path_t *path)
{
    uct_gaudi_pci_first_t first = {path->root_domain, path->root_bus, 256,
                                   ""};
    char file[UCT_GAUDI_PCI_PATH_MAX], class[32];

    ucs_snprintf_safe(path->host, sizeof(path->host), "%04x:%02x:00.0",
                      path->root_domain, path->root_bus);
    if ((uct_gaudi_seam_ops->list_dir(UCT_GAUDI_PCI_DEVICES,
                                      uct_gaudi_pci_first_cb, &first) != 0) ||
        (first.devfn == 256)) {
        return;
    }

    ucs_snprintf_safe(file, sizeof(file), UCT_GAUDI_PCI_DEVICES "/%s/class",
                      first.bdf);
    if ((first.devfn != 0) &&
        (!uct_gaudi_pci_read(file, class, sizeof(class)) ||
         ((strtoul(class, NULL, 16) >> 8) != 0x0604))) {
        return;     /* neither 00.0 nor a PCI bridge */
    }

    ucs_snprintf_safe(path->host, sizeof(path->host), "%s", first.bdf);
    path->host_vendor = uct_gaudi_pci_read_id(first.bdf, "vendor");
    path->host_device = uct_gaudi_pci_read_id(first.bdf, "device");
}

ucs_status_t uct_gaudi_pci_path_read(const char *bdf,
                                     uct_gaudi_pci_path_t *path)
{
    char above[UCT_GAUDI_PCI_MAX_DEPTH + 1][UCS_SYS_BDF_NAME_MAX];
    char file[UCT_GAUDI_PCI_PATH_MAX], buf[512];
    unsigned n, i, devfn;
    size_t len;

    memset(path, 0, sizeof(*path));
    ucs_snprintf_safe(path->bdf, sizeof(path->bdf), "%s", bdf);
    ucs_snprintf_safe(file, sizeof(file), UCT_GAUDI_PCI_DEVICES "/%s", bdf);
    if (uct_gaudi_seam_ops->exists(file) != 0) {
        return UCS_ERR_NO_ELEM;
    }

    /* upward, one ".." at a time, while a bridge answers */
    for (n = 0; n <= UCT_GAUDI_PCI_MAX_DEPTH; ++n) {
        len = strlen(file);
        if (len + strlen("/../uevent") >= sizeof(file)) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        ucs_snprintf_safe(file + len, sizeof(file) - len, "/../uevent");
        if (!uct_gaudi_pci_read(file, buf, sizeof(buf)) ||
            !uct_gaudi_pci_slot_name(buf, above[n], sizeof(above[n]))) {
            break;
        }
        file[len + strlen("/..")] = '\0';  /* the bridge's directory */
    }

    if (n > UCT_GAUDI_PCI_MAX_DEPTH) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    path->depth = n;
    for (i = 0; i < n; ++i) {
        memcpy(path->bridges[i], above[n - 1 - i], sizeof(path->bridges[i]));
    }

    /* the root bus is the root port's (or its own, without bridges) */
    if (!uct_gaudi_pci_parse((n > 0) ? path->bridges[0] : path->bdf,
                             &path->root_domain, &path->root_bus, &devfn)) {
        return UCS_ERR_NO_ELEM;
    }

    uct_gaudi_pci_host_read(path);
    return UCS_OK;
}

typedef struct {
    uint64_t hash;
    char     *bdf;
    size_t   max;
    int      found;
    unsigned num_gaudis;
} uct_gaudi_pci_find_t;

static int uct_gaudi_pci_is_gaudi(const char *bdf)
{
    return uct_gaudi_pci_read_id(bdf, "vendor") == UCT_GAUDI_PCI_VENDOR_ID;
}

static int uct_gaudi_pci_find_cb(const char *name, void *arg)
{
    uct_gaudi_pci_find_t *find = arg;

    if ((uct_gaudi_pci_bus_hash(name) != find->hash) ||
        !uct_gaudi_pci_is_gaudi(name)) {
        return 0;
    }

    ucs_snprintf_safe(find->bdf, find->max, "%s", name);
    find->found = 1;
    return 1;
}

static int uct_gaudi_pci_count_cb(const char *name, void *arg)
{
    uct_gaudi_pci_find_t *find = arg;

    find->num_gaudis += uct_gaudi_pci_is_gaudi(name);
    return 0;
}

ucs_status_t uct_gaudi_pci_find(uint64_t hash, char *bdf, size_t max,
                                unsigned *num_gaudis)
{
    uct_gaudi_pci_find_t find = {hash, bdf, max, 0, 0};

    /* the Gaudis are counted only when the one asked for is not there: a
     * vendor read per PCI function */
    if ((uct_gaudi_seam_ops->list_dir(UCT_GAUDI_PCI_DEVICES,
                                      uct_gaudi_pci_find_cb, &find) != 0) ||
        (!find.found &&
         (uct_gaudi_seam_ops->list_dir(UCT_GAUDI_PCI_DEVICES,
                                       uct_gaudi_pci_count_cb, &find) != 0))) {
        *num_gaudis = 0;
        return UCS_ERR_NO_ELEM;
    }

    *num_gaudis = find.num_gaudis;
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

typedef struct {
    const char *name;
    int        found;
} uct_gaudi_pci_member_t;

static int uct_gaudi_pci_member_cb(const char *name, void *arg)
{
    uct_gaudi_pci_member_t *member = arg;

    member->found = !strcmp(name, member->name);
    return member->found;
}

int uct_gaudi_pci_isolated(const char *a, const char *b)
{
    uct_gaudi_pci_member_t member = {b, 0};
    char dir[UCT_GAUDI_PCI_PATH_MAX];

    ucs_snprintf_safe(dir, sizeof(dir),
                      UCT_GAUDI_PCI_DEVICES "/%s/iommu_group/devices", a);
    return (uct_gaudi_seam_ops->list_dir(dir, uct_gaudi_pci_member_cb,
                                         &member) == 0) &&
           !member.found;
}

/* Whether @a path's host bridge is known to forward peer DMA (with
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

/* The deepest bridge above both, or NULL */
static const char *uct_gaudi_pci_common_bridge(const uct_gaudi_pci_path_t *a,
                                               const uct_gaudi_pci_path_t *b)
{
    unsigned i, j;

    for (i = a->depth; i-- > 0;) {
        for (j = b->depth; j-- > 0;) {
            if (!strcmp(a->bridges[i], b->bridges[j])) {
                return a->bridges[i];
            }
        }
    }

    return NULL;
}

int uct_gaudi_pci_route(const uct_gaudi_pci_path_t *a,
                        const uct_gaudi_pci_path_t *b, int cpu_forwards,
                        int isolated, char *why, size_t max)
{
    const char *bridge   = uct_gaudi_pci_common_bridge(a, b);
    int same_host_bridge = (a->root_domain == b->root_domain) &&
                           (a->root_bus == b->root_bus);
    const char *acs      = ((bridge != NULL) && isolated) ?
                           " (ACS sends it past their common bridge: they "
                           "are in different IOMMU groups)" : "";
    const uct_gaudi_pci_path_t *refused;

    /* a bridge above both (a switch port, or one root port) forwards,
     * unless ACS redirects the traffic to the host bridge */
    if ((bridge != NULL) && !isolated) {
        ucs_snprintf_safe(why, max, "both below PCIe bridge %s", bridge);
        return 1;
    }

    /* through the host bridge(s) */
    if (cpu_forwards) {
        ucs_snprintf_safe(why, max, "through the host bridges of an AMD Zen "
                          "CPU%s", acs);
        return 1;
    }

    refused = !uct_gaudi_pci_host_forwards(a, same_host_bridge) ? a :
              !uct_gaudi_pci_host_forwards(b, same_host_bridge) ? b : NULL;
    if (refused == NULL) {
        ucs_snprintf_safe(why, max, "through host bridge%s %s%s%s%s",
                          same_host_bridge ? "" : "s", a->host,
                          same_host_bridge ? "" : " and ",
                          same_host_bridge ? "" : b->host, acs);
        return 1;
    } else if (refused->host_vendor == 0) {
        ucs_snprintf_safe(why, max, "no common PCIe bridge%s, and no host "
                          "bridge function on root bus %04x:%02x", acs,
                          refused->root_domain, refused->root_bus);
    } else if (!same_host_bridge &&
               uct_gaudi_pci_host_forwards(refused, 1)) {
        ucs_snprintf_safe(why, max, "host bridges %s and %s (%04x:%04x) "
                          "forward peer DMA only below one of them", a->host,
                          b->host, refused->host_vendor,
                          refused->host_device);
    } else {
        ucs_snprintf_safe(why, max, "no common PCIe bridge%s, and host bridge "
                          "%s (%04x:%04x) is not known to forward peer DMA "
                          "(Linux's pci_p2pdma whitelist)", acs, refused->host,
                          refused->host_vendor, refused->host_device);
    }

    return 0;
}
