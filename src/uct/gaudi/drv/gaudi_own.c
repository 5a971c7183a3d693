/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_own.h"
#include "gaudi_app.h"
#include "gaudi_dma.h"
#include "gaudi_lib.h"
#include "gaudi_health.h"
#include "gaudi_hook.h"
#include "gaudi_ioctl.h"
#include "gaudi_mem.h"
#include "gaudi_reset.h"
#include "gaudi_seam.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ucs/time/time.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Lowest address that cannot be a user-space host address (x86-64, 4-level
 * paging): a DRAM VA range above it cannot collide with host memory */
#define UCT_GAUDI_OWN_HOST_VA_LIMIT (1ull << 47)


typedef struct {
    unsigned candidates;  /* usable devices tried */
    unsigned busy;        /* EBUSY: owned by another process */
    unsigned unavailable; /* EPERM/other: broken */
    unsigned resetting;   /* EAGAIN after UCX_GAUDI_RESET_WAIT */
    int      last_err;
} uct_gaudi_own_scan_t;


/* The one device a process owns, with its memory and DMA state */
static struct {
    /* guards dev (open, refcount, release) and last_failure; taken inside
     * the gaudi_ipc singleton and buffer table locks, and the device's
     * memory, DMA and health locks are taken inside it */
    pthread_mutex_t     lock;
    uct_gaudi_dev_t     dev;
    uct_gaudi_mem_ctx_t mem;
    uct_gaudi_dma_ctx_t dma;
    char                last_failure[UCT_GAUDI_ASSIGN_ERROR_MAX]; /* said */
    int                 app_fd;  /* dev's fd while the hook may learn the
                                    application's requests on it, else -1 */
} uct_gaudi_own = {
    .lock   = PTHREAD_MUTEX_INITIALIZER,
    .app_fd = -1
};


/* Every MD open asks for the device again: say a failure once, not once per
 * MD (a repeat goes to the debug log); a success makes it new again */
static void uct_gaudi_own_report(ucs_log_level_t level, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);
static void uct_gaudi_own_report(ucs_log_level_t level, const char *fmt, ...)
{
    char msg[UCT_GAUDI_ASSIGN_ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    if (!strcmp(msg, uct_gaudi_own.last_failure)) {
        ucs_debug("%s", msg);
        return;
    }

    ucs_strncpy_safe(uct_gaudi_own.last_failure, msg,
                     sizeof(uct_gaudi_own.last_failure));
    ucs_log(level, "%s", msg);
}

/* Check that @a fd is a compute node of the device described by @a info */
static ucs_status_t uct_gaudi_own_verify(int fd,
                                         const uct_gaudi_dev_info_t *info)
{
    struct hl_info_hw_ip_info hw_ip;

    memset(&hw_ip, 0, sizeof(hw_ip));
    if (UCT_GAUDI_NODE_FUNC(info->compute_path,
                            uct_gaudi_ioctl_info(fd, HL_INFO_HW_IP_INFO,
                                                 &hw_ip, sizeof(hw_ip)),
                            UCS_LOG_LEVEL_DEBUG) != UCS_OK) {
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

    for (i = 0; i < uct_gaudi_lib_num_devices(); ++i) {
        info = uct_gaudi_lib_device(i);
        if (info->minor == minor) {
            return info;
        }
    }

    return NULL;
}

/* Adopt a usable compute fd of this process, if @a fd is one */
static int uct_gaudi_own_try_adopt(uct_gaudi_dev_t *dev, int fd,
                                   uct_gaudi_assign_t *assign)
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
    assign->rule = UCT_GAUDI_ASSIGN_ADOPTED;
    ucs_snprintf_safe(assign->why, sizeof(assign->why), "the compute node "
                      "this process already had open (fd %d, %s)", fd, path);
    return 1;
}

/* A compute node this process already holds: never open a device twice */
static ucs_status_t uct_gaudi_own_adopt(uct_gaudi_dev_t *dev,
                                        uct_gaudi_assign_t *assign)
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

        if (uct_gaudi_own_try_adopt(dev, (int)fd, assign)) {
            closedir(dir);
            return UCS_OK;
        }
    }

    closedir(dir);
    return UCS_ERR_NO_ELEM;
}

