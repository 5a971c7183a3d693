/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_BOUNCE_H_
#define UCT_GAUDI_BOUNCE_H_

/*
 * A host buffer mapped once into the owned device's MMU, through which
 * synchronous copies stage pageable host memory (short and bcopy
 * operations): mapping host memory per operation would pin pages each time.
 */

#include <uct/gaudi/drv/gaudi_device.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS


typedef struct uct_gaudi_bounce {
    void     *host;   /* CPU address */
    uint64_t dva;     /* its device VA */
    size_t   size;
} uct_gaudi_bounce_t;


/* Allocate and map a bounce buffer of at least @a size bytes */
ucs_status_t uct_gaudi_bounce_init(uct_gaudi_dev_t *dev, size_t size,
                                   const char *name,
                                   uct_gaudi_bounce_t *bounce);


void uct_gaudi_bounce_cleanup(uct_gaudi_dev_t *dev,
                              uct_gaudi_bounce_t *bounce);


/**
 * Copy @a length bytes synchronously. A side with @a *_is_dev set is a device
 * address the DMA engine reaches (our memory or an imported peer's); the
 * other is host memory, staged through @a bounce in pieces of its size.
 * Device memory is never touched by the CPU.
 */
ucs_status_t uct_gaudi_bounce_copy(uct_gaudi_dev_t *dev,
                                   uct_gaudi_bounce_t *bounce, void *dst,
                                   int dst_is_dev, const void *src,
                                   int src_is_dev, size_t length);

END_C_DECLS

#endif
