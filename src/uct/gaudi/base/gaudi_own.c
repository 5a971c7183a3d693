/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_own.h"
#include "gaudi_base.h"
#include "gaudi_err.h"
#include "gaudi_ioctl.h"
#include "gaudi_seam.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Lowest address that cannot be a user-space host address (x86-64, 4-level
 * paging): a DRAM VA range above it cannot collide with host memory */
#define UCT_GAUDI_OWN_HOST_VA_LIMIT (1ull << 47)


typedef struct {
    unsigned candidates;  /* usable devices tried */
    unsigned busy;        /* EBUSY: owned by another process */
    unsigned unavailable; /* EAGAIN/EPERM/other: resetting or broken */
    int      last_err;
} uct_gaudi_own_scan_t;


static struct {
    pthread_mutex_t lock;
    uct_gaudi_dev_t dev;
} uct_gaudi_own = {
    .lock = PTHREAD_MUTEX_INITIALIZER
};


/* Check that @a fd is a compute node of the device described by @a info */
static ucs_status_t uct_gaudi_own_verify(int fd,
                                         const uct_gaudi_dev_info_t *info)
{
    struct hl_info_hw_ip_info hw_ip;

    memset(&hw_ip, 0, sizeof(hw_ip));
    if (uct_gaudi_ioctl_info(fd, HL_INFO_HW_IP_INFO, &hw_ip,
                             sizeof(hw_ip)) < 0) {
        ucs_debug("%s: INFO on fd %d failed: %m", info->compute_path, fd);
        return UCS_ERR_NO_DEVICE;
    }

    if ((hw_ip.device_id != info->device_id) ||
        (hw_ip.module_id != info->module_id)) {
        ucs_debug("%s: fd %d reports device 0x%x module %u, expected 0x%x "
                  "module %u", info->compute_path, fd, hw_ip.device_id,
                  hw_ip.module_id, info->device_id, info->module_id);
        return UCS_ERR_NO_DEVICE;
    }

    return UCS_OK;
}

static const uct_gaudi_dev_info_t *uct_gaudi_own_find_minor(int minor)
{
    const uct_gaudi_dev_info_t *info;
    unsigned i;

    for (i = 0; i < uct_gaudi_base_num_devices(); ++i) {
        info = uct_gaudi_base_device(i);
        if (info->minor == minor) {
            return info;
        }
    }

    return NULL;
}

/* Adopt a usable compute fd of this process, if @a fd is one */
static int uct_gaudi_own_try_adopt(uct_gaudi_dev_t *dev, int fd)
{
    const uct_gaudi_dev_info_t *info;
    char path[UCT_GAUDI_PATH_MAX];
    int minor;

    if ((uct_gaudi_seam_ops->fd_path(fd, path, sizeof(path)) < 0) ||
        (uct_gaudi_ioctl_node_index(UCT_GAUDI_NODE_COMPUTE, path,
                                    &minor) < 0)) {
        return 0;
    }

    info = uct_gaudi_own_find_minor(minor);
    if ((info == NULL) || !info->usable) {
        ucs_debug("fd %d is %s, which is not a usable Gaudi", fd, path);
        return 0;
    }

    if (uct_gaudi_own_verify(fd, info) != UCS_OK) {
        return 0;
    }

    dev->info    = info;
    dev->fd      = fd;
    dev->adopted = 1;
    ucs_debug("%s: adopted fd %d (%s) already open in this process",
              info->name, fd, path);
    return 1;
}

/* A compute node this process already holds: never open a device twice */
static ucs_status_t uct_gaudi_own_adopt(uct_gaudi_dev_t *dev)
{
    struct dirent *entry;
    char *end;
    DIR *dir;
    long fd;

    dir = opendir("/proc/self/fd");
    if (dir == NULL) {
        ucs_debug("cannot list /proc/self/fd: %m");
        return UCS_ERR_NO_ELEM;
    }

    while ((entry = readdir(dir)) != NULL) {
        fd = strtol(entry->d_name, &end, 10);
        if ((end == entry->d_name) || (*end != '\0') || (fd == dirfd(dir))) {
            continue;
        }

        if (uct_gaudi_own_try_adopt(dev, (int)fd)) {
            closedir(dir);
            return UCS_OK;
        }
    }

    closedir(dir);
    return UCS_ERR_NO_ELEM;
}