/* Pauses between opens of a device that resets: from 1 ms, doubling, at
 * most 100 ms */
#define UCT_GAUDI_OWN_RETRY_MIN_US  1000
#define UCT_GAUDI_OWN_RETRY_MAX_US  100000


/*
 * Open the compute node at @a path. While the driver answers EAGAIN the
 * device resets (hl_device_open: in reset, in the reset after its previous
 * owner's release, DRAM scrub, the previous owner still being released):
 * it will be free, so it is retried for UCX_GAUDI_RESET_WAIT, never left
 * for another device (a restarted rank would take another rank's module).
 * Returns the fd, or -1/errno (EAGAIN: still resetting at the deadline).
 */
static int uct_gaudi_own_open_retry(const uct_gaudi_dev_info_t *info)
{
    double wait         = uct_gaudi_lib_config()->reset_wait;
    unsigned pause_us   = UCT_GAUDI_OWN_RETRY_MIN_US;
    unsigned attempts   = 1;
    ucs_time_t start    = ucs_get_time();
    int fd;

    while (((fd = uct_gaudi_seam_ops->open(info->compute_path,
                                           O_RDWR | O_CLOEXEC)) < 0) &&
           (errno == EAGAIN)) {
        if (ucs_time_to_sec(ucs_get_time() - start) >= wait) {
            ucs_debug("%s: still resetting after %.3f s, %u attempts",
                      info->name, ucs_time_to_sec(ucs_get_time() - start),
                      attempts);
            errno = EAGAIN;
            return -1;
        } else if (attempts == 1) {
            ucs_diag("%s (module %u) is resetting (EAGAIN from its open: "
                     "its previous owner's release or an error): waiting up "
                     "to %.1f s (UCX_GAUDI_RESET_WAIT)", info->name,
                     info->module_id, wait);
        }

        usleep(pause_us);
        pause_us = ucs_min(pause_us * 2, UCT_GAUDI_OWN_RETRY_MAX_US);
        ++attempts;
    }

    if ((fd >= 0) && (attempts > 1)) {
        ucs_debug("%s: opened after %u attempts, %.3f s of reset",
                  info->name, attempts,
                  ucs_time_to_sec(ucs_get_time() - start));
    }

    return fd;
}

