/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_BUF_H_
#define UCT_GAUDI_BUF_H_

/*
 * Gaudi buffers addressed by their device VA, for code outside UCT that
 * needs Gaudi memory the way an application has it: UCX's gtest mem_buffer
 * and the ucx_perftest allocator. Every byte is moved by the DMA engine of
 * the process's owned device; the CPU never touches a device address.
 */

#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>
#include <stddef.h>

BEGIN_C_DECLS

/* Whether a Gaudi device is present and this process owns (or can own) one */
int uct_gaudi_buf_is_supported(void);

/* Allocate @a size bytes of device memory; *ptr_p is its device VA */
ucs_status_t uct_gaudi_buf_alloc(size_t size, void **ptr_p);

/* Free memory from uct_gaudi_buf_alloc (NULL: nothing to free) */
ucs_status_t uct_gaudi_buf_free(void *ptr);

/* Fill @a length bytes of device memory at @a ptr with byte @a c */
ucs_status_t uct_gaudi_buf_memset(void *ptr, int c, size_t length);

/* Copy @a length bytes; each side is device memory or (pageable) host
 * memory, as its flag says */
ucs_status_t uct_gaudi_buf_copy(void *dst, int dst_is_dev, const void *src,
                                int src_is_dev, size_t length);

/* Whether the device these buffers live on has failed (reset, removed, a
 * DMA that failed or timed out) since the first buffer; if so, why, in
 * @a reason (@a max bytes) */
int uct_gaudi_buf_device_failed(char *reason, size_t max);

END_C_DECLS

#endif