/* Open the compute node of @a info; 0 or -1/errno */
static int uct_gaudi_own_open_node(uct_gaudi_dev_t *dev,
                                   const uct_gaudi_dev_info_t *info)
{
    int fd;

    fd = uct_gaudi_seam_ops->open(info->compute_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }

    if (uct_gaudi_own_verify(fd, info) != UCS_OK) {
        uct_gaudi_seam_ops->close(fd);
        errno = ENODEV;
        return -1;
    }

    dev->info    = info;
    dev->fd      = fd;
    dev->adopted = 0;
    return 0;
}

static const uct_gaudi_dev_info_t *uct_gaudi_own_find_spec(const char *spec)
{
    const uct_gaudi_dev_info_t *info;
    ucs_sys_bus_id_t bus_id;
    unsigned long value;
    unsigned i;
    char *end;

    if (!strncmp(spec, "module:", 7)) {
        value = strtoul(spec + 7, &end, 10);
        if ((end == spec + 7) || (*end != '\0')) {
            return NULL;
        }

        for (i = 0; i < uct_gaudi_base_num_devices(); ++i) {
            info = uct_gaudi_base_device(i);
            if (info->module_id == value) {
                return info;
            }
        }

        return NULL;
    }

    value = strtoul(spec, &end, 10);
    if ((end != spec) && (*end == '\0') && isdigit((unsigned char)spec[0])) {
        return (value < UINT_MAX) ? uct_gaudi_base_device(value) : NULL;
    }

    if (uct_gaudi_dev_parse_bus_id(spec, &bus_id) != UCS_OK) {
        return NULL;
    }

    for (i = 0; i < uct_gaudi_base_num_devices(); ++i) {
        info = uct_gaudi_base_device(i);
        if (uct_gaudi_dev_is_at(info, &bus_id)) {
            return info;
        }
    }

    return NULL;
}

/* The device UCX_GAUDI_DEVICE names (not "auto") */
static ucs_status_t uct_gaudi_own_open_selected(uct_gaudi_dev_t *dev,
                                                const char *spec)
{
    const uct_gaudi_dev_info_t *info;
    int err;

    info = uct_gaudi_own_find_spec(spec);
    if (info == NULL) {
        ucs_error("UCX_GAUDI_DEVICE=%s does not name one of the %u Gaudi "
                  "devices (use auto, a logical index, a PCI bus id or "
                  "module:<id>)", spec, uct_gaudi_base_num_devices());
        return UCS_ERR_NO_DEVICE;
    }

    if (!info->usable) {
        ucs_error("UCX_GAUDI_DEVICE=%s selects %s (%s, %s), which cannot be "
                  "used: %s", spec, info->name,
                  uct_gaudi_dev_asic_name(info->asic), info->bus_id,
                  (info->asic == UCT_GAUDI_ASIC_GAUDI3) ?
                  "Gaudi3 DMA is not supported" : "device not operational");
        return UCS_ERR_UNSUPPORTED;
    }

    if (uct_gaudi_own_open_node(dev, info) == 0) {
        return UCS_OK;
    }

    err = errno;
    if (err == EBUSY) {
        ucs_error("%s (%s) selected by UCX_GAUDI_DEVICE=%s is busy (owned by "
                  "another process)", info->name, info->bus_id, spec);
    } else {
        ucs_error("failed to open %s (%s) selected by UCX_GAUDI_DEVICE=%s: "
                  "%s", info->compute_path, info->name, spec, strerror(err));
    }

    return uct_gaudi_err_status(err);
}

