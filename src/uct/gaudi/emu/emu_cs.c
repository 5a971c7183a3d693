/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_cs.h"
#include "emu_asic.h"
#include "emu_cb.h"
#include "emu_dev.h"
#include "emu_exec.h"
#include "emu_model.h"
#include "emu_fault.h"
#include "emu_global.h"
#include "emu_pkt.h"
#include "emu_uaccess.h"
#include "emu_va.h"

#include <stdlib.h>
#include <string.h>

#define EMU_CS_MIN_CB_SIZE  8

/* CS types the emulator does not implement (sync objects, engine cores) */
#define EMU_CS_TYPE_MASK \
    (HL_CS_FLAGS_SIGNAL | HL_CS_FLAGS_WAIT | HL_CS_FLAGS_COLLECTIVE_WAIT | \
     HL_CS_FLAGS_RESERVE_SIGNALS_ONLY | HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY | \
     HL_CS_FLAGS_ENGINE_CORE_COMMAND)


static int emu_cs_check_in(const struct hl_cs_in *in)
{
    uint32_t type = in->cs_flags & EMU_CS_TYPE_MASK;
    unsigned i;

    for (i = 0; i < sizeof(in->pad); ++i) {
        if (in->pad[i] != 0) {
            return -EINVAL;
        }
    }

    if (!emu_is_pow2(type) && (type != 0)) {
        return -EINVAL;             /* mutually exclusive types */
    } else if (type != 0) {
        return -EINVAL;             /* sync-object CS: not emulated */
    } else if (in->cs_flags & HL_CS_FLAGS_STAGED_SUBMISSION) {
        return -EPERM;              /* staged submission not supported */
    } else if (in->cs_flags & HL_CS_FLAGS_ENCAP_SIGNALS) {
        return -EINVAL;
    }

    if ((in->num_chunks_execute == 0) ||
        (in->num_chunks_execute > HL_MAX_JOBS_PER_CS) ||
        (in->num_chunks_restore > HL_MAX_JOBS_PER_CS)) {
        return -EINVAL;
    }

    return 0;
}

/* Validate a chunk and turn it into a job (kernel CBs copied and parsed) */
static int emu_cs_job_init(emu_ctx_t *ctx, const struct hl_cs_chunk *chunk,
                           emu_job_t *job, int *external)
{
    int user_flag = chunk->cs_chunk_flags & HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;
    int ret;

    job->queue = chunk->queue_index;
    job->size  = chunk->cb_size;

    switch (emu_asic_queue_type(emu_g.asic, chunk->queue_index)) {
    case EMU_QUEUE_EXT_KERNEL:
        ret = emu_cb_copy(ctx, chunk->cb_handle, chunk->cb_size, &job->copy);
        if (ret == 0) {
            ret = emu_pkt_validate_gaudi1(job->copy, job->size);
        }
        *external = 1;
        return ret;
    case EMU_QUEUE_HW_USER:
        if (!user_flag) {
            return -EINVAL;         /* user CBs only, and say so */
        }
        /* fall through */
    case EMU_QUEUE_INT_USER:
        if (chunk->cb_size < EMU_CS_MIN_CB_SIZE) {
            return -EINVAL;
        }
        if (!emu_va_in_device_range(chunk->cb_handle) ||
            !emu_va_in_device_range(chunk->cb_handle + chunk->cb_size - 1)) {
            return -EFAULT;
        }
        job->cb_va = chunk->cb_handle;
        return 0;
    default:
        return -EINVAL;             /* CPU queue, bad or unmodelled queue */
    }
}

static void emu_cs_free_jobs(emu_job_t *jobs, unsigned count)
{
    unsigned i;

    for (i = 0; i < count; ++i) {
        free(jobs[i].copy);
    }
    free(jobs);
}

/* Copy the chunk arrays and build the job list */
static int emu_cs_build_jobs(emu_ctx_t *ctx, const struct hl_cs_in *in,
                             emu_job_t **jobs_p, unsigned *count_p)
{
    int restore = !ctx->restored || (in->cs_flags & HL_CS_FLAGS_FORCE_RESTORE);
    unsigned nr = restore ? in->num_chunks_restore : 0;
    unsigned n = nr + in->num_chunks_execute;
    struct hl_cs_chunk *chunks;
    int external = 0;
    emu_job_t *jobs;
    unsigned i;
    int ret;

    chunks = calloc(n, sizeof(*chunks));
    jobs   = calloc(n, sizeof(*jobs));
    if ((chunks == NULL) || (jobs == NULL)) {
        ret = -ENOMEM;
        goto out;
    }

    ret = emu_copy_from_user(chunks, in->chunks_restore,
                             nr * sizeof(*chunks));
    if (ret == 0) {
        ret = emu_copy_from_user(chunks + nr, in->chunks_execute,
                                 in->num_chunks_execute * sizeof(*chunks));
    }

    for (i = 0; (ret == 0) && (i < n); ++i) {
        ret = emu_cs_job_init(ctx, &chunks[i], &jobs[i], &external);
    }

    /* Gaudi1 tracks completion only through external queues */
    if ((ret == 0) && (emu_g.asic->asic == UCT_GAUDI_ASIC_GAUDI1) &&
        !external) {
        ret = -EINVAL;
    }

out:
    free(chunks);
    if (ret != 0) {
        emu_cs_free_jobs(jobs, n);
        return ret;
    }

    *jobs_p  = jobs;
    *count_p = n;
    return 0;
}

