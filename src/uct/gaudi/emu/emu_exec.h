/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_EXEC_H_
#define GAUDI_EMU_EXEC_H_

#include "emu_ctx.h"

/*
 * CS execution, one CS at a time in submission order: by the thread that
 * waits for it (WAIT_CS), by the context's worker thread when nobody polls,
 * or inside the CS ioctl (inline mode); completion time from the
 * bandwidth/latency model.
 */

/* Queue (or run, in inline mode) a CS already placed in the ring. Called
 * with ctx->lock held; may drop and retake it. */
int emu_exec_submit(emu_ctx_t *ctx, emu_cs_t *cs);

/* Bytes of user CBs the engines read so far (process-wide) */
uint64_t emu_exec_cb_fetched(void);

/* A WAIT_CS for @seq at time @now: run the queued CSs up to @seq in this
 * thread unless another thread is executing; returns the time after what it
 * ran (@now if nothing), so that the caller reads the clock no more. Called
 * with ctx->lock held; may drop and retake it. */
uint64_t emu_exec_poll(emu_ctx_t *ctx, uint64_t seq, uint64_t now);

/* HL_WAIT_CS_STATUS_* of a CS at time @now (ctx->lock held) */
uint32_t emu_exec_status(emu_ctx_t *ctx, const emu_cs_t *cs, uint64_t now);

/* Stop the worker; CSs not executed yet end ABORTED */
void emu_exec_stop(emu_ctx_t *ctx);

#endif
