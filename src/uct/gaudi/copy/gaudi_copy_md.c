/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_copy_md.h"

#include <uct/gaudi/base/gaudi_knob.h>
#include <uct/gaudi/base/gaudi_md.h>
#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_share.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/profile/profile.h>
#include <ucs/sys/sys.h>
#include <ucm/api/ucm.h>
#include <sys/mman.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>


static ucs_config_field_t uct_gaudi_copy_md_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gaudi_copy_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"REG_OVERHEAD", "16us",
     "Estimated fixed cost of registering host memory with the Gaudi (pinning\n"
     "and mapping it into the device MMU); used by UCP to decide when\n"
     "registering a buffer pays off.",
     ucs_offsetof(uct_gaudi_copy_md_config_t, reg_cost.c),
     UCS_CONFIG_TYPE_TIME},

    {"REG_GROWTH", "0.06ns",
     "Estimated cost per byte of registering host memory with the Gaudi.",
     ucs_offsetof(uct_gaudi_copy_md_config_t, reg_cost.m),
     UCS_CONFIG_TYPE_TIME},

    {"RCACHE", "try",
     "Cache host memory registrations (userptr mappings into the Gaudi MMU,\n"
     "which pin the pages): a buffer registered again, or used again by a\n"
     "zero-copy operation, is not mapped again. Entries are dropped when the\n"
     "memory is unmapped from the process (UCM events).",
     ucs_offsetof(uct_gaudi_copy_md_config_t, enable_rcache),
     UCS_CONFIG_TYPE_TERNARY},

    /* host pages are mapped whole: regions are page aligned */
    {"", UCT_GAUDI_RCACHE_CONFIG_DEFAULTS, NULL,
     ucs_offsetof(uct_gaudi_copy_md_config_t, rcache),
     UCS_CONFIG_TYPE_TABLE(UCT_GAUDI_RCACHE_CONFIG_TABLE)},

#if UCT_GAUDI_MD_DMABUF
    {"DMABUF", "y",
     "Provide a DMA-BUF of Gaudi memory to the memory domains that register\n"
     "DMA-BUFs (InfiniBand: GPUDirect RDMA from Gaudi memory). Memory UCX\n"
     "allocated is always exportable; memory the application's runtime\n"
     "allocated only where the driver exports by address (not with the 6.1\n"
     "driver ABI on Gaudi2+, and on Gaudi2+ only from the start of a mapping):\n"
     "its registration with such a memory domain fails otherwise. With \"n\"\n"
     "UCP moves Gaudi memory between nodes staged through host memory.",
     ucs_offsetof(uct_gaudi_copy_md_config_t, dmabuf), UCS_CONFIG_TYPE_BOOL},
#endif

    {NULL}
};

#ifdef ENABLE_STATS
static ucs_stats_class_t uct_gaudi_copy_md_stats_class = {
    .name          = "gaudi_cpy_md",
    .num_counters  = UCT_GAUDI_COPY_MD_STAT_LAST,
    .class_id      = UCS_STATS_CLASS_ID_INVALID,
    .counter_names = {
        [UCT_GAUDI_COPY_MD_STAT_HOST_REG] = "host_reg",
        [UCT_GAUDI_COPY_MD_STAT_HOST_MAP] = "host_map"
    }
};
#endif



int uct_gaudi_copy_md_is_device_mem(uct_gaudi_copy_md_t *md, const void *addr,
                                    size_t length)
{
    return uct_gaudi_mem_is_device_address(md->dev, (uintptr_t)addr, length);
}

