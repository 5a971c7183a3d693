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
#include "emu_model.h"
#include "emu_pkt.h"
#include "emu_reset.h"
#include "emu_va.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Who executes a CS (docs/emulator.md, "Execution"):
 *
 * - the thread that waits for it: WAIT_CS runs the queued CSs of its context
 *   up to the one it waits for, in order, before it looks at the status. A
 *   process that polls its completions therefore never waits for another
 *   thread to be scheduled: on a loaded machine (two polling processes on
 *   two cores) a separate engine thread would get a CPU only at the next
 *   scheduler tick, and every completion would measure the scheduler.
 * - the context's worker thread, for CSs that nobody polls: it takes the
 *   oldest queued CS once neither a submission nor a WAIT_CS happened on
 *   the context for GAUDI_EMU_EXEC_GRACE_NS, so data still moves (and
 *   HW_IDLE turns true) without a poller, but the worker never competes
 *   with a poller.
 *
 * Exactly one thread executes at a time (ctx->executing), always the oldest
 * queued CS, so CSs execute in submission order whoever runs them. They
 * complete in that order too, except under a speed profile (emu_model.c),
 * where CSs on different engines may complete out of order, as on hardware.
 */


/* Bytes of user CBs read by the engines, for gaudi_emu_get_stats() */
static uint64_t emu_exec_cb_fetch_bytes;

uint64_t emu_exec_cb_fetched(void)
{
    return __atomic_load_n(&emu_exec_cb_fetch_bytes, __ATOMIC_RELAXED);
}

/* Read a user CB through the device MMU into @buf, or only check that it is
 * mapped (@buf NULL) */
static int emu_exec_read_cb(emu_ctx_t *ctx, uint64_t va, size_t size,
                            uint8_t *buf)
{
    uint64_t done = 0, avail;
    uint8_t *ptr;

    while (done < size) {
        if (emu_va_translate(ctx, va + done, &ptr, &avail) != 0) {
            return -EFAULT;
        }
        avail = emu_min(avail, (uint64_t)size - done);
        if (buf != NULL) {
            memcpy(buf + done, ptr, avail);
        }
        done += avail;
    }

    if (buf != NULL) {
        __atomic_fetch_add(&emu_exec_cb_fetch_bytes, size, __ATOMIC_RELAXED);
    }
    return 0;
}

/* A user CB small enough to read on the stack (the transports' CBs are a
 * few packets) is read at once. A larger one is fetched a window at a time,
 * as the engine fetches packets: a CB's size is the user's word (up to
 * 4 GiB) and its end is often never reached (a STOP, a bad packet), so it is
 * not read whole first (seed 0x43a0388e of the ioctl fuzzer: a 4 GiB CB read
 * before its first packet failed took seconds). A window holds the largest
 * packet (WREG_BULK: 8 + 8 x 0xFFFF bytes). */
#define EMU_EXEC_CB_STACK   1024
#define EMU_EXEC_CB_WINDOW  (1024 * 1024)

/* Run @len bytes of packets; -EINVAL for a packet cut by the CB's end */
static int emu_exec_packets(emu_ctx_t *ctx, const emu_job_t *job,
                            const uint8_t *buf, size_t len,
                            emu_pkt_stats_t *stats)
{
    size_t done;
    int ret;

    ret = emu_pkt_run(ctx, job->queue, buf, len, stats, &done);
    if (ret != 0) {
        return (ret == EMU_PKT_STOPPED) ? 0 : ret;
    }
    return (done == len) ? 0 : -EINVAL;
}