/* Open the compute node of @a info; 0 or -1/errno */
static int uct_gaudi_own_open_node(uct_gaudi_dev_t *dev,
                                   const uct_gaudi_dev_info_t *info)
{
    int fd;

    fd = uct_gaudi_own_open_retry(info);
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

/* A forced rule named this device: that one or none */
static ucs_status_t uct_gaudi_own_open_forced(uct_gaudi_dev_t *dev,
                                              const uct_gaudi_assign_t *assign)
{
    const uct_gaudi_dev_info_t *info = assign->device;
    int err;

    if (uct_gaudi_own_open_node(dev, info) == 0) {
        return UCS_OK;
    }

    err = errno;
    if (err == EBUSY) {
        uct_gaudi_own_report(UCS_LOG_LEVEL_ERROR, "%s (module %u, bus %s) "
                             "chosen by %s is busy (owned by another "
                             "process); UCX continues without the Gaudi "
                             "transports", info->name, info->module_id,
                             info->bus_id, assign->why);
    } else if (err == EAGAIN) {
        uct_gaudi_own_report(UCS_LOG_LEVEL_ERROR, "%s (module %u, bus %s) "
                             "chosen by %s is still resetting after %.1f s "
                             "(UCX_GAUDI_RESET_WAIT); UCX continues without "
                             "the Gaudi transports", info->name,
                             info->module_id, info->bus_id, assign->why,
                             uct_gaudi_lib_config()->reset_wait);
    } else {
        uct_gaudi_own_report(UCS_LOG_LEVEL_ERROR, "failed to open %s (%s, "
                             "module %u) chosen by %s: %s; UCX continues "
                             "without the Gaudi transports",
                             info->compute_path, info->name, info->module_id,
                             assign->why, strerror(err));
    }

    return uct_gaudi_err_status(err);
}

static ucs_status_t uct_gaudi_own_scan_result(const uct_gaudi_own_scan_t *scan,
                                              const uct_gaudi_assign_t *assign)
{
    if (scan->candidates == 0) {
        uct_gaudi_own_report(UCS_LOG_LEVEL_WARN, "none of the %u Gaudi "
                             "devices%s can be used (Gaudi3 DMA is not "
                             "supported; other devices are not operational)",
                             uct_gaudi_lib_num_devices(), assign->why);
        return UCS_ERR_UNSUPPORTED;
    }

    if (scan->busy == scan->candidates) {
        uct_gaudi_own_report(UCS_LOG_LEVEL_WARN, "all %u Gaudi devices%s are "
                             "busy (owned by other processes)",
                             scan->candidates, assign->why);
        return UCS_ERR_BUSY;
    }

    uct_gaudi_own_report(UCS_LOG_LEVEL_WARN, "no Gaudi device%s could be "
                         "opened: %u busy, %u still resetting after %.1f s "
                         "(UCX_GAUDI_RESET_WAIT), %u unavailable (last "
                         "error: %s)", assign->why, scan->busy,
                         scan->resetting, uct_gaudi_lib_config()->reset_wait,
                         scan->unavailable, strerror(scan->last_err));
    return (scan->busy > 0) ? UCS_ERR_BUSY : UCS_ERR_NO_DEVICE;
}

/* Try the devices of @a mask in logical order; 1 if one was opened */
static int uct_gaudi_own_try_mask(uct_gaudi_dev_t *dev, uint64_t mask,
                                  uct_gaudi_own_scan_t *scan)
{
    const uct_gaudi_dev_info_t *info;
    unsigned i;

    for (i = 0; i < uct_gaudi_lib_num_devices(); ++i) {
        if (!(mask & UCS_BIT(i))) {
            continue;
        }

        info = uct_gaudi_lib_device(i);
        ++scan->candidates;
        if (uct_gaudi_own_open_node(dev, info) == 0) {
            return 1;
        }

        scan->last_err = errno;
        if (scan->last_err == EBUSY) {
            ++scan->busy;
            ucs_debug("%s is busy (owned by another process)", info->name);
        } else if (scan->last_err == EAGAIN) {
            ++scan->resetting;
            ucs_debug("%s is still resetting", info->name);
        } else {
            ++scan->unavailable;
            ucs_debug("%s is unavailable: %s%s", info->name,
                      strerror(scan->last_err),
                      (scan->last_err == EPERM) ? " (not operational)" : "");
        }
    }

    return 0;
}

/* The NUMA rule (the preferred candidates), then the first-free rule */
static ucs_status_t uct_gaudi_own_open_scan(uct_gaudi_dev_t *dev,
                                            uct_gaudi_assign_t *assign)
{
    uct_gaudi_own_scan_t scan = {0, 0, 0, 0, 0};

    if (uct_gaudi_own_try_mask(dev, assign->preferred, &scan) ||
        uct_gaudi_own_try_mask(dev, assign->candidates & ~assign->preferred,
                               &scan)) {
        uct_gaudi_assign_scan_taken(assign, dev->info);
        return UCS_OK;
    }

    return uct_gaudi_own_scan_result(&scan, assign);
}

/* The device the assignment rules give this process, opened */
static ucs_status_t uct_gaudi_own_open_assigned(uct_gaudi_dev_t *dev,
                                                uct_gaudi_assign_t *assign)
{
    const uct_gaudi_lib_config_t *config = uct_gaudi_lib_config();
    uct_gaudi_assign_env_t env;
    ucs_status_t status;
    long fake_numa;

    /* the emulator's test knob stands for the CPU affinity of the process */
    fake_numa = (uct_gaudi_seam_is_emulated() &&
                 (config->emu_proc_numa != UCS_ULUNITS_AUTO)) ?
                (long)config->emu_proc_numa : -1;
    uct_gaudi_assign_read_env(config->device, fake_numa, &env);
    status = uct_gaudi_assign_plan(&env, uct_gaudi_lib_devices(),
                                   uct_gaudi_lib_num_devices(), assign);
    if (status != UCS_OK) {
        uct_gaudi_own_report(UCS_LOG_LEVEL_ERROR, "%s", assign->error);
        return status;
    }

    return (assign->device != NULL) ? uct_gaudi_own_open_forced(dev, assign) :
                                      uct_gaudi_own_open_scan(dev, assign);
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

/* The application's memory request (gaudi_hook.h): learned when it is on
 * the compute fd of the device this process owns (gaudi_app.h) */
static int uct_gaudi_own_app_mem(int fd, unsigned long request,
                                 union hl_mem_args *args,
                                 uct_gaudi_hook_next_t next)
{
    uct_gaudi_dev_t *dev = &uct_gaudi_own.dev;
    int ret, err;

    /* most requests are on no owned fd: not behind the ownership lock,
     * which an open holds while the device resets (UCX_GAUDI_RESET_WAIT) */
    if (fd != *(volatile int*)&uct_gaudi_own.app_fd) {
        return next(fd, request, args);
    }

    /* held for the request, which may wait for the importers to let go */
    pthread_mutex_lock(&uct_gaudi_own.lock);
    if ((dev->refcount == 0) || (dev->fd != fd) || dev->failed) {
        pthread_mutex_unlock(&uct_gaudi_own.lock);
        return next(fd, request, args);
    }

    ++dev->refcount;
    pthread_mutex_unlock(&uct_gaudi_own.lock);

    ret = uct_gaudi_app_mem_ioctl(dev, fd, request, args, next);
    err = errno;
    uct_gaudi_own_release(dev);
    errno = err;
    return ret;
}

/* From now on learn the memory the application's runtime allocates itself
 * (Gaudi2+: Gaudi1 DRAM has no handles) */
static void uct_gaudi_own_app_hook(uct_gaudi_dev_t *dev)
{
    ucs_status_t status;

    if (!uct_gaudi_lib_config()->app_memory ||
        (dev->info->asic < UCT_GAUDI_ASIC_GAUDI2)) {
        return;
    }

    status = uct_gaudi_hook_install(
            uct_gaudi_abi_ioctl_code(uct_gaudi_ioctl_abi(),
                                     UCT_GAUDI_IOC_MEMORY),
            uct_gaudi_own_app_mem);
    if (status == UCS_OK) {
        uct_gaudi_own.app_fd = dev->fd;
    } else {
        uct_gaudi_own_report(UCS_LOG_LEVEL_WARN, "%s: cannot hook ioctl() "
                             "(%s): Gaudi memory the application allocates "
                             "itself is not shared with peers, which stage "
                             "its transfers (UCX_GAUDI_APP_MEMORY)",
                             dev->name, ucs_status_string(status));
    }
}

static ucs_status_t uct_gaudi_own_open(uct_gaudi_dev_t *dev)
{
    uct_gaudi_assign_t assign;
    ucs_status_t status;

    memset(dev, 0, sizeof(*dev));
    dev->fd         = -1;
    dev->event_fd   = -1;
    dev->can_import = -1;
    dev->mem        = &uct_gaudi_own.mem;
    dev->dma        = &uct_gaudi_own.dma;
    status          = uct_gaudi_own_adopt(dev, &assign);
    if (status == UCS_ERR_NO_ELEM) {
        status = uct_gaudi_own_open_assigned(dev, &assign);
    }

    if (status != UCS_OK) {
        return status;
    }

    dev->assigned_by = assign.rule;
    ucs_strncpy_safe(dev->name, dev->info->name, sizeof(dev->name));
    pthread_mutex_init(&dev->lock, NULL);
    status = uct_gaudi_mem_init(dev);
    if (status != UCS_OK) {
        goto err_close;
    }

    status = uct_gaudi_dma_init(dev);
    if (status != UCS_OK) {
        goto err_mem;
    }

    /* an adopted device is the application's: its runtime registers for
     * its events and decides when to close it */
    if (!dev->adopted) {
        status = uct_gaudi_reset_watch(dev);
        if (status != UCS_OK) {
            goto err_dma;
        }
    }

    if (dev->failed) {
        /* it reset while we opened it (said when it failed): the driver
         * wants it closed, and this process goes on without it */
        status = UCS_ERR_IO_ERROR;
        goto err_unwatch;
    }

    uct_gaudi_own_memtype_register(dev);
    uct_gaudi_own_app_hook(dev);
    /* which device and why: what an MPI job's user checks first */
    ucs_info("%s (module %u, bus %s, NUMA node %d, %s): chosen by %s",
             dev->name, dev->info->module_id, dev->info->bus_id,
             dev->info->numa_node, dev->info->compute_path, assign.why);
    return UCS_OK;

err_unwatch:
    uct_gaudi_reset_unwatch(dev);
err_dma:
    uct_gaudi_dma_cleanup(dev);
err_mem:
    uct_gaudi_mem_cleanup(dev);
err_close:
    pthread_mutex_destroy(&dev->lock);
    if (!dev->adopted) {
        uct_gaudi_seam_ops->close(dev->fd);
    }
    return status;
}

ucs_status_t uct_gaudi_own_acquire(uct_gaudi_dev_t **dev_p)
{
    uct_gaudi_dev_t *dev = &uct_gaudi_own.dev;
    ucs_status_t status;

    status = uct_gaudi_lib_init();
    if (status != UCS_OK) {
        return UCS_ERR_NO_DEVICE;
    }

    if (uct_gaudi_lib_num_devices() == 0) {
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
    *dev_p                        = dev;
    uct_gaudi_own.last_failure[0] = '\0';
out:
    pthread_mutex_unlock(&uct_gaudi_own.lock);
    return status;
}

void uct_gaudi_own_release(uct_gaudi_dev_t *dev)
{
    /* the last release of an adopted device: chunks that importers still
     * hold would stay allocated in the application's context (gaudi_mem.h);
     * they get their time here, without the ownership lock, which every
     * acquire and the hooked application's requests take. (A release that
     * turns out not to be the last only waited in vain.) */
    if (dev->adopted &&
        (__atomic_load_n(&dev->refcount, __ATOMIC_RELAXED) == 1)) {
        uct_gaudi_mem_wait_deferred(dev);
    }

    pthread_mutex_lock(&uct_gaudi_own.lock);
    ucs_assert(dev->refcount > 0);
    if (--dev->refcount > 0) {
        goto out;
    }

    /* no release from the async thread from now on */
    uct_gaudi_own.app_fd = -1;
    uct_gaudi_reset_unwatch(dev);
    uct_gaudi_app_forget();
    uct_gaudi_dma_cleanup(dev);
    uct_gaudi_mem_cleanup(dev);
    if (dev->memtype_range) {
        uct_gaudi_mem_memtype_unset(dev->info->dram_base,
                                    dev->info->dram_size);
    }

    if (!dev->adopted) {
        uct_gaudi_seam_ops->close(dev->fd);
    }

    pthread_mutex_destroy(&dev->lock);
    ucs_debug("%s: released", dev->name);
    dev->fd = -1;
out:
    pthread_mutex_unlock(&uct_gaudi_own.lock);
}