static ucs_status_t
uct_gaudi_copy_md_query(uct_md_h tl_md, uct_gaudi_md_attr_t *md_attr)
{
    uct_gaudi_copy_md_t *md  = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);
    uct_gaudi_md_caps_t caps = {
        .flags            = UCT_MD_FLAG_REG | UCT_MD_FLAG_ALLOC,
        .reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST) |
                            UCS_BIT(UCS_MEMORY_TYPE_GAUDI),
        .alloc_mem_types  = UCS_BIT(UCS_MEMORY_TYPE_GAUDI),
        /* a copy between host and Gaudi memory has a host end: where UCP
         * keeps a zero-copy lane only for what its MD accesses, and asks
         * estimate_perf about the pair (host to host is refused) */
        .access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_GAUDI) |
                            (UCT_GAUDI_PERF_CHECKS_MEM_TYPES ?
                             UCS_BIT(UCS_MEMORY_TYPE_HOST) : 0),
        .detect_mem_types = UCS_BIT(UCS_MEMORY_TYPE_GAUDI),
        /* host registrations are cached here (md->rcache), not by UCP */
        .cache_mem_types  = 0,
        /* UCP then registers Gaudi memory with every MD that takes a
         * DMA-BUF, with one this MD exports (uct_gaudi_copy_mem_query) */
        .dmabuf_mem_types = md->dmabuf ? UCS_BIT(UCS_MEMORY_TYPE_GAUDI) : 0,
        .max_alloc        = md->dev->info->dram_size,
        .max_reg          = ULONG_MAX,
        .rkey_packed_size = 0,
        .reg_cost         = md->reg_cost
    };

    uct_gaudi_md_attr_set(md_attr, &caps);
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_mkey_pack(uct_md_h md, uct_mem_h memh,
                         UCT_GAUDI_MKEY_PACK_ADDRESS_ARGS
                         const uct_md_mkey_pack_params_t *params,
                         void *rkey_buffer)
{
    /* Loopback only: the remote side of a gaudi_copy operation is an address
     * of this same process, so the packed key is empty */
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_rkey_unpack(uct_component_t *component,
                           const void *rkey_buffer,
                           UCT_GAUDI_RKEY_UNPACK_PARAMS_ARG
                           uct_rkey_t *rkey_p, void **handle_p)
{
    *rkey_p   = 0;
    *handle_p = NULL;
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_memh_create(void *address, size_t length,
                           ucs_memory_type_t mem_type,
                           uct_gaudi_copy_memh_t **memh_p)
{
    uct_gaudi_copy_memh_t *memh;

    memh = ucs_calloc(1, sizeof(*memh), "gaudi_copy_memh");
    if (memh == NULL) {
        ucs_error("failed to allocate a gaudi_copy memory handle");
        return UCS_ERR_NO_MEMORY;
    }

    memh->mem_type = mem_type;
    memh->address  = address;
    memh->length   = length;
    *memh_p        = memh;
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_md_map(uct_gaudi_copy_md_t *md, uct_gaudi_copy_memh_t *memh,
                      unsigned flags)
{
    ucs_status_t status;

    UCS_STATS_UPDATE_COUNTER(md->stats, UCT_GAUDI_COPY_MD_STAT_HOST_MAP, 1);
    status = uct_gaudi_mem_map_host(md->dev, memh->address, memh->length,
                                    &memh->dva);
    if ((status != UCS_OK) && !(flags & UCT_MD_MEM_FLAG_HIDE_ERRORS)) {
        ucs_error("gaudi_cpy: failed to register host memory %p..%p: %s",
                  memh->address,
                  UCS_PTR_BYTE_OFFSET(memh->address, memh->length),
                  ucs_status_string(status));
    }

    return status;
}

ucs_status_t uct_gaudi_copy_md_host_get(uct_gaudi_copy_md_t *md,
                                        void *address, size_t length,
                                        unsigned flags,
                                        uct_gaudi_copy_memh_t **memh_p)
{
    uct_gaudi_copy_rcache_region_t *region;
    ucs_rcache_region_t *rregion;
    uct_gaudi_copy_memh_t *memh;
    ucs_status_t status;

    UCS_STATS_UPDATE_COUNTER(md->stats, UCT_GAUDI_COPY_MD_STAT_HOST_REG, 1);
    if (md->rcache != NULL) {
        status = uct_gaudi_rcache_get(md->rcache, address, length,
                                      ucs_get_page_size(),
                                      PROT_READ | PROT_WRITE, &flags,
                                      &rregion);
        if (status != UCS_OK) {
            return status;
        }

        region  = ucs_derived_of(rregion, uct_gaudi_copy_rcache_region_t);
        *memh_p = &region->memh;
        return UCS_OK;
    }

    status = uct_gaudi_copy_memh_create(address, length, UCS_MEMORY_TYPE_HOST,
                                        &memh);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_copy_md_map(md, memh, flags);
    if (status != UCS_OK) {
        ucs_free(memh);
        return status;
    }

    *memh_p = memh;
    return UCS_OK;
}

ucs_status_t uct_gaudi_copy_md_host_put(uct_gaudi_copy_md_t *md,
                                        uct_gaudi_copy_memh_t *memh)
{
    ucs_status_t status;

    if (md->rcache != NULL) {
        ucs_rcache_region_put(md->rcache,
                              &ucs_container_of(memh,
                                                uct_gaudi_copy_rcache_region_t,
                                                memh)->super);
        return UCS_OK;
    }

    status = uct_gaudi_mem_unmap(md->dev, memh->dva);
    ucs_free(memh);
    return status;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_copy_mem_reg,
                 (tl_md, address, length, reg, memh_p),
                 uct_md_h tl_md, void *address, size_t length,
                 UCT_GAUDI_MEM_REG_ARG(reg), uct_mem_h *memh_p)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);
    unsigned flags          = UCT_GAUDI_MEM_REG_FLAGS(reg);
    uct_gaudi_copy_memh_t *memh;
    ucs_status_t status;

    if (uct_gaudi_copy_md_is_device_mem(md, address, length)) {
        /* Device memory needs no mapping: its VA is the DMA address */
        status = uct_gaudi_copy_memh_create(address, length,
                                            UCS_MEMORY_TYPE_GAUDI, &memh);
        if (status != UCS_OK) {
            return status;
        }

        memh->dva = (uintptr_t)address;
    } else {
        status = uct_gaudi_copy_md_host_get(md, address, length, flags,
                                            &memh);
        if (status != UCS_OK) {
            return status;
        }
    }

    ucs_trace("gaudi_cpy: registered %s %p..%p dva 0x%" PRIx64,
              ucs_memory_type_names[memh->mem_type], address,
              UCS_PTR_BYTE_OFFSET(address, length), memh->dva);
    *memh_p = memh;
    return UCS_OK;
}

UCS_PROFILE_FUNC(ucs_status_t, uct_gaudi_copy_mem_dereg, (tl_md, params),
                 uct_md_h tl_md, const uct_md_mem_dereg_params_t *params)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);
    uct_gaudi_copy_memh_t *memh;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);

    memh = params->memh;
    if (memh->mem_type == UCS_MEMORY_TYPE_HOST) {
        return uct_gaudi_copy_md_host_put(md, memh);
    }

    ucs_free(memh);
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_mem_alloc(uct_md_h tl_md, size_t *length_p, void **address_p,
                         ucs_memory_type_t mem_type,
                         UCT_GAUDI_MEM_ALLOC_SYS_DEV_ARG unsigned flags,
                         const char *alloc_name, uct_mem_h *memh_p)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);
    uct_gaudi_copy_memh_t *memh;
    ucs_status_t status;

    if (mem_type != UCS_MEMORY_TYPE_GAUDI) {
        return UCS_ERR_UNSUPPORTED;
    }

    status = uct_gaudi_copy_memh_create(NULL, 0, mem_type, &memh);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_mem_alloc(md->dev, *length_p, &memh->alloc);
    if (status != UCS_OK) {
        ucs_free(memh);
        return status;
    }

    memh->allocated = 1;
    memh->dva       = memh->alloc.dva;
    memh->address   = (void*)(uintptr_t)memh->alloc.dva;
    memh->length    = memh->alloc.length;
    *address_p      = memh->address;
    *length_p       = memh->length;
    *memh_p         = memh;
    ucs_debug("gaudi_cpy: allocated %zu bytes of %s memory at %p for %s",
              memh->length, md->dev->name, memh->address,
              alloc_name);
    return UCS_OK;
}

