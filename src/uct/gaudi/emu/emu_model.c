/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_model.h"
#include "emu_global.h"

/*
 * The Gaudi2 profile's numbers and where they come from (docs/emulator.md
 * §8b says the same for users):
 *
 * - link: a Gaudi2's host interface is one PCIe Gen4 x16 link (published);
 *   16 GT/s x 16 lanes x 128/130 is 31.5 GB/s per direction before packet
 *   overhead; DMA over such a link moves about 25 GB/s (an assumption from
 *   what Gen4 x16 devices measure, not a Gaudi2 figure). Both PDMA engines
 *   share it; a peer's HBM (gaudi_ipc) is reached over it too.
 * - HBM: 2.45 TB/s (published, HBM2E); a copy within it reads and writes,
 *   so it moves half of that. That one EDMA engine can use all of it is an
 *   assumption (the harsher case for our protocol choice would be slower).
 * - latency, submission to start: not published; EMU_PROFILE_LATENCY.
 * - gap between two CSs on one engine (fetching the next CB, the completion
 *   write): not published; 1 us assumed.
 */
#define EMU_MODEL_GAUDI2_LINK_BW  25e9
#define EMU_MODEL_GAUDI2_HBM_BW   (2.45e12 / 2)
#define EMU_MODEL_GAUDI2_GAP      1e-6


int emu_model_profile(emu_model_params_t *params)
{
    if (emu_g.cfg.profile != GAUDI_EMU_PROFILE_GAUDI2) {
        return 0;
    }

    if (params != NULL) {
        params->link_bw = EMU_MODEL_GAUDI2_LINK_BW;
        params->hbm_bw  = EMU_MODEL_GAUDI2_HBM_BW;
        params->latency = emu_g.cfg.profile_latency;
        params->gap     = EMU_MODEL_GAUDI2_GAP;
    }
    return 1;
}

/* The model clock at wall time @now: it stands still while a copy runs */
static uint64_t emu_model_clock(const emu_ctx_t *ctx, uint64_t now)
{
    const emu_model_t *model = &ctx->model;

    if (model->copy_begin_ns != 0) {
        now = model->copy_begin_ns;
    }
    return now - model->copy_ns;
}

/* CSs of @ctx still in flight at @now (wall) */
static unsigned emu_model_in_flight(const emu_ctx_t *ctx, uint64_t now)
{
    const emu_cs_t *cs;
    unsigned i, count = 0;

    for (i = 0; i < ctx->cs_window; ++i) {
        cs = &ctx->ring[i];
        if ((cs->state == EMU_CS_QUEUED) ||
            ((cs->state == EMU_CS_DONE) && !emu_model_complete(ctx, cs, now))) {
            ++count;
        }
    }
    return count;
}

void emu_model_submit(emu_ctx_t *ctx, emu_cs_t *cs, uint64_t now)
{
    emu_model_t *model = &ctx->model;
    unsigned depth;

    cs->submit_ns = now;
    if (!emu_model_profile(NULL)) {
        return;
    }

    cs->model_submit_ns = emu_model_clock(ctx, now);
    /* @cs is in the ring already, queued */
    depth = emu_model_in_flight(ctx, now);
    model->depth_sum += depth;
    model->depth_max  = emu_max(model->depth_max, depth);
    ++model->cs_count;
}

void emu_model_copy_begin(emu_ctx_t *ctx, uint64_t now)
{
    if (emu_model_profile(NULL)) {
        ctx->model.copy_begin_ns = now;
    }
}

uint64_t emu_model_slow_copy(uint64_t begin)
{
    uint64_t end = emu_now_ns();
    uint64_t until;

    if (emu_g.cfg.copy_slowdown <= 1) {
        return end;
    }

    until = begin + (end - begin) * emu_g.cfg.copy_slowdown;
    while (end < until) {
        end = emu_now_ns();
    }
    return end;
}

/* The serial model of EMU_BW/EMU_LATENCY: a CS starts when it was submitted
 * and the one before it is done, and takes its latency plus its bytes at
 * the bandwidth; the emulator's copy overlaps that */
