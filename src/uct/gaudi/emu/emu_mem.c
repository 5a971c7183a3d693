/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_mem.h"
#include "emu_dev.h"
#include "emu_dmabuf.h"
#include "emu_fault.h"
#include "emu_global.h"
#include "emu_hbm.h"
#include "emu_log.h"
#include "emu_uaccess.h"
#include "emu_va.h"

#include <string.h>


/* Gaudi1: no DRAM MMU, ALLOC/FREE only account what the user reports */
static int emu_mem_account(emu_ctx_t *ctx, uint64_t size, int add)
{
    emu_shm_dev_t *sdev = ctx->sdev;

    emu_state_lock(sdev);
    if (add) {
        sdev->dram_used += size;
        ctx->dram_mem   += size;
    } else {
        sdev->dram_used -= emu_min(size, sdev->dram_used);
        ctx->dram_mem   -= emu_min(size, ctx->dram_mem);
    }
    emu_state_unlock(sdev);

    return 0;
}

static int emu_mem_alloc(emu_ctx_t *ctx, union hl_mem_args *args)
{
    const emu_asic_t *asic = emu_g.asic;
    uint64_t size          = args->in.alloc.mem_size;
    uint64_t page          = args->in.alloc.page_size;
    emu_shm_alloc_t *alloc;
    uint64_t handle = 0;
    int ret;

    if (size == 0) {
        return -EINVAL;
    }

    if (!asic->dram_vm) {
        emu_mem_account(ctx, size, 1);
    } else {
        /* set_alloc_page_size: an ASIC that lets the user choose none
         * (no page orders) takes its default silently, whatever is asked;
         * one that does refuses a size it does not offer */
        if ((page == 0) || (asic->page_orders == 0)) {
            page = asic->alloc_page_size;
        } else if (!emu_is_pow2(page) || !(asic->page_orders & page)) {
            return -EINVAL;
        }

        emu_state_lock(ctx->sdev);
        alloc = emu_hbm_alloc(ctx->sdev, size, page, ctx->id,
                              args->in.flags, &ret);
        if (alloc != NULL) {
            handle         = alloc->handle;
            ctx->dram_mem += alloc->size;
        }
        emu_state_unlock(ctx->sdev);

        if (alloc == NULL) {
            return ret;
        }
    }

    memset(args, 0, sizeof(*args));
    args->out.handle = handle;
    return 0;
}

static int emu_mem_free(emu_ctx_t *ctx, union hl_mem_args *args)
{
    emu_shm_alloc_t *alloc;
    int ret = 0;

    if (!emu_g.asic->dram_vm) {
        /* the handle slot carries the size on Gaudi1 */
        return emu_mem_account(ctx, args->in.free.handle, 0);
    }

    emu_state_lock(ctx->sdev);
    pthread_mutex_lock(&ctx->lock);
    alloc = emu_hbm_find(ctx->sdev, args->in.free.handle);
    if ((alloc == NULL) || (alloc->owner != ctx->id)) {
        ret = -EINVAL;
    } else if (alloc->map_count != 0) {
        ret = -EINVAL;          /* "handle is mapped, cannot free" */
    } else if (emu_abi()->export_handle &&
               emu_dmabuf_range_exported(ctx, emu_hbm_offset(alloc),
                                         alloc->size)) {
        /* 6.1 exports the handle: "handle is exported, cannot free" while
         * the DMA-BUF is referenced (the UNMAP before it succeeded) */
        ret = -EINVAL;
    } else {
        ctx->dram_mem -= emu_min(ctx->dram_mem, alloc->size);
        emu_hbm_free(ctx->dev, ctx->sdev, alloc);
    }
    pthread_mutex_unlock(&ctx->lock);
    emu_state_unlock(ctx->sdev);

    return ret;
}

static int emu_mem_map_device(emu_ctx_t *ctx, union hl_mem_args *args)
{
    const emu_asic_t *asic = emu_g.asic;
    emu_shm_alloc_t *alloc;
    emu_map_t map;
    int ret;

    if (!asic->dram_vm) {
        return -EINVAL;         /* Gaudi1 has no device memory handles */
    }

    emu_state_lock(ctx->sdev);
    alloc = emu_hbm_find(ctx->sdev, args->in.map_device.handle);
    if (alloc == NULL) {
        ret = -EINVAL;
    } else if ((alloc->owner != ctx->id) &&
               !(alloc->flags & HL_MEM_SHARED)) {
        ret = -EPERM;
    } else {
        memset(&map, 0, sizeof(map));
        map.size   = alloc->size;
        map.host   = ctx->hbm + emu_hbm_offset(alloc);
        map.handle    = alloc->handle;
        map.type      = EMU_MAP_DRAM;
        map.import_fd = -1;

        pthread_mutex_lock(&ctx->lock);
        ret = emu_va_reserve(&ctx->va, asic->dram_base,
                             asic->dram_base + asic->dram_va_size, map.size,
                             asic->dram_page_size,
                             args->in.map_device.hint_addr,
                             args->in.flags & HL_MEM_FORCE_HINT, &map.va);
        if (ret == 0) {
            map.user_va = map.va;
            ret         = emu_va_insert(&ctx->va, &map);
        }
        pthread_mutex_unlock(&ctx->lock);

        alloc->map_count += (ret == 0);
    }
    emu_state_unlock(ctx->sdev);

    if (ret == 0) {
        memset(args, 0, sizeof(*args));
        args->out.device_virt_addr = map.va;
    }

    return ret;
}