static ucs_status_t uct_gaudi_copy_mem_free(uct_md_h tl_md, uct_mem_h tl_memh)
{
    uct_gaudi_copy_md_t *md     = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);
    uct_gaudi_copy_memh_t *memh = tl_memh;
    ucs_status_t status;

    ucs_assert(memh->allocated);
    status = uct_gaudi_mem_free(md->dev, &memh->alloc);
    ucs_free(memh);
    return status;
}

#if UCT_GAUDI_MD_DMABUF
/*
 * A DMA-BUF of [address, address + length) for another MD to register
 * (UCP closes it after that registration; the importer keeps what it needs).
 * Memory UCX allocated, or saw the application's runtime allocate
 * (drv/gaudi_app.h), is exported as gaudi_ipc exports it (the allocation,
 * or its chunk, per driver form); other memory by its address where the
 * driver allows. A new export each time: UCP caches the
 * registrations that result, and an export pins its memory only while
 * someone holds it.
 */
static ucs_status_t
uct_gaudi_copy_md_dmabuf(uct_gaudi_copy_md_t *md, const void *address,
                         size_t length, uct_gaudi_mem_attr_t *mem_attr)
{
    uint64_t addr = (uintptr_t)address;
    uct_gaudi_export_t exp;
    ucs_status_t status;
    size_t alloc_length;
    uint64_t base;

    if (uct_gaudi_mem_lookup(md->dev, addr, length, &base, &alloc_length) ==
        UCS_OK) {
        status = uct_gaudi_share_export(md->dev, addr, length, &exp);
    } else {
        status = uct_gaudi_share_export_addr(md->dev, addr, length, &exp);
    }

    if (status != UCS_OK) {
        ucs_error("gaudi_cpy: no DMA-BUF of %s memory %p..%p for a memory "
                  "domain that registers DMA-BUFs: %s (memory UCX did not "
                  "see allocated, such as the runtime's from before "
                  "ucp_init, is exported only where the driver exports by "
                  "address; UCX_GAUDI_COPY_DMABUF=n stages it through host "
                  "memory instead)", md->dev->name, address,
                  UCS_PTR_BYTE_OFFSET(address, length),
                  ucs_status_string(status));
        return status;
    }

    /* what the export holds starts at exp.base, whatever its form */
    ucs_assertv((addr >= exp.base) &&
                (addr + length <= exp.base + exp.length),
                "%p+%zu outside DMA-BUF 0x%" PRIx64 "+%zu", address, length,
                exp.base, exp.length);
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_DMABUF_OFFSET) {
        mem_attr->dmabuf_offset = addr - exp.base;
    }

    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_DMABUF_FD) {
        mem_attr->dmabuf_fd = exp.fd;
    } else {
        close(exp.fd);
    }

    ucs_trace("gaudi_cpy: DMA-BUF fd %d of %p+%zu: offset %" PRIu64
              " in 0x%" PRIx64 "+%zu", exp.fd, address, length,
              addr - exp.base, exp.base, exp.length);
    return UCS_OK;
}
#endif

