/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_EXEC_H_
#define GAUDI_EMU_EXEC_H_

#include "emu_ctx.h"

/*
 * CS execution: inline or on a per-context worker thread, one CS at a time
 * in submission order; completion time from the bandwidth/latency model.
 */

/* Queue (or run, in inline mode) a CS already placed in the ring. Called
 * with ctx->lock held; may drop and retake it. */
int emu_exec_submit(emu_ctx_t *ctx, emu_cs_t *cs);

/* HL_WAIT_CS_STATUS_* of a CS at time @now (ctx->lock held) */
uint32_t emu_exec_status(emu_ctx_t *ctx, const emu_cs_t *cs, uint64_t now);

/* Stop the worker; CS not executed yet end ABORTED */
void emu_exec_stop(emu_ctx_t *ctx);

/* Notify the contexts of @dev in this process (eventfd + GET_EVENTS) */
void emu_exec_notify(int dev, uint64_t events);

#endif
