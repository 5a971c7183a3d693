/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_dmabuf.h"
#include "emu_exec.h"
#include "emu_fault.h"
#include "emu_fd.h"
#include "emu_log.h"
#include "emu_mem.h"
#include <uct/gaudi/seam/gaudi_emu.h>

/* Accounting for leak checks (gaudi_emu_get_stats in gaudi_emu.h) */

static void emu_stats_add_ctx(emu_ctx_t *ctx, void *arg)
{
    gaudi_emu_stats_t *stats = arg;
    const emu_map_t *map;
    size_t i;

    ++stats->contexts;
    pthread_mutex_lock(&ctx->lock);
    for (i = 0; i < ctx->va.count; ++i) {
        map = &ctx->va.maps[i];
        if (map->type == EMU_MAP_DRAM) {
            ++stats->dram_maps;
        } else if (map->type == EMU_MAP_CB) {
            ++stats->cb_maps;
        } else if (map->import_fd >= 0) {
            ++stats->import_maps;
        } else {
            ++stats->host_maps;
            stats->pinned_bytes += map->size;
        }
    }
    stats->exports += emu_dmabuf_count_alive(ctx);
    stats->copy_ns         += ctx->model.copy_ns;
    stats->model_cs        += ctx->model.cs_count;
    stats->model_depth_sum += ctx->model.depth_sum;
    stats->model_depth_max  = emu_max(stats->model_depth_max,
                                      ctx->model.depth_max);
    pthread_mutex_unlock(&ctx->lock);
}

EMU_EXPORT int gaudi_emu_get_stats(gaudi_emu_stats_t *stats)
{
    memset(stats, 0, sizeof(*stats));
    emu_fd_foreach(-1, emu_stats_add_ctx, stats);
    stats->kernel_log_errors = emu_log_kernel_errors();
    stats->faults_fired      = emu_fault_fired_count();
    stats->cb_fetch_bytes    = emu_exec_cb_fetched();
    return 0;
}
