/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_MODEL_H_
#define GAUDI_EMU_MODEL_H_

#include "emu_ctx.h"

/*
 * When a CS completes (docs/emulator.md §8b). Without a speed profile: when
 * the copy ended, or later by the serial EMU_BW/EMU_LATENCY model. With one:
 * on a model clock that stands still while the emulator copies (the copy of
 * a DMA engine costs no CPU), each job on its engine, the PCIe link per
 * direction and the HBM shared, the submission latency overlapping what is
 * already queued. Every function is called with ctx->lock held.
 */

/* The numbers of the profile in force (for the docs and the tests) */
typedef struct emu_model_params {
    double link_bw;     /* bytes/s per PCIe direction */
    double hbm_bw;      /* bytes/s of a copy within the HBM */
    double latency;     /* seconds, submission to start */
    double gap;         /* seconds an engine takes between two CSs */
} emu_model_params_t;

/* Whether a speed profile is on; its parameters in @params (if not NULL) */
int emu_model_profile(emu_model_params_t *params);

/* A CS enters the queue at wall time @now */
void emu_model_submit(emu_ctx_t *ctx, emu_cs_t *cs, uint64_t now);

/* A thread starts executing a CS at wall time @now (the lock is then
 * dropped while it copies) */
void emu_model_copy_begin(emu_ctx_t *ctx, uint64_t now);

/* The copy of @cs ran from @begin to @end (wall; the slowdown of the test
 * knob included): the wall time at which @cs completes if no other copy
 * runs meanwhile (sets its model_done_ns) */
uint64_t emu_model_done(emu_ctx_t *ctx, emu_cs_t *cs, uint64_t begin,
                        uint64_t end);

/* Is @cs, executed, complete at wall time @now? With a profile, on the
 * model clock: copies run since its execution do not bring it forward */
int emu_model_complete(const emu_ctx_t *ctx, const emu_cs_t *cs,
                       uint64_t now);

/* The wall time at which @cs, executed, completes if no copy runs until
 * then (a waiter's wake-up; the model clock decides, emu_model_complete);
 * UINT64_MAX while a copy runs under a profile (its end wakes waiters) */
uint64_t emu_model_wall_done(const emu_ctx_t *ctx, const emu_cs_t *cs);

/* The test knob EMU_COPY_SLOWDOWN: stretch a copy that began at @begin,
 * busy; returns the time it ends (no lock held) */
uint64_t emu_model_slow_copy(uint64_t begin);

#endif