static uint64_t emu_model_serial(emu_ctx_t *ctx, emu_cs_t *cs, uint64_t end)
{
    double ns = emu_g.cfg.latency * 1e9;
    uint64_t bytes = 0, start;
    unsigned i;

    for (i = 0; i < cs->num_jobs; ++i) {
        bytes += cs->jobs[i].bytes;
    }
    if (emu_g.cfg.bandwidth > 0) {
        ns += (double)bytes * 1e9 / emu_g.cfg.bandwidth;
    }

    start             = emu_max(cs->submit_ns, ctx->last_done_ns);
    ctx->last_done_ns = emu_max(start + (uint64_t)ns, end);
    return ctx->last_done_ns;
}

/* @bytes over a resource free from *@free_ns at @bw, from @t at the
 * earliest: when they are through */
static uint64_t emu_model_transfer(uint64_t t, uint64_t *free_ns,
                                   uint64_t bytes, double bw)
{
    if (bytes == 0) {
        return t;
    }

    t        = emu_max(t, *free_ns) + (uint64_t)((double)bytes * 1e9 / bw);
    *free_ns = t;
    return t;
}

/* @bytes read from the host and written back to it (or to a peer): over
 * both directions of the link at once, after what is on either */
static uint64_t emu_model_through(uint64_t t, uint64_t *link_free_ns,
                                  uint64_t bytes, double bw)
{
    if (bytes == 0) {
        return t;
    }

    t               = emu_max(t, emu_max(link_free_ns[0], link_free_ns[1])) +
                      (uint64_t)((double)bytes * 1e9 / bw);
    link_free_ns[0] = t;
    link_free_ns[1] = t;
    return t;
}

/* The profile: each job on its queue's engine, after the submission
 * latency (which overlaps what the engine still does) and the engine's gap
 * after its previous job; its PCIe bytes over the link of their direction,
 * the rest through the HBM; the CS is done when its last job is */
static uint64_t emu_model_profiled(emu_ctx_t *ctx, emu_cs_t *cs,
                                   const emu_model_params_t *p)
{
    emu_model_t *model = &ctx->model;
    uint64_t ready = cs->model_submit_ns + (uint64_t)(p->latency * 1e9);
    uint64_t gap   = (uint64_t)(p->gap * 1e9);
    uint64_t done  = ready, t, *engine;
    const emu_job_t *job;
    unsigned i;

    for (i = 0; i < cs->num_jobs; ++i) {
        job    = &cs->jobs[i];
        engine = &model->engine_free_ns[(job->queue / 4) % EMU_MODEL_ENGINES];
        t      = emu_max(ready, *engine + gap);
        t      = emu_model_transfer(t, &model->link_free_ns[0], job->to_dev,
                                    p->link_bw);
        t      = emu_model_transfer(t, &model->link_free_ns[1], job->to_host,
                                    p->link_bw);
        t      = emu_model_through(t, model->link_free_ns, job->through,
                                   p->link_bw);
        t      = emu_model_transfer(t, &model->hbm_free_ns,
                                    job->bytes - job->to_dev - job->to_host -
                                    job->through, p->hbm_bw);
        *engine = t;
        done    = emu_max(done, t);
    }

    return done;
}

uint64_t emu_model_done(emu_ctx_t *ctx, emu_cs_t *cs, uint64_t begin,
                        uint64_t end)
{
    emu_model_t *model = &ctx->model;
    emu_model_params_t params;
    uint64_t done;

    if (!emu_model_profile(&params)) {
        return emu_model_serial(ctx, cs, end);
    }

    model->copy_ns      += end - begin;
    model->copy_begin_ns = 0;
    cs->model_done_ns    = emu_model_profiled(ctx, cs, &params);
    /* on the wall clock as it reads now that the copy is over (a CS run
     * late, after its model time, is complete at once) */
    done = cs->model_done_ns + model->copy_ns;
    return emu_max(done, end);
}

uint64_t emu_model_wall_done(const emu_ctx_t *ctx, const emu_cs_t *cs)
{
    if (!emu_model_profile(NULL)) {
        return cs->done_ns;
    } else if (ctx->model.copy_begin_ns != 0) {
        /* the model clock stands still while a copy runs: not before its
         * end, which wakes the waiters (ctx->cond) */
        return UINT64_MAX;
    }

    /* copies since its execution moved it later on the wall clock */
    return emu_max(cs->done_ns, cs->model_done_ns + ctx->model.copy_ns);
}

int emu_model_complete(const emu_ctx_t *ctx, const emu_cs_t *cs,
                       uint64_t now)
{
    if (!emu_model_profile(NULL)) {
        return now >= cs->done_ns;
    }

    return emu_model_clock(ctx, now) >= cs->model_done_ns;
}
