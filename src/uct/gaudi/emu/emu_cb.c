/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_cb.h"
#include "emu_dev.h"
#include "emu_global.h"
#include "emu_va.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EMU_CB_MIN_CS_SIZE  8


/* Called with ctx->lock held */
static emu_cb_t *emu_cb_find(emu_ctx_t *ctx, uint64_t handle, emu_cb_t ***prev)
{
    emu_cb_t **p;

    for (p = &ctx->cbs; *p != NULL; p = &(*p)->next) {
        if ((*p)->handle == handle) {
            if (prev != NULL) {
                *prev = p;
            }
            return *p;
        }
    }

    return NULL;
}

/* Map a CB into the device MMU (HL_CB_FLAGS_MAP); ctx->lock held */
static int emu_cb_map_device(emu_ctx_t *ctx, emu_cb_t *cb)
{
    const emu_asic_t *asic = emu_g.asic;
    emu_map_t map;
    int ret;

    memset(&map, 0, sizeof(map));
    map.size = cb->length;
    map.host      = cb->kva;
    map.type      = EMU_MAP_CB;
    map.import_fd = -1;

    ret = emu_va_reserve(&ctx->va, asic->host_va_start, asic->host_va_end,
                         map.size, EMU_HOST_PAGE, 0, 0, &map.va);
    if (ret == 0) {
        map.user_va = map.va;
        ret         = emu_va_insert(&ctx->va, &map);
    }

    cb->device_va = (ret == 0) ? map.va : 0;
    return ret;
}

/* Take a CB out of the device MMU (HL_CB_FLAGS_MAP); ctx->lock held */
static void emu_cb_unmap_device(emu_ctx_t *ctx, emu_cb_t *cb)
{
    emu_map_t *map;

    if (cb->device_va != 0) {
        map = emu_va_find(&ctx->va, cb->device_va);
        if (map != NULL) {
            emu_va_remove(&ctx->va, map);
        }
        cb->device_va = 0;
    }
}

static void emu_cb_free(emu_ctx_t *ctx, emu_cb_t *cb)
{
    emu_cb_unmap_device(ctx, cb);

    /* a user mapping keeps the memfd pages alive until munmap */
    munmap(cb->kva, cb->length);
    close(cb->memfd);
    free(cb);
}

static int emu_cb_create(emu_ctx_t *ctx, union hl_cb_args *args)
{
    uint32_t size = args->in.cb_size;
    emu_cb_t *cb;
    int ret;

    if (size > HL_MAX_CB_SIZE) {
        return -EINVAL;
    }

    cb = calloc(1, sizeof(*cb));
    if (cb == NULL) {
        return -ENOMEM;
    }

    /* the minimum allocation is a page, whatever cb_size says */
    cb->size   = emu_max(size, (uint32_t)EMU_HOST_PAGE);
    cb->length = emu_align_up((size_t)cb->size, EMU_HOST_PAGE);
    cb->memfd  = memfd_create("gaudi-emu-cb", MFD_CLOEXEC);
    if ((cb->memfd < 0) || (ftruncate(cb->memfd, cb->length) != 0)) {
        goto err_free;
    }

    cb->kva = mmap(NULL, cb->length, PROT_READ | PROT_WRITE, MAP_SHARED,
                   cb->memfd, 0);
    if (cb->kva == MAP_FAILED) {
        goto err_free;
    }

    pthread_mutex_lock(&ctx->lock);
    cb->handle = EMU_CB_HANDLE_TAG | (++ctx->next_cb_id * EMU_HOST_PAGE);
    ret        = (args->in.flags & HL_CB_FLAGS_MAP) ?
                 emu_cb_map_device(ctx, cb) : 0;
    if (ret == 0) {
        cb->next = ctx->cbs;
        ctx->cbs = cb;
    }
    pthread_mutex_unlock(&ctx->lock);

    if (ret != 0) {
        munmap(cb->kva, cb->length);
        close(cb->memfd);
        free(cb);
        return ret;
    }

    memset(args, 0, sizeof(*args));
    args->out.cb_handle = cb->handle;
    return 0;

err_free:
    if (cb->memfd >= 0) {
        close(cb->memfd);
    }
    free(cb);
    return -ENOMEM;
}

