/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_wait.h"
#include "emu_dev.h"
#include "emu_reset.h"
#include "emu_exec.h"
#include "emu_model.h"
#include "emu_uaccess.h"

#include <string.h>
#include <time.h>

/* Re-check at least this often: a reset by another process signals no
 * condition variable of ours */
#define EMU_WAIT_POLL_NS    10000000ull

#define EMU_WAIT_UNSUPPORTED_FLAGS \
    (HL_WAIT_CS_FLAGS_INTERRUPT | HL_WAIT_CS_FLAGS_INTERRUPT_KERNEL_CQ | \
     HL_WAIT_CS_FLAGS_REGISTER_INTERRUPT)


static void emu_wait_until(emu_ctx_t *ctx, uint64_t deadline_ns)
{
    struct timespec ts;

    ts.tv_sec  = deadline_ns / 1000000000ull;
    ts.tv_nsec = deadline_ns % 1000000000ull;
    pthread_cond_timedwait(&ctx->cond, &ctx->lock, &ts);
}

/* Status of @seq, waiting up to @deadline (ctx->lock held). The waiter
 * executes what is queued up to @seq itself (emu_exec.c says why); it
 * sleeps only while the modelled time runs or another thread executes. */
static uint32_t emu_wait_seq(emu_ctx_t *ctx, uint64_t seq, uint64_t now,
                             uint64_t deadline, int *gone,
                             const emu_cs_t **cs_p)
{
    const emu_cs_t *cs;
    uint64_t wake;
    uint32_t status;

    *gone = 0;
    *cs_p = NULL;
    /* sequences start at 1: the driver finds no fence for 0, as for one
     * older than the window (hl_ctx_get_fence_locked) */
    if ((seq == 0) || (seq + ctx->cs_window < ctx->next_seq)) {
        *gone = 1;                  /* fence already released */
        return HL_WAIT_CS_STATUS_COMPLETED;
    }

    cs    = &ctx->ring[seq % ctx->cs_window];
    *cs_p = cs;
    for (;;) {
        now    = emu_exec_poll(ctx, seq, now);
        status = emu_exec_status(ctx, cs, now);
        if ((status != HL_WAIT_CS_STATUS_BUSY) || (now >= deadline)) {
            return status;
        }

        wake = emu_min(deadline, now + EMU_WAIT_POLL_NS);
        if (cs->state == EMU_CS_DONE) {
            wake = emu_min(wake, emu_model_wall_done(ctx, cs));
        }
        emu_wait_until(ctx, wake);
        now = emu_now_ns();
    }
}

static int emu_wait_errno(uint32_t status)
{
    switch (status) {
    case HL_WAIT_CS_STATUS_TIMEDOUT:
        return -ETIMEDOUT;
    case HL_WAIT_CS_STATUS_ABORTED:
        return -EIO;
    default:
        return 0;
    }
}

static uint64_t emu_wait_deadline(uint64_t timeout_us, uint64_t now)
{
    if (timeout_us > (UINT64_MAX - now) / 1000) {
        return UINT64_MAX;
    }

    return now + timeout_us * 1000;
}

static int emu_wait_single(emu_ctx_t *ctx, union hl_wait_cs_args *args)
{
    uint64_t seq      = args->in.seq;
    uint64_t now      = emu_now_ns();
    uint64_t deadline = emu_wait_deadline(args->in.timeout_us, now);
    const emu_cs_t *cs;
    uint32_t status;
    int gone, ret;

    pthread_mutex_lock(&ctx->lock);
    if (seq >= ctx->next_seq) {
        pthread_mutex_unlock(&ctx->lock);
        return -EINVAL;             /* never submitted */
    }

    status = emu_wait_seq(ctx, seq, now, deadline, &gone, &cs);

    memset(args, 0, sizeof(*args));
    args->out.status = status;
    if (gone) {
        args->out.flags |= HL_WAIT_CS_STATUS_FLAG_GONE;
    } else if ((status == HL_WAIT_CS_STATUS_COMPLETED) && cs->timestamp) {
        args->out.flags         |= HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD;
        args->out.timestamp_nsec = (int64_t)cs->done_ns;
    }
    ret = emu_wait_errno(status);
    pthread_mutex_unlock(&ctx->lock);

    return ret;
}

/* HL_WAIT_CS_FLAGS_MULTI_CS: returns once any listed CS has completed */
static int emu_wait_multi(emu_ctx_t *ctx, union hl_wait_cs_args *args)
{
    uint64_t seqs[HL_WAIT_MULTI_CS_LIST_MAX_LEN];
    uint8_t len = args->in.seq_arr_len;
    uint64_t deadline, wake;
    uint32_t status, map = 0;
    const emu_cs_t *cs;
    int gone, ret = 0;
    unsigned i;

    for (i = 0; i < sizeof(args->in.pad); ++i) {
        if (args->in.pad[i] != 0) {
            return -EINVAL;
        }
    }

    if ((len == 0) || (len > HL_WAIT_MULTI_CS_LIST_MAX_LEN)) {
        return -EINVAL;
    }

    ret = emu_copy_from_user(seqs, args->in.seq, len * sizeof(seqs[0]));
    if (ret != 0) {
        return ret;
    }

    deadline = emu_wait_deadline(args->in.timeout_us, emu_now_ns());
    pthread_mutex_lock(&ctx->lock);
    for (i = 0; i < len; ++i) {
        if (seqs[i] >= ctx->next_seq) {
            pthread_mutex_unlock(&ctx->lock);
            return -EINVAL;
        }
    }

    for (;;) {
        for (i = 0; (i < len) && (ret == 0); ++i) {
            status = emu_wait_seq(ctx, seqs[i], emu_now_ns(), 0, &gone,
                                  &cs);
            map   |= (status == HL_WAIT_CS_STATUS_COMPLETED) << i;
            ret    = emu_wait_errno(status);
        }

        wake = emu_min(deadline, emu_now_ns() + EMU_WAIT_POLL_NS / 10);
        if ((map != 0) || (ret != 0) || (emu_now_ns() >= deadline)) {
            break;
        }
        emu_wait_until(ctx, wake);
    }
    pthread_mutex_unlock(&ctx->lock);

    memset(args, 0, sizeof(*args));
    args->out.status            = (map != 0) ? HL_WAIT_CS_STATUS_COMPLETED :
                                  (ret == -ETIMEDOUT) ?
                                  HL_WAIT_CS_STATUS_TIMEDOUT :
                                  (ret == -EIO) ? HL_WAIT_CS_STATUS_ABORTED :
                                  HL_WAIT_CS_STATUS_BUSY;
    args->out.cs_completion_map = map;
    return (map != 0) ? 0 : ret;
}

int emu_wait_ioctl(emu_ctx_t *ctx, union hl_wait_cs_args *args)
{
    /* hl_wait_ioctl: no waiting at all while the device is not
     * operational, nor while a reset waits for the user to release it
     * (watchdog_active); a reset shows as EBUSY here, not as an aborted
     * CS */
    if (!emu_dev_operational(ctx->sdev) ||
        emu_reset_watchdog_active(ctx->sdev)) {
        return -EBUSY;
    }

    if (args->in.flags & EMU_WAIT_UNSUPPORTED_FLAGS) {
        return -EOPNOTSUPP;         /* interrupt waits: not emulated */
    }

    return (args->in.flags & HL_WAIT_CS_FLAGS_MULTI_CS) ?
           emu_wait_multi(ctx, args) : emu_wait_single(ctx, args);
}
