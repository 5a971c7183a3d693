/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_info.h"
#include "emu_dev.h"
#include "emu_global.h"
#include "emu_sysfs.h"
#include "emu_uaccess.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* hl_info_hw_ip_info grew from 256 (6.1) to 304 bytes (accel headers) */
#define EMU_HW_IP_INFO_SIZE_NEW  304

typedef struct {
    struct hl_info_hw_ip_info info;
    uint8_t                   ext[EMU_HW_IP_INFO_SIZE_NEW -
                                  sizeof(struct hl_info_hw_ip_info)];
} emu_hw_ip_info_t;


static int emu_info_copy(const struct hl_info_args *args, const void *data,
                         size_t size)
{
    return emu_copy_to_user(args->return_pointer, data,
                            emu_min(size, (size_t)args->return_size));
}

static int emu_info_hw_ip(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    const emu_asic_t *asic = emu_g.asic;
    emu_hw_ip_info_t hw;
    size_t size;

    memset(&hw, 0, sizeof(hw));
    hw.info.sram_base_address   = asic->sram_base;
    hw.info.dram_base_address   = asic->dram_base;
    hw.info.dram_size           = emu_g.dram_size;
    hw.info.sram_size           = asic->sram_size;
    hw.info.num_of_events       = asic->num_events;
    hw.info.device_id           = asic->device_id;
    hw.info.module_id           = emu_sys_module_id(ctx->dev);
    hw.info.server_type         = asic->server_type;
    hw.info.tpc_enabled_mask    = asic->tpc_mask;
    hw.info.tpc_enabled_mask_ext = asic->tpc_mask_ext;
    hw.info.dram_enabled        = emu_g.dram_size > EMU_HOST_PAGE;
    hw.info.dram_page_size      = asic->dram_page_size;
    hw.info.edma_enabled_mask   = asic->edma_mask;
    hw.info.device_mem_alloc_default_page_size = asic->alloc_page_size;
    snprintf((char*)hw.info.cpucp_version, sizeof(hw.info.cpucp_version),
             "gaudi-emu cpucp 1.0");
    snprintf((char*)hw.info.card_name, sizeof(hw.info.card_name), "%s",
             asic->card_name);

    size = emu_abi()->hw_ip_short ? sizeof(hw.info) : sizeof(hw);
    return emu_info_copy(args, &hw, size);
}

static int emu_info_dram_usage(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    struct hl_info_dram_usage usage;
    uint64_t used = __atomic_load_n(&ctx->sdev->dram_used, __ATOMIC_RELAXED);

    usage.dram_free_mem = emu_g.dram_size - emu_min(used, emu_g.dram_size);
    usage.ctx_dram_mem  = ctx->compute ? ctx->dram_mem : 0;
    return emu_info_copy(args, &usage, sizeof(usage));
}

static int emu_info_hw_idle(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    emu_shm_dev_t *sdev = ctx->sdev;
    struct hl_info_hw_idle idle;
    int busy;

    busy = (__atomic_load_n(&sdev->cs_queued, __ATOMIC_RELAXED) != 0) ||
           (emu_now_ns() < __atomic_load_n(&sdev->last_done_ns,
                                           __ATOMIC_RELAXED));

    memset(&idle, 0, sizeof(idle));
    idle.is_idle           = !busy;
    idle.busy_engines_mask = busy ? 1 : 0;   /* the first DMA engine */
    return emu_info_copy(args, &idle, sizeof(idle));
}

static int emu_info_time_sync(const struct hl_info_args *args)
{
    struct hl_info_time_sync ts;
    struct timespec raw;

    clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
    ts.device_time = emu_now_ns();
    ts.host_time   = (uint64_t)raw.tv_sec * 1000000000ull + raw.tv_nsec;
    return emu_info_copy(args, &ts, sizeof(ts));
}

static int emu_info_cs_counters(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    uint64_t counters[2 * EMU_DROP_LAST];
    unsigned i;

    for (i = 0; i < EMU_DROP_LAST; ++i) {
        counters[2 * i]     = __atomic_load_n(&ctx->sdev->cs_drops[i],
                                              __ATOMIC_RELAXED);
        counters[2 * i + 1] = ctx->drops[i];
    }

    return emu_info_copy(args, counters, sizeof(counters));
}