static int emu_mem_map_host(emu_ctx_t *ctx, union hl_mem_args *args)
{
    const emu_asic_t *asic = emu_g.asic;
    uint64_t addr          = args->in.map_host.host_virt_addr;
    uint64_t size          = args->in.map_host.mem_size;
    uint64_t start, end, align, offset;
    emu_map_t map;
    int ret;

    if ((size == 0) || (addr + size < addr)) {
        return -EINVAL;
    }

    /* pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM): mapped writable,
     * and (kernels from 6.5) not a shared mapping of a file on disk */
    ret = emu_check_user_pinnable(addr, size, emu_g.cfg.pin_shared_files);
    if (ret != 0) {
        return ret;
    }

    if ((asic->huge_va_end != 0) && ((addr % EMU_HUGE_PAGE) == 0) &&
        ((size % EMU_HUGE_PAGE) == 0)) {
        start = asic->huge_va_start;
        end   = asic->huge_va_end;
        align = EMU_HUGE_PAGE;
    } else {
        start = asic->host_va_start;
        end   = asic->host_va_end;
        align = EMU_HOST_PAGE;
    }

    offset = addr % EMU_HOST_PAGE;
    memset(&map, 0, sizeof(map));
    map.size = emu_align_up(offset + size, align);
    map.host      = (uint8_t*)(uintptr_t)(addr - offset);
    map.type      = EMU_MAP_HOST;
    map.import_fd = -1;

    pthread_mutex_lock(&ctx->lock);
    ret = emu_va_reserve(&ctx->va, start, end, map.size, align,
                         args->in.map_host.hint_addr,
                         args->in.flags & HL_MEM_FORCE_HINT, &map.va);
    if (ret == 0) {
        /* the device VA keeps the sub-page offset of the host address */
        map.user_va = map.va + offset;
        ret         = emu_va_insert(&ctx->va, &map);
    }
    pthread_mutex_unlock(&ctx->lock);

    if (ret == 0) {
        memset(args, 0, sizeof(*args));
        args->out.device_virt_addr = map.user_va;
    }

    return ret;
}

static int emu_mem_unmap(emu_ctx_t *ctx, union hl_mem_args *args)
{
    uint64_t addr = args->in.unmap.device_virt_addr;
    emu_shm_alloc_t *alloc;
    emu_map_t *map;
    int ret = 0;

    emu_state_lock(ctx->sdev);
    pthread_mutex_lock(&ctx->lock);

    map = emu_va_find(&ctx->va, addr);
    if ((map == NULL) || (map->user_va != addr) ||
        (map->type == EMU_MAP_CB)) {
        ret = -EINVAL;          /* only the exact VA MAP returned */
    } else if ((map->type == EMU_MAP_DRAM) &&
               emu_dmabuf_exported(ctx, map->va)) {
        ret = -EINVAL;          /* "memory is exported" */
    } else {
        if (map->type == EMU_MAP_DRAM) {
            alloc = emu_hbm_find(ctx->sdev, map->handle);
            if ((alloc != NULL) && (alloc->map_count != 0)) {
                --alloc->map_count;
            }
        } else {
            emu_dmabuf_unmap_import(ctx, map);
        }
        emu_va_remove(&ctx->va, map);
    }

    pthread_mutex_unlock(&ctx->lock);
    emu_state_unlock(ctx->sdev);

    return ret;
}

/* An op the driver does not know: EINVAL, and hl_mem_ioctl writes "Unknown
 * opcode for memory IOCTL" to the kernel log */
static int emu_mem_unknown_op(void)
{
    emu_log_kernel_error();
    return -EINVAL;
}

/* Op 99 of the out-of-tree driver: every failure is logged there ("Failed
 * to get dmabuf" for an fd that is no DMA-BUF, -1 included) */
static int emu_mem_import(emu_ctx_t *ctx, union hl_mem_args *args)
{
    int ret = -emu_fault_call(EMU_FAULT_IMPORT);

    if (ret == 0) {
        ret = emu_dmabuf_import(ctx, args);
    }

    if (ret < 0) {
        emu_log_kernel_error();
    }

    return ret;
}

int emu_mem_ioctl(emu_ctx_t *ctx, union hl_mem_args *args)
{
    if (!emu_dev_operational(ctx->sdev)) {
        return -EBUSY;
    }

    switch (args->in.op) {
    case HL_MEM_OP_ALLOC:
        return emu_mem_alloc(ctx, args);
    case HL_MEM_OP_FREE:
        return emu_mem_free(ctx, args);
    case HL_MEM_OP_MAP:
        return (args->in.flags & HL_MEM_USERPTR) ?
               emu_mem_map_host(ctx, args) : emu_mem_map_device(ctx, args);
    case HL_MEM_OP_UNMAP:
        return emu_mem_unmap(ctx, args);
    case HL_MEM_OP_EXPORT_DMABUF_FD:
        return emu_dmabuf_export(ctx, args);
    case UCT_GAUDI_MEM_OP_REG_DMABUF_FD:
        /* only the out-of-tree driver has it, and it speaks the DRM
         * generation */
        return (emu_g.cfg.oot_import &&
                emu_abi()->import_op) ?
               emu_mem_import(ctx, args) : emu_mem_unknown_op();
    case HL_MEM_OP_MAP_BLOCK:
    case HL_MEM_OP_TS_ALLOC:
        return -EINVAL;         /* real ops, not modelled */
    default:
        return emu_mem_unknown_op();
    }
}

void emu_mem_cleanup(emu_ctx_t *ctx)
{
    size_t i;

    pthread_mutex_lock(&ctx->lock);
    for (i = 0; i < ctx->va.count; ++i) {
        if (ctx->va.maps[i].type == EMU_MAP_HOST) {
            emu_dmabuf_unmap_import(ctx, &ctx->va.maps[i]);
        }
    }
    emu_va_cleanup(&ctx->va);
    ctx->dram_mem = 0;
    pthread_mutex_unlock(&ctx->lock);

    emu_dmabuf_cleanup(ctx);
}