static ucs_status_t uct_gaudi_own_scan_result(const uct_gaudi_own_scan_t *scan)
{
    static int gaudi3_reported = 0;

    if (scan->candidates == 0) {
        if (!gaudi3_reported) {
            gaudi3_reported = 1;
            ucs_warn("none of the %u Gaudi devices can be used (Gaudi3 DMA is "
                     "not supported; other devices are not operational)",
                     uct_gaudi_base_num_devices());
        }
        return UCS_ERR_UNSUPPORTED;
    }

    if (scan->busy == scan->candidates) {
        ucs_warn("all %u Gaudi devices are busy (owned by other processes)",
                 scan->candidates);
        return UCS_ERR_BUSY;
    }

    ucs_warn("no Gaudi device could be opened: %u busy, %u unavailable "
             "(last error: %s)", scan->busy, scan->unavailable,
             strerror(scan->last_err));
    return (scan->busy > 0) ? UCS_ERR_BUSY : UCS_ERR_NO_DEVICE;
}

/* The first free device in logical order */
static ucs_status_t uct_gaudi_own_open_first(uct_gaudi_dev_t *dev)
{
    uct_gaudi_own_scan_t scan = {0, 0, 0, 0};
    const uct_gaudi_dev_info_t *info;
    unsigned i;

    for (i = 0; i < uct_gaudi_base_num_devices(); ++i) {
        info = uct_gaudi_base_device(i);
        if (!info->usable) {
            continue;
        }

        ++scan.candidates;
        if (uct_gaudi_own_open_node(dev, info) == 0) {
            return UCS_OK;
        }

        scan.last_err = errno;
        if (scan.last_err == EBUSY) {
            ++scan.busy;
            ucs_debug("%s is busy (owned by another process)", info->name);
        } else {
            ++scan.unavailable;
            ucs_debug("%s is unavailable: %s%s", info->name,
                      strerror(scan.last_err),
                      (scan.last_err == EAGAIN) ? " (resetting)" :
                      (scan.last_err == EPERM) ? " (not operational)" : "");
        }
    }

    return uct_gaudi_own_scan_result(&scan);
}

static void uct_gaudi_own_memtype_register(uct_gaudi_dev_t *dev)
{
    const uct_gaudi_dev_info_t *info = dev->info;

    /* Gaudi1 DRAM addresses are physical and may equal host addresses; such
     * devices register each allocation instead (gaudi_mem.c) */
    if ((info->asic < UCT_GAUDI_ASIC_GAUDI2) || (info->dram_size == 0) ||
        (info->dram_base < UCT_GAUDI_OWN_HOST_VA_LIMIT) ||
        (info->dram_base + info->dram_size < info->dram_base)) {
        ucs_debug("%s: DRAM range 0x%" PRIx64 "+%" PRIu64 " not registered "
                  "in the memtype cache", dev->name, info->dram_base,
                  info->dram_size);
        return;
    }

    uct_gaudi_mem_memtype_set(info->dram_base, info->dram_size,
                              info->sys_dev);
    dev->memtype_range = 1;
}

static ucs_status_t uct_gaudi_own_open(uct_gaudi_dev_t *dev)
{
    const char *spec = uct_gaudi_base_config()->device;
    ucs_status_t status;

    memset(dev, 0, sizeof(*dev));
    dev->fd         = -1;
    dev->can_import = -1;
    status          = uct_gaudi_own_adopt(dev);
    if (status == UCS_ERR_NO_ELEM) {
        status = strcasecmp(spec, "auto") ?
                 uct_gaudi_own_open_selected(dev, spec) :
                 uct_gaudi_own_open_first(dev);
    }

    if (status != UCS_OK) {
        return status;
    }

    ucs_strncpy_safe(dev->name, dev->info->name, sizeof(dev->name));
    ucs_spinlock_init(&dev->lock, 0);
    status = uct_gaudi_mem_init(dev);
    if (status != UCS_OK) {
        goto err_close;
    }

    status = uct_gaudi_dma_init(dev);
    if (status != UCS_OK) {
        goto err_mem;
    }

    uct_gaudi_own_memtype_register(dev);
    ucs_debug("%s: owned %s (%s, bus %s, numa %d)%s", dev->name,
              dev->info->compute_path, uct_gaudi_dev_asic_name(dev->info->asic),
              dev->info->bus_id, dev->info->numa_node,
              dev->adopted ? ", adopted" : "");
    return UCS_OK;

err_mem:
    uct_gaudi_mem_cleanup(dev);
err_close:
    ucs_spinlock_destroy(&dev->lock);
    if (!dev->adopted) {
        uct_gaudi_seam_ops->close(dev->fd);
    }
    return status;
}

