/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_pid.h"
#include "emu_ctx.h"
#include "emu_cb.h"
#include "emu_dev.h"
#include "emu_global.h"
#include "emu_mem.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


emu_ctx_t *emu_ctx_create(int dev, int compute)
{
    pthread_condattr_t attr;
    emu_ctx_t *ctx;

    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return NULL;
    }

    if (compute) {
        ctx->cs_window = emu_g.asic->max_pending_cs;
        ctx->ring      = calloc(ctx->cs_window, sizeof(*ctx->ring));
        if (ctx->ring == NULL) {
            free(ctx);
            return NULL;
        }
    }

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ctx->cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&ctx->lock, NULL);

    ctx->fd       = -1;
    ctx->dev      = dev;
    ctx->compute  = compute;
    ctx->pid      = emu_getpid();
    ctx->sdev     = emu_state_dev(dev);
    ctx->next_seq = 1;
    ctx->eventfd  = -1;
    ctx->id       = emu_state_new_ctx_id();
    return ctx;
}

static void emu_ctx_free(emu_ctx_t *ctx)
{
    if (ctx->eventfd >= 0) {
        close(ctx->eventfd);
    }
    pthread_cond_destroy(&ctx->cond);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx->ring);
    free(ctx);
}

void emu_ctx_destroy(emu_ctx_t *ctx)
{
    if (ctx->compute) {
        /* always set where a compute context is made (emu_open.c): a
         * context without it would free what its worker still runs on */
        ctx->exec_stop(ctx);
        emu_cb_cleanup(ctx);
        emu_mem_cleanup(ctx);
        emu_dev_release(ctx->dev, ctx->sdev, ctx->id);
    }

    emu_ctx_free(ctx);
}

void emu_ctx_forget(emu_ctx_t *ctx)
{
    emu_cb_t *cb;
    void *next;

    /* A copy inherited over fork: drop our copies of its memory and fds,
     * but touch neither its locks (maybe held by a parent thread at fork
     * time), nor the shared state (the parent still owns the context), nor
     * jobs a parent worker may have been freeing. */
    for (cb = ctx->cbs; cb != NULL; cb = next) {
        next = cb->next;
        munmap(cb->kva, cb->length);
        close(cb->memfd);
        free(cb);
    }

    for (next = ctx->dmabufs; next != NULL; ) {
        void *buf = next;

        next = *(void**)buf;   /* struct emu_dmabuf starts with its link */
        free(buf);
    }

    if (ctx->eventfd >= 0) {
        close(ctx->eventfd);
    }

    free(ctx->va.maps);
    free(ctx->ring);
    free(ctx);
}

void emu_ctx_drop(emu_ctx_t *ctx, emu_drop_t reason)
{
    __atomic_add_fetch(&ctx->drops[reason], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ctx->sdev->cs_drops[reason], 1, __ATOMIC_RELAXED);
}

void emu_ctx_event(emu_ctx_t *ctx, uint64_t events)
{
    uint64_t one = 1;
    ssize_t ret;

    pthread_mutex_lock(&ctx->lock);
    ctx->events |= events;
    if (ctx->eventfd >= 0) {
        ret = write(ctx->eventfd, &one, sizeof(one));
        (void)ret;
    }
    pthread_mutex_unlock(&ctx->lock);
}
