/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_exec.h"
#include "emu_dev.h"
#include "emu_fault.h"
#include "emu_fd.h"
#include "emu_global.h"
#include "emu_pkt.h"
#include "emu_va.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>


static void emu_exec_notify_one(emu_ctx_t *ctx, void *arg)
{
    emu_ctx_event(ctx, *(uint64_t*)arg);
}

void emu_exec_notify(int dev, uint64_t events)
{
    emu_fd_foreach(dev, emu_exec_notify_one, &events);
}

/* Read a user CB through the device MMU */
static int emu_exec_read_cb(emu_ctx_t *ctx, uint64_t va, uint32_t size,
                            uint8_t **buf_p)
{
    uint64_t done = 0, avail;
    uint8_t *buf, *ptr;

    buf = malloc(size);
    if (buf == NULL) {
        return -ENOMEM;
    }

    while (done < size) {
        if (emu_va_translate(ctx, va + done, &ptr, &avail) != 0) {
            free(buf);
            return -EFAULT;
        }
        avail = emu_min(avail, (uint64_t)size - done);
        memcpy(buf + done, ptr, avail);
        done += avail;
    }

    *buf_p = buf;
    return 0;
}

static int emu_exec_job(emu_ctx_t *ctx, const emu_job_t *job,
                        emu_pkt_stats_t *stats)
{
    uint8_t *buf;
    int ret;

    if (job->copy != NULL) {
        return emu_pkt_run(ctx, job->copy, job->size, stats);
    }

    ret = emu_exec_read_cb(ctx, job->cb_va, job->size, &buf);
    if (ret == 0) {
        ret = emu_pkt_run(ctx, buf, job->size, stats);
        free(buf);
    }

    return ret;
}

static void emu_exec_free_jobs(emu_cs_t *cs)
{
    unsigned i;

    for (i = 0; i < cs->num_jobs; ++i) {
        free(cs->jobs[i].copy);
    }
    free(cs->jobs);
    cs->jobs     = NULL;
    cs->num_jobs = 0;
}

/* Run the packets of a CS (no lock held); returns the final status */
static uint32_t emu_exec_run(emu_ctx_t *ctx, emu_cs_t *cs,
                             emu_pkt_stats_t *stats)
{
    unsigned i;

    if (cs->epoch != emu_dev_epoch(ctx->sdev)) {
        return HL_WAIT_CS_STATUS_ABORTED;   /* a reset happened meanwhile */
    }

    if (cs->fault == EMU_CS_FAULT_TIMEOUT) {
        /* the engine hangs: TDR, the device needs a reset */
        emu_dev_fail(ctx->sdev, HL_DEVICE_STATUS_NEEDS_RESET);
        emu_exec_notify(ctx->dev, HL_NOTIFIER_EVENT_CS_TIMEOUT |
                                  HL_NOTIFIER_EVENT_DEVICE_UNAVAILABLE);
        return HL_WAIT_CS_STATUS_TIMEDOUT;
    } else if (cs->fault == EMU_CS_FAULT_ABORT) {
        return HL_WAIT_CS_STATUS_ABORTED;
    }

    for (i = 0; i < cs->num_jobs; ++i) {
        if (emu_exec_job(ctx, &cs->jobs[i], stats) != 0) {
            /* MMU page fault or undefined opcode: the CS fails */
            emu_exec_notify(ctx->dev, HL_NOTIFIER_EVENT_USER_ENGINE_ERR);
            return HL_WAIT_CS_STATUS_ABORTED;
        }
    }

    return HL_WAIT_CS_STATUS_COMPLETED;
}

/* How long an idle worker looks for more work before it sleeps */
#define EMU_EXEC_SPIN_NS  50000ull


static uint64_t emu_exec_model_ns(uint64_t bytes)
{
    double ns = emu_g.cfg.latency * 1e9;

    if (emu_g.cfg.bandwidth > 0) {
        ns += (double)bytes * 1e9 / emu_g.cfg.bandwidth;
    }

    return (uint64_t)ns;
}

/* Execute @cs and publish its completion; ctx->lock held on entry and exit
 * (dropped while the DMA runs) */
static void emu_exec_one(emu_ctx_t *ctx, emu_cs_t *cs)
{
    emu_shm_dev_t *sdev = ctx->sdev;
    emu_pkt_stats_t stats = {0};
    uint64_t start;
    uint32_t status;

    pthread_mutex_unlock(&ctx->lock);
    status = emu_exec_run(ctx, cs, &stats);
    pthread_mutex_lock(&ctx->lock);

    start             = emu_max(emu_now_ns(), ctx->last_done_ns);
    cs->done_ns       = start + emu_exec_model_ns(stats.bytes);
    ctx->last_done_ns = cs->done_ns;
    cs->status        = status;
    cs->state         = EMU_CS_DONE;
    emu_exec_free_jobs(cs);

    __atomic_store_n(&sdev->last_done_ns, cs->done_ns, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sdev->bytes_to_dev, stats.to_dev, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sdev->bytes_to_host, stats.to_host,
                       __ATOMIC_RELAXED);
    if (__atomic_load_n(&sdev->cs_queued, __ATOMIC_RELAXED) != 0) {
        __atomic_sub_fetch(&sdev->cs_queued, 1, __ATOMIC_RELAXED);
    }

    pthread_cond_broadcast(&ctx->cond);
}

