/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_DEVICE_H_
#define UCT_GAUDI_DEVICE_H_

/*
 * The device this process owns. gaudi_own.c opens and closes it; its health
 * (the failed state) is kept by gaudi_err.c, which every driver call goes
 * through; its memory and DMA state belong to gaudi_mem.c and gaudi_dma.c.
 * A type of its own, so that those parts know the device without knowing
 * each other.
 */

#include "gaudi_assign.h"
#include "gaudi_discover.h"

#include <ucs/sys/compiler_def.h>
#include <pthread.h>

BEGIN_C_DECLS


#define UCT_GAUDI_FAIL_REASON_MAX 160


struct uct_gaudi_mem_ctx;
struct uct_gaudi_dma_ctx;


struct uct_gaudi_dev {
    const uct_gaudi_dev_info_t *info;          /* discovered properties */
    char                       name[UCT_GAUDI_DEV_NAME_MAX]; /* "gaudiN" */
    int                        fd;             /* compute node */
    int                        adopted;        /* fd opened by the app */
    uct_gaudi_assign_rule_t    assigned_by;    /* rule that chose it */
    unsigned                   refcount;       /* acquire - release */
    /* guards the move to the failed state (gaudi_err.c); innermost lock:
     * nothing is taken while it is held */
    pthread_mutex_t            lock;
    volatile int               failed;         /* reset/removed: unusable */
    int                        revoked;        /* released after failing:
                                                  fd closed in place
                                                  (gaudi_reset.h) */
    int                        event_fd;       /* the driver's events, -1
                                                  if not watched */
    char                       fail_reason[UCT_GAUDI_FAIL_REASON_MAX];
    int                        memtype_range;  /* DRAM range in memtype cache */
    int                        can_import;     /* op 99: -1 not probed yet */
    struct uct_gaudi_mem_ctx   *mem;           /* device memory */
    struct uct_gaudi_dma_ctx   *dma;           /* DMA submission */
};

END_C_DECLS

#endif
