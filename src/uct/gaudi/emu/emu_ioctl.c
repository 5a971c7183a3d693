/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_ioctl.h"
#include "emu_uaccess.h"
#include "emu_cb.h"
#include "emu_cs.h"
#include "emu_dev.h"
#include "emu_exec.h"
#include "emu_fault.h"
#include "emu_fd.h"
#include "emu_global.h"
#include "emu_info.h"
#include "emu_log.h"
#include "emu_mem.h"
#include "emu_reset.h"
#include "emu_wait.h"

#include <string.h>
#include <sys/mman.h>

typedef union {
    struct hl_info_args    info;
    union hl_cb_args       cb;
    union hl_cs_args       cs;
    union hl_wait_cs_args  wait;
    union hl_mem_args      mem;
    struct hl_debug_args   debug;
} emu_ioctl_args_t;


/* The command index of @request in the configured generation; a code of
 * another generation is as unknown as any other (ENOTTY) */
static int emu_ioctl_decode(unsigned long request, uct_gaudi_ioc_t *ioc_p)
{
    int ioc;

    for (ioc = 0; ioc < UCT_GAUDI_IOC_LAST; ++ioc) {
        if (request == uct_gaudi_abi_ioctl_code(emu_g.cfg.abi, ioc)) {
            *ioc_p = (uct_gaudi_ioc_t)ioc;
            return 0;
        }
    }

    return -ENOTTY;
}

static int emu_ioctl_dispatch(emu_ctx_t *ctx, uct_gaudi_ioc_t ioc,
                              emu_ioctl_args_t *args)
{
    switch (ioc) {
    case UCT_GAUDI_IOC_INFO:
        return emu_info_ioctl(ctx, &args->info);
    case UCT_GAUDI_IOC_CB:
        return emu_cb_ioctl(ctx, &args->cb);
    case UCT_GAUDI_IOC_CS:
        return emu_cs_ioctl(ctx, &args->cs);
    case UCT_GAUDI_IOC_WAIT_CS:
        return emu_wait_ioctl(ctx, &args->wait);
    case UCT_GAUDI_IOC_MEMORY:
        return emu_mem_ioctl(ctx, &args->mem);
    default:
        return -EOPNOTSUPP;     /* DEBUG: no profiler to drive */
    }
}

/* A request the node does not serve. The drivers of the 'H' codes (misc
 * and transitional) write "invalid ioctl" to the kernel log at error level;
 * the DRM generation's core and control node do so only at debug level */
static int emu_ioctl_invalid(void)
{
    if (emu_abi()->logs_invalid_ioctl) {
        emu_log_kernel_error();
    }

    return -ENOTTY;
}

/* Whether an injected @a err on @a ioc stands for a device that stopped */
static int emu_ioctl_fault_halts(uct_gaudi_ioc_t ioc, int err)
{
    return ((ioc == UCT_GAUDI_IOC_CS) || (ioc == UCT_GAUDI_IOC_WAIT_CS)) &&
           ((err == EIO) || (err == ENODEV) || (err == ETIMEDOUT));
}

static int emu_ioctl_ctx(emu_ctx_t *ctx, unsigned long request, void *arg)
{
    size_t size = _IOC_SIZE(request);
    emu_ioctl_args_t args;
    uct_gaudi_ioc_t ioc;
    int ret;

    if (emu_ioctl_decode(request, &ioc) != 0) {
        return emu_ioctl_invalid();
    }

    if (!ctx->compute && (ioc != UCT_GAUDI_IOC_INFO)) {
        return emu_ioctl_invalid(); /* the control node serves INFO only */
    }

    /* _hl_ioctl: the argument is copied in before the request runs and
     * out after it, and a bad pointer is EFAULT either way (the request
     * itself has happened when only the copy out fails) */
    if ((arg == NULL) ||
        (emu_copy_from_user(&args, (uintptr_t)arg, size) != 0)) {
        return -EFAULT;
    }

    ret = -emu_fault_call(emu_fault_ioc_kind(ioc));
    if (ret == 0) {
        ret = emu_ioctl_dispatch(ctx, ioc, &args);
        if (emu_copy_to_user((uintptr_t)arg, &args, size) != 0) {
            ret = -EFAULT;
        }
    } else if (emu_ioctl_fault_halts(ioc, -ret)) {
        /* the driver answers CS or WAIT_CS with these only when the device
         * was reset, removed or timed out: its engines no longer run this
         * context's CSs, so neither do ours (a CS that moved data after
         * the caller was told the device failed would write memory the
         * caller has given up) */
        emu_reset_cond(ctx->dev, ctx->sdev, HL_NOTIFIER_EVENT_DEVICE_RESET,
                       0);
    }

    if (emu_fault_reset_due()) {
        /* an error the driver resets the device for (hl_device_cond_reset
         * from a fatal event, a heartbeat failure...) */
        emu_reset_cond(ctx->dev, ctx->sdev, HL_NOTIFIER_EVENT_DEVICE_RESET,
                       0);
    }

    return ret;
}

int emu_ioctl(int fd, unsigned long request, void *arg)
{
    emu_ctx_t *ctx;
    int err, ret;

    ctx = emu_fd_get_trusted(fd, &err);
    if (ctx == NULL) {
        return emu_fail(err);
    }

    ret = emu_ioctl_ctx(ctx, request, arg);
    emu_fd_put(ctx);

    return (ret < 0) ? emu_fail(-ret) : 0;
}

static void emu_munmap_ctx(emu_ctx_t *ctx, void *arg)
{
    if (ctx->compute) {
        emu_cb_unmapped(ctx, arg);
    }
}

void *emu_mmap(void *addr, size_t length, int prot, int flags, int fd,
               off_t offset)
{
    emu_ctx_t *ctx;
    void *ptr = MAP_FAILED;
    int err;

    ctx = (fd < 0) ? NULL : emu_fd_get(fd, &err);
    if (ctx == NULL) {
        if ((fd >= 0) && (err == EBADF)) {
            errno = EBADF;
            return MAP_FAILED;
        }
        ptr = mmap(addr, length, prot, flags, fd, offset);
        if ((ptr != MAP_FAILED) && (flags & MAP_FIXED)) {
            /* a fixed mapping replaces what was there, a CB's too */
            emu_fd_foreach(-1, emu_munmap_ctx, addr);
        }
        return ptr;
    }

    err = ctx->compute ? emu_fault_call(EMU_FAULT_MMAP) : EINVAL;
    if (err == 0) {
        ptr = emu_cb_mmap(ctx, addr, length, prot, flags, offset);
        err = (ptr == MAP_FAILED) ? errno : 0;
    }
    emu_fd_put(ctx);

    if (err != 0) {
        errno = err;
        return MAP_FAILED;
    }

    return ptr;
}

int emu_munmap(void *addr, size_t length)
{
    emu_fd_foreach(-1, emu_munmap_ctx, addr);
    return munmap(addr, length);
}