/* Wait a little for the next CS without sleeping: a stream of submissions
 * then costs no thread wake-up each, like a busy engine that fetches the
 * next CB at once. ctx->lock held on entry and exit. */
static void emu_exec_spin(emu_ctx_t *ctx)
{
    uint64_t deadline = emu_now_ns() + EMU_EXEC_SPIN_NS;

    pthread_mutex_unlock(&ctx->lock);
    while ((__atomic_load_n(&ctx->fifo_head, __ATOMIC_ACQUIRE) == NULL) &&
           !__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE) &&
           (emu_now_ns() < deadline)) {
        sched_yield();
    }
    pthread_mutex_lock(&ctx->lock);
}

static void *emu_exec_worker(void *arg)
{
    emu_ctx_t *ctx = arg;
    emu_cs_t *cs;

    pthread_mutex_lock(&ctx->lock);
    for (;;) {
        if ((ctx->fifo_head == NULL) && !ctx->stop) {
            emu_exec_spin(ctx);
        }

        while ((ctx->fifo_head == NULL) && !ctx->stop) {
            pthread_cond_wait(&ctx->cond, &ctx->lock);
        }

        cs = ctx->fifo_head;
        if (cs == NULL) {
            break;          /* stopped and drained */
        }

        ctx->fifo_head = cs->next;
        if (ctx->fifo_head == NULL) {
            ctx->fifo_tail = NULL;
        }

        if (ctx->stop) {
            /* the context is closing: what did not run is aborted */
            cs->fault = EMU_CS_FAULT_ABORT;
        }
        emu_exec_one(ctx, cs);
    }
    pthread_mutex_unlock(&ctx->lock);

    return NULL;
}

int emu_exec_submit(emu_ctx_t *ctx, emu_cs_t *cs)
{
    int ret;

    __atomic_add_fetch(&ctx->sdev->cs_queued, 1, __ATOMIC_RELAXED);

    if (emu_g.cfg.exec == GAUDI_EMU_EXEC_INLINE) {
        emu_exec_one(ctx, cs);
        return 0;
    }

    if (!ctx->worker_running) {
        ret = pthread_create(&ctx->worker, NULL, emu_exec_worker, ctx);
        if (ret != 0) {
            __atomic_sub_fetch(&ctx->sdev->cs_queued, 1, __ATOMIC_RELAXED);
            return -ret;
        }
        ctx->worker_running = 1;
    }

    cs->next = NULL;
    if (ctx->fifo_tail != NULL) {
        ctx->fifo_tail->next = cs;
    } else {
        ctx->fifo_head = cs;
    }
    ctx->fifo_tail = cs;
    pthread_cond_broadcast(&ctx->cond);
    return 0;
}

uint32_t emu_exec_status(emu_ctx_t *ctx, const emu_cs_t *cs, uint64_t now)
{
    emu_shm_dev_t *sdev = ctx->sdev;
    int reset = cs->epoch != emu_dev_epoch(sdev);

    if (cs->state == EMU_CS_QUEUED) {
        return reset ? HL_WAIT_CS_STATUS_ABORTED : HL_WAIT_CS_STATUS_BUSY;
    } else if (cs->status != HL_WAIT_CS_STATUS_COMPLETED) {
        return cs->status;
    } else if (reset && (cs->done_ns > sdev->reset_ns)) {
        /* still in flight (modelled) when the device reset */
        return HL_WAIT_CS_STATUS_ABORTED;
    } else if (now >= cs->done_ns) {
        return HL_WAIT_CS_STATUS_COMPLETED;
    }

    return HL_WAIT_CS_STATUS_BUSY;
}

void emu_exec_stop(emu_ctx_t *ctx)
{
    unsigned i;

    pthread_mutex_lock(&ctx->lock);
    ctx->stop = 1;
    pthread_cond_broadcast(&ctx->cond);
    pthread_mutex_unlock(&ctx->lock);

    if (ctx->worker_running) {
        pthread_join(ctx->worker, NULL);
        ctx->worker_running = 0;
    }

    for (i = 0; (ctx->ring != NULL) && (i < EMU_CS_WINDOW); ++i) {
        emu_exec_free_jobs(&ctx->ring[i]);
    }
}