static int emu_cb_destroy(emu_ctx_t *ctx, union hl_cb_args *args)
{
    emu_cb_t **prev;
    emu_cb_t *cb;

    pthread_mutex_lock(&ctx->lock);
    cb = emu_cb_find(ctx, args->in.cb_handle, &prev);
    if (cb != NULL) {
        *prev = cb->next;
        /* A CS being executed (emu_exec.c: no lock held while the data
         * moves) may be reading this CB through its device VA: its memory
         * goes only after that CS, as the driver frees a CB at its last
         * reference (hl_cb_destroy). A CS that looks the VA up from now on
         * takes an MMU fault: the VA goes first. */
        emu_cb_unmap_device(ctx, cb);
        while (ctx->executing) {
            pthread_cond_wait(&ctx->cond, &ctx->lock);
        }
        emu_cb_free(ctx, cb);
    }
    pthread_mutex_unlock(&ctx->lock);

    return (cb != NULL) ? 0 : -EINVAL;
}

static int emu_cb_info(emu_ctx_t *ctx, union hl_cb_args *args)
{
    uint64_t device_va = 0;
    emu_cb_t *cb;
    int ret = 0;

    pthread_mutex_lock(&ctx->lock);
    cb = emu_cb_find(ctx, args->in.cb_handle, NULL);
    if (cb == NULL) {
        ret = -EINVAL;
    } else if (args->in.flags & HL_CB_FLAGS_GET_DEVICE_VA) {
        device_va = cb->device_va;
        ret       = (device_va == 0) ? -EINVAL : 0;
    }
    pthread_mutex_unlock(&ctx->lock);

    if (ret == 0) {
        /* kernel CBs are copied at submission: never in use by a CS */
        memset(args, 0, sizeof(*args));
        args->out.device_va = device_va;
    }

    return ret;
}

int emu_cb_ioctl(emu_ctx_t *ctx, union hl_cb_args *args)
{
    /* hl_cb_ioctl refuses every op, DESTROY too, while the device is not
     * operational (the CBs go with the fd) */
    if (!emu_dev_operational(ctx->sdev)) {
        return -EBUSY;
    }

    switch (args->in.op) {
    case HL_CB_OP_CREATE:
        return emu_cb_create(ctx, args);
    case HL_CB_OP_DESTROY:
        return emu_cb_destroy(ctx, args);
    case HL_CB_OP_INFO:
        return emu_cb_info(ctx, args);
    default:
        return -EINVAL;
    }
}

void *emu_cb_mmap(emu_ctx_t *ctx, void *addr, size_t length, int prot,
                  int flags, off_t offset)
{
    void *ptr = MAP_FAILED;
    emu_cb_t *cb;
    int err = EINVAL;

    pthread_mutex_lock(&ctx->lock);
    cb = emu_cb_find(ctx, (uint64_t)offset, NULL);
    if ((cb != NULL) && (length == cb->length) && (cb->uva == NULL)) {
        ptr = mmap(addr, length, prot, flags, cb->memfd, 0);
        if (ptr == MAP_FAILED) {
            err = errno;
        } else {
            cb->uva = ptr;
        }
    }
    pthread_mutex_unlock(&ctx->lock);

    if (ptr == MAP_FAILED) {
        errno = err;
    }
    return ptr;
}

void emu_cb_unmapped(emu_ctx_t *ctx, void *addr)
{
    emu_cb_t *cb;

    pthread_mutex_lock(&ctx->lock);
    for (cb = ctx->cbs; cb != NULL; cb = cb->next) {
        if (cb->uva == addr) {
            cb->uva = NULL;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
}

int emu_cb_copy(emu_ctx_t *ctx, uint64_t handle, uint32_t size,
                uint8_t **copy_p)
{
    uint8_t *copy = NULL;
    emu_cb_t *cb;
    int ret = -EINVAL;

    pthread_mutex_lock(&ctx->lock);
    cb = emu_cb_find(ctx, handle, NULL);
    if ((cb != NULL) && (size >= EMU_CB_MIN_CS_SIZE) && (size <= cb->size)) {
        copy = malloc(size);
        if (copy == NULL) {
            ret = -ENOMEM;
        } else {
            memcpy(copy, cb->kva, size);
            ret = 0;
        }
    }
    pthread_mutex_unlock(&ctx->lock);

    *copy_p = copy;
    return ret;
}

void emu_cb_cleanup(emu_ctx_t *ctx)
{
    emu_cb_t *cb;

    pthread_mutex_lock(&ctx->lock);
    while ((cb = ctx->cbs) != NULL) {
        ctx->cbs = cb->next;
        emu_cb_free(ctx, cb);
    }
    pthread_mutex_unlock(&ctx->lock);
}
