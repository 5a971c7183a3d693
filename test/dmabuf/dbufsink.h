/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef DBUFSINK_H_
#define DBUFSINK_H_

/*
 * dbufsink: a UCT component built only for the tests (libuct_dbufsink.so.0,
 * loaded by UCX from UCX_PLUGIN_PATH like the plugin itself). Its memory
 * domain registers DMA-BUFs (UCT_MD_FLAG_REG_DMABUF) as InfiniBand's does
 * with ibv_reg_dmabuf_mr, so that UCP hands it a DMA-BUF of every Gaudi
 * buffer it registers, from the DMA-BUF provider (gaudi_cpy). It records
 * what it got and, like a NIC's memory region, holds the DMA-BUF until the
 * deregistration; the test reads the bytes through it with the emulator's
 * test importer (gaudi_emu_dmabuf_read). Its transport, dbufsink, reaches
 * nothing: it is there because UCP keeps only MDs with a transport.
 *
 * The test program finds the functions below with dlsym() in the module UCX
 * loaded (dlopen(DBUFSINK_MODULE_FILE, RTLD_NOLOAD)).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DBUFSINK_MODULE_FILE "libuct_dbufsink.so.0"

/* One registration with the sink's MD */
typedef struct dbufsink_reg {
    const void *address;      /* registered range */
    size_t     length;
    int        mem_type;      /* ucs_memory_type_t UCP passed (host: none) */
    int        given_fd;      /* the DMA-BUF fd UCP passed, -1 none */
    dev_t      given_dev;     /* what that fd was (st_dev, st_ino): the test */
    ino_t      given_ino;     /* checks UCP closed it */
    uint64_t   dmabuf_offset; /* the offset UCP passed */
    uint64_t   dmabuf_size;   /* the DMA-BUF's size (emulator) */
    int        live;          /* not deregistered yet */
} dbufsink_reg_t;

/* The registration of exactly [address, address + length): the latest live
 * one, else the latest; 0, or -ENOENT */
typedef int (*dbufsink_find_func_t)(const void *address, size_t length,
                                    dbufsink_reg_t *reg);
#define DBUFSINK_FIND_SYMBOL "dbufsink_find"

/* Read @a length bytes at @a offset of the registered range of the live
 * registration of [address, address + length) through the DMA-BUF it holds
 * (at dmabuf_offset + offset): 0 or -errno */
typedef int (*dbufsink_read_func_t)(const void *address, size_t reg_length,
                                    size_t offset, void *buf, size_t length);
#define DBUFSINK_READ_SYMBOL "dbufsink_read"

/* How many registrations are live, how many came with a DMA-BUF and how
 * many were refused, since the module was loaded */
typedef void (*dbufsink_counts_func_t)(unsigned *live, unsigned *with_dmabuf,
                                       unsigned *refused);
#define DBUFSINK_COUNTS_SYMBOL "dbufsink_counts"

#endif