static int emu_info_pci_counters(emu_ctx_t *ctx,
                                 const struct hl_info_args *args)
{
    emu_shm_dev_t *sdev = ctx->sdev;
    struct hl_info_pci_counters pci = {0};
    uint64_t ms;

    ms = (emu_now_ns() - sdev->open_ns) / 1000000ull;
    if ((sdev->owner_ctx != 0) && (ms != 0)) {
        /* average since the owner opened the device, in KB/s */
        pci.rx_throughput = sdev->bytes_to_dev / ms * 1000 / 1024;
        pci.tx_throughput = sdev->bytes_to_host / ms * 1000 / 1024;
    }

    return emu_info_copy(args, &pci, sizeof(pci));
}

static int emu_info_open_stats(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    emu_shm_dev_t *sdev = ctx->sdev;
    struct hl_open_stats_info stats;

    memset(&stats, 0, sizeof(stats));
    emu_state_lock(sdev);
    stats.open_counter          = sdev->open_counter;
    stats.last_open_period_ms   = sdev->last_open_period_ms;
    stats.is_compute_ctx_active = sdev->owner_ctx != 0;
    emu_state_unlock(sdev);

    return emu_info_copy(args, &stats, sizeof(stats));
}

/* Whether @fd is an eventfd: anything else is refused, as the driver's
 * eventfd_ctx_fdget() does (EBADF, or EINVAL for another kind of file).
 * The notifier writes 8 bytes to it under the context lock: to a pipe or a
 * socket nobody reads, that write would block every later call of the
 * context once the buffer is full, and a regular file would be scribbled
 * on. */
static int emu_info_check_eventfd(int fd)
{
    char link[64], target[64];
    struct stat st;
    ssize_t n;

    if ((fd < 0) || (fstat(fd, &st) != 0)) {
        return -EBADF;
    }

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof(target) - 1);
    if (n < 0) {
        return -EBADF;
    }

    target[n] = '\0';
    return strcmp(target, "anon_inode:[eventfd]") ? -EINVAL : 0;
}

static int emu_info_eventfd(emu_ctx_t *ctx, const struct hl_info_args *args,
                            int reg)
{
    int ret = 0;
    int fd;

    if (!ctx->compute) {
        return -EOPNOTSUPP;
    }

    if (reg) {
        ret = emu_info_check_eventfd((int)args->eventfd);
        if (ret != 0) {
            return ret;
        }
    }

    pthread_mutex_lock(&ctx->lock);
    if (reg && (ctx->eventfd >= 0)) {
        ret = -EINVAL;
    } else if (reg) {
        fd = fcntl((int)args->eventfd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            ret = -EBADF;
        } else {
            ctx->eventfd = fd;
        }
    } else if (ctx->eventfd < 0) {
        ret = -EINVAL;
    } else {
        close(ctx->eventfd);
        ctx->eventfd = -1;
    }

    /* whether a reset may wait for this owner to release the device
     * (hl_device_cond_reset looks at the compute context's eventfd) */
    __atomic_store_n(&ctx->sdev->owner_eventfd, ctx->eventfd >= 0,
                     __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ctx->lock);

    return ret;
}

static int emu_info_get_events(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    uint64_t events;

    if (!ctx->compute) {
        return -EOPNOTSUPP;
    }

    pthread_mutex_lock(&ctx->lock);
    events      = ctx->events;
    ctx->events = 0;
    pthread_mutex_unlock(&ctx->lock);

    return emu_info_copy(args, &events, sizeof(events));
}

static int emu_info_hw_events(const struct hl_info_args *args)
{
    static const uint32_t zeros[1024];

    return emu_info_copy(args, zeros,
                         emu_min(sizeof(zeros),
                                 emu_g.asic->num_events * sizeof(uint32_t)));
}

static int emu_info_value(const struct hl_info_args *args, uint64_t a,
                          uint64_t b, size_t elem)
{
    uint64_t v64[2] = {a, b};
    uint32_t v32[2] = {(uint32_t)a, (uint32_t)b};

    return (elem == sizeof(uint64_t)) ? emu_info_copy(args, v64, sizeof(v64)) :
                                        emu_info_copy(args, v32, sizeof(v32));
}