/* Is the modelled queue full? (ctx->lock held) */
static int emu_cs_queue_full(emu_ctx_t *ctx)
{
    uint64_t seq = ctx->next_seq;
    emu_cs_t *old;

    if (seq <= ctx->cs_window) {
        return 0;
    }

    /* the slot this CS takes, as the driver's cs_pending[] */
    old = &ctx->ring[seq % ctx->cs_window];
    if (old->state == EMU_CS_QUEUED) {
        /* still in the FIFO or being executed (ctx->lock dropped), even
         * if a reset already decided its status: the slot is not free */
        return 1;
    }

    if ((old->state == EMU_CS_DONE) &&
        emu_model_complete(ctx, old, ctx->active_ns)) {
        return 0;   /* done before the last call: no clock read needed */
    }

    return emu_exec_status(ctx, old, emu_now_ns()) == HL_WAIT_CS_STATUS_BUSY;
}

static int emu_cs_enqueue(emu_ctx_t *ctx, const struct hl_cs_in *in,
                          emu_job_t *jobs, unsigned count, uint64_t *seq_p)
{
    emu_cs_t *cs;
    int ret;

    pthread_mutex_lock(&ctx->lock);
    if (!emu_dev_operational(ctx->sdev)) {
        /* a reset since the ioctl's first check: the queued CSs it aborts
         * are being drained, nothing new joins them */
        pthread_mutex_unlock(&ctx->lock);
        emu_ctx_drop(ctx, EMU_DROP_DEVICE_IN_RESET);
        return -EBUSY;
    }

    if (emu_cs_queue_full(ctx)) {
        pthread_mutex_unlock(&ctx->lock);
        emu_ctx_drop(ctx, EMU_DROP_MAX_CS_IN_FLIGHT);
        return -EAGAIN;
    }

    cs = &ctx->ring[ctx->next_seq % ctx->cs_window];
    memset(cs, 0, sizeof(*cs));
    cs->seq       = ctx->next_seq;
    cs->state     = EMU_CS_QUEUED;
    cs->timestamp = !!(in->cs_flags & HL_CS_FLAGS_TIMESTAMP);
    cs->epoch     = emu_dev_epoch(ctx->sdev);
    cs->jobs      = jobs;
    cs->num_jobs  = count;
    cs->fault     = emu_fault_cs();
    *seq_p        = ctx->next_seq++;
    ctx->restored = 1;

    /* inline execution drops the lock: the sequence number is taken */
    ret = emu_exec_submit(ctx, cs);
    if (ret != 0) {
        cs->jobs     = NULL;
        cs->num_jobs = 0;
        cs->status   = HL_WAIT_CS_STATUS_ABORTED;
        cs->state    = EMU_CS_DONE;
    }
    pthread_mutex_unlock(&ctx->lock);

    return ret;
}

int emu_cs_ioctl(emu_ctx_t *ctx, union hl_cs_args *args)
{
    struct hl_cs_in in = args->in;
    emu_job_t *jobs;
    unsigned count;
    uint64_t seq;
    int ret;

    if (!emu_dev_operational(ctx->sdev)) {
        emu_ctx_drop(ctx, EMU_DROP_DEVICE_IN_RESET);
        return -EBUSY;
    }

    if (!emu_g.asic->cs_supported) {
        return -EINVAL;             /* Gaudi3: no public queues */
    }

    ret = emu_cs_check_in(&in);
    if (ret == 0) {
        ret = emu_cs_build_jobs(ctx, &in, &jobs, &count);
    }

    if (ret != 0) {
        emu_ctx_drop(ctx, ((ret == -EPERM) || (ret == -EINVAL)) ?
                          EMU_DROP_VALIDATION : EMU_DROP_OUT_OF_MEM);
        return ret;
    }

    ret = emu_cs_enqueue(ctx, &in, jobs, count, &seq);
    if (ret != 0) {
        emu_cs_free_jobs(jobs, count);
        return ret;
    }

    memset(args, 0, sizeof(*args));
    args->out.seq    = seq;
    args->out.status = HL_CS_STATUS_SUCCESS;
    return 0;
}