static ucs_status_t
uct_gaudi_copy_mem_query(uct_md_h tl_md, const void *address, size_t length,
                         uct_gaudi_mem_attr_t *mem_attr)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);

    if (!uct_gaudi_copy_md_is_device_mem(md, address, length)) {
        return UCS_ERR_INVALID_ADDR;
    }

#if UCT_GAUDI_MD_DMABUF
    if (mem_attr->field_mask & (UCT_MD_MEM_ATTR_FIELD_DMABUF_FD |
                                UCT_MD_MEM_ATTR_FIELD_DMABUF_OFFSET)) {
        if (!md->dmabuf) {
            /* UCP asks only a provider; someone else asks anyway */
            mem_attr->dmabuf_fd     = UCT_DMABUF_FD_INVALID;
            mem_attr->dmabuf_offset = 0;
        } else {
            ucs_status_t status = uct_gaudi_copy_md_dmabuf(md, address,
                                                           length, mem_attr);
            if (status != UCS_OK) {
                return status;
            }
        }
    }
#endif

    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_MEM_TYPE) {
        mem_attr->mem_type = UCS_MEMORY_TYPE_GAUDI;
    }

    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_SYS_DEV) {
        mem_attr->sys_dev = md->dev->info->sys_dev;
    }

    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS) {
        mem_attr->base_address = (void*)address;
    }

    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH) {
        mem_attr->alloc_length = length;
    }

    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_detect_memory_type(uct_md_h tl_md, const void *address,
                                  size_t length, ucs_memory_type_t *mem_type_p)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);

    *mem_type_p = uct_gaudi_copy_md_is_device_mem(md, address, length) ?
                  UCS_MEMORY_TYPE_GAUDI : UCS_MEMORY_TYPE_HOST;
    return UCS_OK;
}

static void uct_gaudi_copy_md_close(uct_md_h tl_md)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);

    if (md->rcache != NULL) {
        ucs_rcache_destroy(md->rcache);
    }

    UCS_STATS_NODE_FREE(md->stats);
    uct_gaudi_own_release(md->dev);
    ucs_free(md);
}

