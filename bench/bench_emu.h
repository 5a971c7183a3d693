/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef BENCH_EMU_H_
#define BENCH_EMU_H_

/* The emulator's statistics of this process, for the bench/ programs that
 * read its model clock (docs/emulator.md §8b). UCX loads the emulator
 * RTLD_LOCAL: it is found by name among the loaded libraries. */

#include <uct/gaudi/seam/gaudi_emu.h>

#include <dlfcn.h>
#include <stdio.h>

/* 0, or -1 if the emulator is not loaded (no UCX_GAUDI_EMU_DEVICES) */
static inline int bench_emu_stats(gaudi_emu_stats_t *stats)
{
    static gaudi_emu_get_stats_func_t get_stats;
    void *handle;

    if (get_stats == NULL) {
        handle = dlopen("libgaudi_emu.so.0", RTLD_NOLOAD | RTLD_NOW);
        if (handle == NULL) {
            return -1;
        }
        get_stats = (gaudi_emu_get_stats_func_t)dlsym(handle,
                                                      GAUDI_EMU_STATS_SYMBOL);
        if (get_stats == NULL) {
            return -1;
        }
    }

    return get_stats(stats);
}

/* "<model GB/s> <wall GB/s> <average CSs in flight> <most> <CSs>" of @bytes
 * moved
 * in @wall_ns, from the statistics before (@s0) and after (@s1); 0, or -1
 * if the profile timed no CS meanwhile */
static inline int bench_emu_report(uint64_t bytes, uint64_t wall_ns,
                                   const gaudi_emu_stats_t *s0,
                                   const gaudi_emu_stats_t *s1)
{
    uint64_t model_ns = wall_ns - (s1->copy_ns - s0->copy_ns);

    if (s1->model_cs <= s0->model_cs) {
        return -1;
    }

    printf("%.3f %.3f %.2f %u %llu\n", (double)bytes / model_ns,
           (double)bytes / wall_ns,
           (double)(s1->model_depth_sum - s0->model_depth_sum) /
           (s1->model_cs - s0->model_cs), s1->model_depth_max,
           (unsigned long long)(s1->model_cs - s0->model_cs));
    return 0;
}

#endif