ucs_status_t uct_gaudi_dev_acquire(uct_gaudi_dev_t **dev_p)
{
    uct_gaudi_dev_t *dev = &uct_gaudi_own.dev;
    ucs_status_t status;

    status = uct_gaudi_base_init();
    if (status != UCS_OK) {
        return UCS_ERR_NO_DEVICE;
    }

    if (uct_gaudi_base_num_devices() == 0) {
        ucs_debug("no Gaudi devices");
        return UCS_ERR_NO_DEVICE;
    }

    pthread_mutex_lock(&uct_gaudi_own.lock);
    if (dev->refcount == 0) {
        status = uct_gaudi_own_open(dev);
        if (status != UCS_OK) {
            goto out;
        }
    }

    ++dev->refcount;
    *dev_p = dev;
out:
    pthread_mutex_unlock(&uct_gaudi_own.lock);
    return status;
}

void uct_gaudi_dev_release(uct_gaudi_dev_t *dev)
{
    pthread_mutex_lock(&uct_gaudi_own.lock);
    ucs_assert(dev->refcount > 0);
    if (--dev->refcount > 0) {
        goto out;
    }

    uct_gaudi_dma_cleanup(dev);
    uct_gaudi_mem_cleanup(dev);
    if (dev->memtype_range) {
        uct_gaudi_mem_memtype_unset(dev->info->dram_base,
                                    dev->info->dram_size);
    }

    if (!dev->adopted) {
        uct_gaudi_seam_ops->close(dev->fd);
    }

    ucs_spinlock_destroy(&dev->lock);
    ucs_debug("%s: released", dev->name);
    dev->fd = -1;
out:
    pthread_mutex_unlock(&uct_gaudi_own.lock);
}

ucs_status_t uct_gaudi_dev_check(uct_gaudi_dev_t *dev)
{
    if (ucs_likely(!dev->failed)) {
        return UCS_OK;
    }

    ucs_error("device %s failed: %s", dev->name, dev->fail_reason);
    return UCS_ERR_IO_ERROR;
}

void uct_gaudi_dev_set_failed(uct_gaudi_dev_t *dev, const char *fmt, ...)
{
    va_list ap;

    ucs_spin_lock(&dev->lock);
    if (dev->failed) {
        ucs_spin_unlock(&dev->lock);
        return;
    }

    va_start(ap, fmt);
    vsnprintf(dev->fail_reason, sizeof(dev->fail_reason), fmt, ap);
    va_end(ap);
    dev->failed = 1;
    ucs_spin_unlock(&dev->lock);

    ucs_error("device %s failed: %s", dev->name, dev->fail_reason);
}

int uct_gaudi_dev_is_operational(uct_gaudi_dev_t *dev)
{
    struct hl_info_device_status dev_status;

    memset(&dev_status, 0, sizeof(dev_status));
    if (uct_gaudi_ioctl_info(dev->fd, HL_INFO_DEVICE_STATUS, &dev_status,
                             sizeof(dev_status)) < 0) {
        ucs_debug("%s: INFO(DEVICE_STATUS) failed: %m", dev->name);
        return 0;
    }

    return dev_status.status == HL_DEVICE_STATUS_OPERATIONAL;
}