/* Ops that work while the device is not operational ([OOT] ioctl.c) */
static int emu_info_any_state(emu_ctx_t *ctx, const struct hl_info_args *args)
{
    struct hl_info_clk_throttle throttle = {0};
    struct hl_info_sync_manager sm = {0};

    switch (args->op) {
    case HL_INFO_HW_IP_INFO:
        return emu_info_hw_ip(ctx, args);
    case HL_INFO_DEVICE_STATUS:
        return emu_info_value(args, emu_dev_status(ctx->sdev), 0,
                              sizeof(uint32_t));
    case HL_INFO_RESET_COUNT:
        return emu_info_value(args, ctx->sdev->hard_reset_cnt,
                              ctx->sdev->soft_reset_cnt, sizeof(uint32_t));
    case HL_INFO_HW_EVENTS:
    case HL_INFO_HW_EVENTS_AGGREGATE:
        return emu_info_hw_events(args);
    case HL_INFO_CS_COUNTERS:
        return emu_info_cs_counters(ctx, args);
    case HL_INFO_CLK_THROTTLE_REASON:
        return emu_info_copy(args, &throttle, sizeof(throttle));
    case HL_INFO_SYNC_MANAGER:
        return emu_info_copy(args, &sm, sizeof(sm));
    case HL_INFO_OPEN_STATS:
        return emu_info_open_stats(ctx, args);
    case HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES:
        return emu_info_value(args, emu_g.asic->page_orders, 0,
                              sizeof(uint64_t)) ;
    case HL_INFO_DRAM_USAGE:
        return emu_info_dram_usage(ctx, args);
    case HL_INFO_GET_EVENTS:
        return emu_info_get_events(ctx, args);
    case HL_INFO_UNREGISTER_EVENTFD:
        return emu_info_eventfd(ctx, args, 0);
    default:
        return -ENOENT;  /* not in this group */
    }
}

static int emu_info_operational(emu_ctx_t *ctx,
                                const struct hl_info_args *args)
{
    switch (args->op) {
    case HL_INFO_REGISTER_EVENTFD:
        /* _hl_info_ioctl: after the operational check, unlike unregister */
        return emu_info_eventfd(ctx, args, 1);
    case HL_INFO_HW_IDLE:
        return emu_info_hw_idle(ctx, args);
    case HL_INFO_CLK_RATE:
        return emu_info_value(args, emu_g.asic->clk_mhz, emu_g.asic->clk_mhz,
                              sizeof(uint32_t));
    case HL_INFO_TIME_SYNC:
        return emu_info_time_sync(args);
    case HL_INFO_PCI_COUNTERS:
        return emu_info_pci_counters(ctx, args);
    case HL_INFO_DEVICE_UTILIZATION:
        return emu_info_value(args, 0, 0, sizeof(uint32_t));
    case HL_INFO_POWER:
    case HL_INFO_TOTAL_ENERGY:
        return emu_info_value(args, 0, 0, sizeof(uint64_t));
    case HL_INFO_PLL_FREQUENCY:
    case HL_INFO_DRAM_REPLACED_ROWS:
    case HL_INFO_DRAM_PENDING_ROWS:
    case HL_INFO_LAST_ERR_OPEN_DEV_TIME:
    case HL_INFO_CS_TIMEOUT_EVENT:
    case HL_INFO_RAZWI_EVENT:
    case HL_INFO_SECURED_ATTESTATION:
    case HL_INFO_UNDEFINED_OPCODE_EVENT:
    case HL_INFO_ENGINE_STATUS:
        return -EOPNOTSUPP;   /* real ops the emulator does not model */
    default:
        return -EINVAL;
    }
}

int emu_info_ioctl(emu_ctx_t *ctx, struct hl_info_args *args)
{
    int ret;

    if (args->pad != 0) {
        return -EINVAL;
    }

    if (!ctx->compute && ((args->op == HL_INFO_GET_EVENTS) ||
                          (args->op == HL_INFO_REGISTER_EVENTFD) ||
                          (args->op == HL_INFO_UNREGISTER_EVENTFD))) {
        return -EOPNOTSUPP;     /* hl_info_ioctl_control, before anything */
    }

    if (((args->return_pointer == 0) || (args->return_size == 0)) &&
        (args->op != HL_INFO_REGISTER_EVENTFD) &&
        (args->op != HL_INFO_UNREGISTER_EVENTFD)) {
        return -EINVAL;
    }

    ret = emu_info_any_state(ctx, args);
    if (ret != -ENOENT) {
        return ret;
    }

    if (!emu_dev_operational(ctx->sdev)) {
        return -EBUSY;
    }

    return emu_info_operational(ctx, args);
}