static uct_md_ops_t uct_gaudi_copy_md_ops = {
    .close                  = uct_gaudi_copy_md_close,
    .query                  = uct_gaudi_copy_md_query,
    .mem_alloc              = uct_gaudi_copy_mem_alloc,
    .mem_free               = uct_gaudi_copy_mem_free,
    .mem_advise             = (uct_md_mem_advise_func_t)
                              ucs_empty_function_return_unsupported,
    .mem_reg                = uct_gaudi_copy_mem_reg,
    .mem_dereg              = uct_gaudi_copy_mem_dereg,
    .mem_query              = uct_gaudi_copy_mem_query,
    .mkey_pack              = uct_gaudi_copy_mkey_pack,
    .detect_memory_type     = uct_gaudi_copy_detect_memory_type,
    UCT_GAUDI_MD_OPS_EXTRA
};

static ucs_status_t
uct_gaudi_copy_rcache_mem_reg_cb(void *context, ucs_rcache_t *rcache,
                                 void *arg, ucs_rcache_region_t *rregion,
                                 uint16_t rcache_mem_reg_flags)
{
    uct_gaudi_copy_md_t *md = context;
    uct_gaudi_copy_rcache_region_t *region;
    unsigned flags;

    flags  = (rcache_mem_reg_flags & UCS_RCACHE_MEM_REG_HIDE_ERRORS) ?
             UCT_MD_MEM_FLAG_HIDE_ERRORS : 0;
    region = ucs_derived_of(rregion, uct_gaudi_copy_rcache_region_t);
    region->memh.mem_type = UCS_MEMORY_TYPE_HOST;
    region->memh.address  = (void*)rregion->super.start;
    region->memh.length   = rregion->super.end - rregion->super.start;
    return uct_gaudi_copy_md_map(md, &region->memh, flags);
}

static void uct_gaudi_copy_rcache_mem_dereg_cb(void *context,
                                               ucs_rcache_t *rcache,
                                               ucs_rcache_region_t *rregion)
{
    uct_gaudi_copy_md_t *md = context;
    uct_gaudi_copy_rcache_region_t *region;

    region = ucs_derived_of(rregion, uct_gaudi_copy_rcache_region_t);
    uct_gaudi_mem_unmap(md->dev, region->memh.dva);
}

static void uct_gaudi_copy_rcache_dump_region_cb(void *context,
                                                 ucs_rcache_t *rcache,
                                                 ucs_rcache_region_t *rregion,
                                                 char *buf, size_t max)
{
    uct_gaudi_copy_rcache_region_t *region =
            ucs_derived_of(rregion, uct_gaudi_copy_rcache_region_t);

    snprintf(buf, max, "dva 0x%" PRIx64, region->memh.dva);
}

static ucs_rcache_ops_t uct_gaudi_copy_rcache_ops = {
    .mem_reg     = uct_gaudi_copy_rcache_mem_reg_cb,
    .mem_dereg   = uct_gaudi_copy_rcache_mem_dereg_cb,
    .dump_region = uct_gaudi_copy_rcache_dump_region_cb,
    UCT_GAUDI_RCACHE_OPS_EXTRA
};

