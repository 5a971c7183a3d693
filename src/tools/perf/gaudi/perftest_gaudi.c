/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <tools/perf/lib/libperf_int.h>

#include <uct/gaudi/drv/gaudi_buf.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler.h>
#include <ucs/sys/string.h>
#include <stdio.h>
#include <unistd.h>


/*
 * Gaudi device VAs are not CPU-addressable: every fill and copy below goes
 * through the DMA engine of the device this process owns (gaudi_buf.h).
 */


/* ucx_perftest prints its figures whatever its transfers returned (it logs
 * a failed send and goes on) and exits 0: the first failure of a Gaudi
 * operation of this process is kept here, and at exit it makes the exit
 * status non-zero, with the reason */
static char ucx_perf_gaudi_failure[256];

static void ucx_perf_gaudi_failed(const char *what, ucs_status_t status)
{
    if (ucx_perf_gaudi_failure[0] == '\0') {
        ucs_error("%s: %s", what, ucs_status_string(status));
        ucs_snprintf_safe(ucx_perf_gaudi_failure,
                          sizeof(ucx_perf_gaudi_failure), "%s: %s", what,
                          ucs_status_string(status));
    } else {
        ucs_debug("%s: %s", what, ucs_status_string(status));
    }
}

static ucs_status_t ucx_perf_gaudi_init(ucx_perf_context_t *perf)
{
    if (!uct_gaudi_buf_is_supported()) {
        ucs_error("cannot use %s memory: no Gaudi device is present, or "
                  "none can be owned by this process",
                  ucs_memory_type_names[UCS_MEMORY_TYPE_GAUDI]);
        return UCS_ERR_NO_DEVICE;
    }

    return UCS_OK;
}

static ucs_status_t uct_perf_gaudi_alloc(const ucx_perf_context_t *perf,
                                         size_t length, unsigned flags,
                                         uct_allocated_memory_t *alloc_mem)
{
    ucs_status_t status;

    status = uct_gaudi_buf_alloc(length, &alloc_mem->address);
    if (status != UCS_OK) {
        ucs_error("failed to allocate %zu bytes of Gaudi memory: %s", length,
                  ucs_status_string(status));
        return status;
    }

    status = uct_md_mem_reg(perf->uct.md, alloc_mem->address, length, flags,
                            &alloc_mem->memh);
    if (status != UCS_OK) {
        ucs_error("failed to register Gaudi memory %p length %zu: %s",
                  alloc_mem->address, length, ucs_status_string(status));
        uct_gaudi_buf_free(alloc_mem->address);
        return status;
    }

    alloc_mem->length   = length;
    alloc_mem->mem_type = UCS_MEMORY_TYPE_GAUDI;
    alloc_mem->md       = perf->uct.md;
    return UCS_OK;
}

static void uct_perf_gaudi_free(const ucx_perf_context_t *perf,
                                uct_allocated_memory_t *alloc_mem)
{
    ucs_status_t status;

    ucs_assert(alloc_mem->md == perf->uct.md);

    status = uct_md_mem_dereg(perf->uct.md, alloc_mem->memh);
    if (status != UCS_OK) {
        ucs_error("failed to deregister Gaudi memory %p: %s",
                  alloc_mem->address, ucs_status_string(status));
    }

    status = uct_gaudi_buf_free(alloc_mem->address);
    if (status != UCS_OK) {
        ucs_error("failed to free Gaudi memory %p: %s", alloc_mem->address,
                  ucs_status_string(status));
    }
}

/* Whether a buffer of @a mem_type is Gaudi device memory; -1 if this module
 * cannot reach memory of that type */
static int ucx_perf_gaudi_is_dev(ucs_memory_type_t mem_type)
{
    switch (mem_type) {
    case UCS_MEMORY_TYPE_GAUDI:
        return 1;
    case UCS_MEMORY_TYPE_HOST:
        return 0;
    default:
        return -1;
    }
}

static void ucx_perf_gaudi_memcpy(void *dst, ucs_memory_type_t dst_mem_type,
                                  const void *src,
                                  ucs_memory_type_t src_mem_type, size_t count)
{
    int dst_is_dev = ucx_perf_gaudi_is_dev(dst_mem_type);
    int src_is_dev = ucx_perf_gaudi_is_dev(src_mem_type);
    ucs_status_t status;

    if ((dst_is_dev < 0) || (src_is_dev < 0)) {
        ucs_error("cannot copy %s memory to %s memory with the Gaudi DMA",
                  ucs_memory_type_names[src_mem_type],
                  ucs_memory_type_names[dst_mem_type]);
        return;
    }

    status = uct_gaudi_buf_copy(dst, dst_is_dev, src, src_is_dev, count);
    if (status != UCS_OK) {
        ucx_perf_gaudi_failed("failed to copy between Gaudi and host memory",
                              status);
    }
}

static void *ucx_perf_gaudi_memset(void *dst, int value, size_t count)
{
    ucs_status_t status;

    status = uct_gaudi_buf_memset(dst, value, count);
    if (status != UCS_OK) {
        ucx_perf_gaudi_failed("failed to set Gaudi memory", status);
    }

    return dst;
}

UCS_STATIC_INIT {
    static ucx_perf_allocator_t gaudi_allocator = {
        .mem_type  = UCS_MEMORY_TYPE_GAUDI,
        .init      = ucx_perf_gaudi_init,
        .uct_alloc = uct_perf_gaudi_alloc,
        .uct_free  = uct_perf_gaudi_free,
        .memcpy    = ucx_perf_gaudi_memcpy,
        .memset    = ucx_perf_gaudi_memset
    };

    ucx_perf_mem_type_allocators[UCS_MEMORY_TYPE_GAUDI] = &gaudi_allocator;
}

UCS_STATIC_CLEANUP {
    char reason[128];

    ucx_perf_mem_type_allocators[UCS_MEMORY_TYPE_GAUDI] = NULL;
    if (uct_gaudi_buf_device_failed(reason, sizeof(reason)) &&
        (ucx_perf_gaudi_failure[0] == '\0')) {
        ucs_snprintf_safe(ucx_perf_gaudi_failure,
                          sizeof(ucx_perf_gaudi_failure),
                          "the Gaudi device failed (%s)", reason);
    }

    if (ucx_perf_gaudi_failure[0] != '\0') {
        /* at exit, after the figures: they measured failed transfers */
        fflush(NULL);
        fprintf(stderr, "ucx_perftest: Gaudi operations of this process "
                "failed, the results are not valid: %s\n",
                ucx_perf_gaudi_failure);
        _exit(1);
    }
}