static int emu_exec_job(emu_ctx_t *ctx, const emu_job_t *job,
                        emu_pkt_stats_t *stats)
{
    uint8_t stack_buf[EMU_EXEC_CB_STACK];
    size_t off, len, done;
    uint8_t *buf;
    int ret;

    if (job->copy != NULL) {
        return emu_exec_packets(ctx, job, job->copy, job->size, stats);
    }

    /* the packets are read when the CS executes, as the engine fetches
     * them: a user CB may still be written after the submission */
    if (job->size <= sizeof(stack_buf)) {
        ret = emu_exec_read_cb(ctx, job->cb_va, job->size, stack_buf);
        return (ret != 0) ? ret :
               emu_exec_packets(ctx, job, stack_buf, job->size, stats);
    }

    /* Whether the queue manager prefetches past a STOP (and faults on an
     * unmapped page there) is not documented: the harsher case is modelled,
     * the whole CB must be mapped before a packet runs */
    ret = emu_exec_read_cb(ctx, job->cb_va, job->size, NULL);
    if (ret != 0) {
        return ret;
    }

    buf = malloc(EMU_EXEC_CB_WINDOW);
    if (buf == NULL) {
        return -ENOMEM;
    }

    for (off = 0, ret = 0; (off < job->size) && (ret == 0); off += done) {
        len = emu_min((size_t)job->size - off, (size_t)EMU_EXEC_CB_WINDOW);
        ret = emu_exec_read_cb(ctx, job->cb_va + off, len, buf);
        if (ret != 0) {
            break;
        }

        ret = emu_pkt_run(ctx, job->queue, buf, len, stats, &done);
        if (ret == EMU_PKT_STOPPED) {
            ret = 0;
            break;
        } else if (ret != 0) {
            break;
        } else if (done == 0) {
            ret = -EINVAL;      /* a packet cut by the CB's end */
        }
    }

    free(buf);
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
/* Whether a DMA page fault resets the device (docs/emulator.md §11) */
static int emu_exec_page_fault_resets(void)
{
    return (emu_g.asic->asic != UCT_GAUDI_ASIC_GAUDI1) &&
           !emu_g.cfg.page_fault_cs_only;
}

/* What a job moved: @stats's growth from @before, for the speed profile */
static void emu_exec_account_job(emu_job_t *job, const emu_pkt_stats_t *before,
                                 const emu_pkt_stats_t *stats)
{
    job->bytes   = stats->bytes - before->bytes;
    job->to_dev  = stats->to_dev - before->to_dev;
    job->to_host = stats->to_host - before->to_host;
    job->through = stats->through - before->through;
}

static uint32_t emu_exec_run(emu_ctx_t *ctx, emu_cs_t *cs,
                             emu_pkt_stats_t *stats)
{
    emu_pkt_stats_t before;
    unsigned i;
    int ret;

    if ((cs->epoch != emu_dev_epoch(ctx->sdev)) ||
        emu_reset_watchdog_active(ctx->sdev)) {
        /* a reset happened meanwhile, or one waits for the release: the
         * engines are hung, nothing moves any more */
        return HL_WAIT_CS_STATUS_ABORTED;
    }

    if (cs->fault == EMU_CS_FAULT_TIMEOUT) {
        /* the engine hangs: TDR (cs_timedout), then the driver's reset */
        emu_reset_cond(ctx->dev, ctx->sdev, HL_NOTIFIER_EVENT_CS_TIMEOUT, 1);
        return HL_WAIT_CS_STATUS_TIMEDOUT;
    } else if (cs->fault == EMU_CS_FAULT_ABORT) {
        return HL_WAIT_CS_STATUS_ABORTED;
    }

    for (i = 0; i < cs->num_jobs; ++i) {
        before = *stats;
        ret    = emu_exec_job(ctx, &cs->jobs[i], stats);
        emu_exec_account_job(&cs->jobs[i], &before, stats);
        if (ret == -ETIMEDOUT) {
            /* a peer read the platform does not route: the engine waits
             * for a completion that never comes, until TDR (cs_timedout)
             * and the driver's reset */
            emu_reset_cond(ctx->dev, ctx->sdev,
                           HL_NOTIFIER_EVENT_CS_TIMEOUT, 1);
            return HL_WAIT_CS_STATUS_TIMEDOUT;
        } else if ((ret == -EFAULT) && emu_exec_page_fault_resets()) {
            /* A Gaudi2 MMU page fault is a firmware event the driver resets
             * for (gaudi2_handle_eqe -> hl_handle_page_fault ->
             * hl_device_cond_reset, hard_reset_on_fw_events=1): the engine
             * is stuck on the faulting transfer until then */
            emu_reset_cond(ctx->dev, ctx->sdev,
                           HL_NOTIFIER_EVENT_PAGE_FAULT |
                           HL_NOTIFIER_EVENT_USER_ENGINE_ERR, 0);
            return HL_WAIT_CS_STATUS_ABORTED;
        } else if (ret != 0) {
            /* an undefined opcode, or a Gaudi1 page fault (gaudi_handle_eqe
             * only reports it): the CS fails, the device goes on */
            emu_fd_notify(ctx->dev, HL_NOTIFIER_EVENT_USER_ENGINE_ERR);
            return HL_WAIT_CS_STATUS_ABORTED;
        }
    }

    return HL_WAIT_CS_STATUS_COMPLETED;
}

/* Take the oldest queued CS, execute it and publish its completion;
 * returns the time it ended. ctx->lock held on entry and exit (dropped while
 * the DMA runs); the caller checked that a CS is queued and nobody else
 * executes. */
static uint64_t emu_exec_next(emu_ctx_t *ctx)
{
    emu_shm_dev_t *sdev = ctx->sdev;
    emu_pkt_stats_t stats = {0};
    emu_cs_t *cs = ctx->fifo_head;
    uint64_t begin, end;
    uint32_t status;

    ctx->fifo_head = cs->next;
    if (ctx->fifo_head == NULL) {
        ctx->fifo_tail = NULL;
    }
    ctx->executing = 1;
    begin          = emu_now_ns();
    emu_model_copy_begin(ctx, begin);

    pthread_mutex_unlock(&ctx->lock);
    status = emu_exec_run(ctx, cs, &stats);
    end    = emu_model_slow_copy(begin);
    pthread_mutex_lock(&ctx->lock);

    /* a CS executed late (nobody polled) is not charged the model again:
     * the model counts from its submission */
    cs->done_ns       = emu_model_done(ctx, cs, begin, end);
    ctx->last_done_ns = emu_max(ctx->last_done_ns, cs->done_ns);
    cs->status        = status;
    cs->state         = EMU_CS_DONE;
    ctx->executing    = 0;
    emu_exec_free_jobs(cs);

    __atomic_store_n(&sdev->last_done_ns, ctx->last_done_ns,
                     __ATOMIC_RELAXED);
    __atomic_add_fetch(&sdev->bytes_to_dev, stats.to_dev, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sdev->bytes_to_host, stats.to_host,
                       __ATOMIC_RELAXED);
    if (__atomic_load_n(&sdev->cs_queued, __ATOMIC_RELAXED) != 0) {
        __atomic_sub_fetch(&sdev->cs_queued, 1, __ATOMIC_RELAXED);
    }

    pthread_cond_broadcast(&ctx->cond);
    return end;
}

/* Execute queued CSs up to @seq, in order, unless another thread is
 * executing (it then signals ctx->cond after each CS); returns the time
 * the last one ended, @now if none ran. ctx->lock held. */
static uint64_t emu_exec_run_until(emu_ctx_t *ctx, uint64_t seq,
                                   uint64_t now)
{
    while (!ctx->executing && (ctx->fifo_head != NULL) &&
           (ctx->fifo_head->seq <= seq)) {
        now = emu_exec_next(ctx);
    }

    return now;
}

uint64_t emu_exec_poll(emu_ctx_t *ctx, uint64_t seq, uint64_t now)
{
    ctx->active_ns = now;
    return emu_exec_run_until(ctx, seq, now);
}

static void emu_exec_timedwait(pthread_cond_t *cond, pthread_mutex_t *lock,
                               uint64_t deadline_ns)
{
    struct timespec ts;

    ts.tv_sec  = deadline_ns / 1000000000ull;
    ts.tv_nsec = deadline_ns % 1000000000ull;
    pthread_cond_timedwait(cond, lock, &ts);
}

/* Executes what nobody polls: sleeps while the queue is empty, and leaves
 * a queued CS to the pollers for GAUDI_EMU_EXEC_GRACE_NS after the
 * context's last activity */
static void *emu_exec_worker(void *arg)
{
    emu_ctx_t *ctx = arg;
    uint64_t due;

    pthread_mutex_lock(&ctx->lock);
    while (!ctx->stop) {
        if (ctx->fifo_head == NULL) {
            ctx->worker_idle = 1;
            pthread_cond_wait(&ctx->worker_cond, &ctx->lock);
            ctx->worker_idle = 0;
            continue;
        }

        due = ctx->active_ns + GAUDI_EMU_EXEC_GRACE_NS;
        if (ctx->executing || (emu_now_ns() < due)) {
            emu_exec_timedwait(&ctx->worker_cond, &ctx->lock,
                               ctx->executing ?
                               emu_now_ns() + GAUDI_EMU_EXEC_GRACE_NS : due);
            continue;
        }

        emu_exec_next(ctx);
    }
    pthread_mutex_unlock(&ctx->lock);

    return NULL;
}

static int emu_exec_start_worker(emu_ctx_t *ctx)
{
    pthread_condattr_t attr;
    int ret;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ctx->worker_cond, &attr);
    pthread_condattr_destroy(&attr);

    ret = pthread_create(&ctx->worker, NULL, emu_exec_worker, ctx);
    if (ret != 0) {
        pthread_cond_destroy(&ctx->worker_cond);
        return -ret;
    }

    ctx->worker_running = 1;
    return 0;
}