static ucs_status_t
uct_gaudi_copy_md_rcache_create(uct_gaudi_copy_md_t *md,
                                const uct_gaudi_copy_md_config_t *config)
{
    ucs_rcache_params_t params;
    ucs_status_t status;

    if (config->enable_rcache == UCS_NO) {
        return UCS_OK;
    }

    uct_gaudi_rcache_set_params(&params, &config->rcache,
                                ucs_get_page_size());
    params.region_struct_size = sizeof(uct_gaudi_copy_rcache_region_t);
    params.ucm_events         = UCM_EVENT_VM_UNMAPPED;
    params.context            = md;
    params.ops                = &uct_gaudi_copy_rcache_ops;
    status = ucs_rcache_create(&params, "gaudi_cpy", NULL, &md->rcache);
    if (status == UCS_OK) {
        /* a registration that hits the cache costs a lookup */
        md->reg_cost = ucs_linear_func_make(
                uct_gaudi_rcache_overhead(&config->rcache), 0);
        return UCS_OK;
    }

    md->rcache = NULL;
    if (config->enable_rcache == UCS_YES) {
        ucs_error("gaudi_cpy: failed to create a registration cache: %s",
                  ucs_status_string(status));
        return status;
    }

    ucs_debug("gaudi_cpy: could not create a registration cache (%s), "
              "registering without it", ucs_status_string(status));
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_copy_md_open(uct_component_t *component, const char *md_name,
                       const uct_md_config_t *uct_md_config, uct_md_h *md_p)
{
    const uct_gaudi_copy_md_config_t *config =
            ucs_derived_of(uct_md_config, uct_gaudi_copy_md_config_t);
    uct_gaudi_copy_md_t *md;
    ucs_status_t status;
    size_t align;

    /* a registration costs microseconds, and a fraction of a nanosecond a
     * byte; beyond a second (or a microsecond a byte) it models nonsense */
    status = uct_gaudi_knob_check_dbl("UCX_GAUDI_COPY_", "REG_OVERHEAD",
                                      config->reg_cost.c * 1e6, "us", 0, 1e6);
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_dbl("UCX_GAUDI_COPY_", "REG_GROWTH",
                                          config->reg_cost.m * 1e9, "ns", 0,
                                          1e3);
    }
    if (status != UCS_OK) {
        return status;
    }

    /* UCX's rcache refuses it too, but without naming the knob */
    align = UCT_GAUDI_RCACHE_CONFIG_ALIGNMENT(&config->rcache);
    if (!ucs_is_pow2(align) || (align < 16) ||
        (align > ucs_get_page_size())) {
        ucs_error("UCX_GAUDI_COPY_RCACHE_ADDR_ALIGN=%zu is out of range: "
                  "accepted a power of 2 in 16..%zu", align,
                  ucs_get_page_size());
        return UCS_ERR_INVALID_PARAM;
    }

    md = ucs_calloc(1, sizeof(*md), "uct_gaudi_copy_md_t");
    if (md == NULL) {
        ucs_error("failed to allocate memory for uct_gaudi_copy_md_t");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_gaudi_own_acquire(&md->dev);
    if (status != UCS_OK) {
        ucs_free(md);
        return status;
    }

    md->super.ops       = &uct_gaudi_copy_md_ops;
    md->super.component = &uct_gaudi_copy_component;
    md->reg_cost        = config->reg_cost;
#if UCT_GAUDI_MD_DMABUF
    md->dmabuf          = config->dmabuf;
#endif
    status = UCS_STATS_NODE_ALLOC(&md->stats, &uct_gaudi_copy_md_stats_class,
                                  ucs_stats_get_root(), "%s-%s", md_name,
                                  md->dev->name);
    if (status != UCS_OK) {
        goto err_release;
    }

    status = uct_gaudi_copy_md_rcache_create(md, config);
    if (status != UCS_OK) {
        goto err_stats;
    }

    *md_p = &md->super;
    return UCS_OK;

err_stats:
    UCS_STATS_NODE_FREE(md->stats);
err_release:
    uct_gaudi_own_release(md->dev);
    ucs_free(md);
    return status;
}

uct_component_t uct_gaudi_copy_component = {
    .query_md_resources = uct_gaudi_query_mds,
    .md_open            = uct_gaudi_copy_md_open,
    .cm_open            = (uct_component_cm_open_func_t)
                          ucs_empty_function_return_unsupported,
    .rkey_unpack        = uct_gaudi_copy_rkey_unpack,
    .rkey_ptr           = (uct_component_rkey_ptr_func_t)
                          ucs_empty_function_return_unsupported,
    .rkey_release       = (uct_component_rkey_release_func_t)
                          ucs_empty_function_return_success,
    .name               = "gaudi_cpy",
    .md_config          = {
        .name           = "Gaudi-copy memory domain",
        .prefix         = "GAUDI_COPY_",
        .table          = uct_gaudi_copy_md_config_table,
        .size           = sizeof(uct_gaudi_copy_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(
                                  &uct_gaudi_copy_component),
    .flags              = 0,
    .md_vfs_init        = (uct_component_md_vfs_init_func_t)
                          ucs_empty_function,
    UCT_GAUDI_COMPONENT_EXTRA
};
UCT_COMPONENT_REGISTER(&uct_gaudi_copy_component);
