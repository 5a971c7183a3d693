/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_bounce.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/gaudi/drv/gaudi_dma.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/gaudi/drv/gaudi_own.h>

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <string.h>


ucs_status_t uct_gaudi_bounce_init(uct_gaudi_dev_t *dev, size_t size,
                                   const char *name,
                                   uct_gaudi_bounce_t *bounce)
{
    ucs_status_t status;

    bounce->size = ucs_align_up_pow2(ucs_max(size, 4096),
                                     ucs_get_page_size());
    status       = ucs_posix_memalign(&bounce->host, ucs_get_page_size(),
                                      bounce->size, name);
    if (status != UCS_OK) {
        ucs_error("%s: failed to allocate a %zu-byte bounce buffer for %s",
                  dev->name, bounce->size, name);
        return status;
    }

    status = uct_gaudi_mem_map_host(dev, bounce->host, bounce->size,
                                    &bounce->dva);
    if (status != UCS_OK) {
        ucs_free(bounce->host);
        return status;
    }

    return UCS_OK;
}

void uct_gaudi_bounce_cleanup(uct_gaudi_dev_t *dev, uct_gaudi_bounce_t *bounce)
{
    uct_gaudi_mem_unmap(dev, bounce->dva);
    ucs_free(bounce->host);
}

ucs_status_t uct_gaudi_bounce_copy(uct_gaudi_dev_t *dev,
                                   uct_gaudi_bounce_t *bounce, void *dst,
                                   int dst_is_dev, const void *src,
                                   int src_is_dev, size_t length)
{
    size_t offset, chunk;
    ucs_status_t status;

    if (dst_is_dev && src_is_dev) {
        return uct_gaudi_dma_copy(dev, (uintptr_t)dst, (uintptr_t)src,
                                  length);
    } else if (!dst_is_dev && !src_is_dev) {
        /* both sides are host memory: no device involved */
        memcpy(dst, src, length);
        return UCS_OK;
    }

    for (offset = 0; offset < length; offset += chunk) {
        chunk = ucs_min(length - offset, bounce->size);
        if (dst_is_dev) {
            memcpy(bounce->host, UCS_PTR_BYTE_OFFSET(src, offset), chunk);
            status = uct_gaudi_dma_copy(dev, (uintptr_t)dst + offset,
                                        bounce->dva, chunk);
        } else {
            status = uct_gaudi_dma_copy(dev, bounce->dva,
                                        (uintptr_t)src + offset, chunk);
            if (status == UCS_OK) {
                memcpy(UCS_PTR_BYTE_OFFSET(dst, offset), bounce->host, chunk);
            }
        }

        if (status != UCS_OK) {
            return status;
        }
    }

    return UCS_OK;
}