int emu_exec_submit(emu_ctx_t *ctx, emu_cs_t *cs)
{
    int ret;

    if ((emu_g.cfg.exec == GAUDI_EMU_EXEC_THREAD) && !ctx->worker_running) {
        ret = emu_exec_start_worker(ctx);
        if (ret != 0) {
            return ret;
        }
    }

    __atomic_add_fetch(&ctx->sdev->cs_queued, 1, __ATOMIC_RELAXED);
    emu_model_submit(ctx, cs, emu_now_ns());
    ctx->active_ns = cs->submit_ns;
    cs->next       = NULL;
    if (ctx->fifo_tail != NULL) {
        ctx->fifo_tail->next = cs;
    } else {
        ctx->fifo_head = cs;
    }
    ctx->fifo_tail = cs;

    if (emu_g.cfg.exec == GAUDI_EMU_EXEC_INLINE) {
        /* done before the ioctl returns (after a CS another thread is
         * executing, if any) */
        while (cs->state == EMU_CS_QUEUED) {
            if (ctx->executing) {
                pthread_cond_wait(&ctx->cond, &ctx->lock);
            } else {
                emu_exec_run_until(ctx, cs->seq, cs->submit_ns);
            }
        }
    } else if (ctx->worker_idle) {
        /* start the worker's grace period (a sleeping worker only) */
        pthread_cond_signal(&ctx->worker_cond);
    }

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
    } else if (reset && !emu_model_complete(ctx, cs, sdev->reset_ns)) {
        /* still in flight (modelled) when the device reset; with a speed
         * profile the model clock at the reset is read with the copy time
         * counted since, which takes the reset as earlier: the harsher */
        return HL_WAIT_CS_STATUS_ABORTED;
    } else if (emu_model_complete(ctx, cs, now)) {
        return HL_WAIT_CS_STATUS_COMPLETED;
    }

    return HL_WAIT_CS_STATUS_BUSY;
}

void emu_exec_stop(emu_ctx_t *ctx)
{
    unsigned i;

    pthread_mutex_lock(&ctx->lock);
    ctx->stop = 1;
    if (ctx->worker_running) {
        pthread_cond_signal(&ctx->worker_cond);
    }
    pthread_mutex_unlock(&ctx->lock);

    if (ctx->worker_running) {
        pthread_join(ctx->worker, NULL);
        pthread_cond_destroy(&ctx->worker_cond);
        ctx->worker_running = 0;
    }

    /* the context is closing (no call uses it): what did not run is
     * aborted */
    pthread_mutex_lock(&ctx->lock);
    while (ctx->fifo_head != NULL) {
        ctx->fifo_head->fault = EMU_CS_FAULT_ABORT;
        emu_exec_next(ctx);
    }
    pthread_mutex_unlock(&ctx->lock);

    for (i = 0; (ctx->ring != NULL) && (i < ctx->cs_window); ++i) {
        emu_exec_free_jobs(&ctx->ring[i]);
    }
}
