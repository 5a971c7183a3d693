/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_OWN_H_
#define UCT_GAUDI_OWN_H_

/*
 * Ownership of one Gaudi per process. The compute node admits one process
 * (a second open gets EBUSY), so the device is opened once, shared by all
 * users in the process (refcounted) and closed by the last release. A
 * compute node the application already opened is adopted, never reopened.
 */

#include "gaudi_assign.h"
#include "gaudi_dev.h"
#include "gaudi_dma.h"
#include "gaudi_mem.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/spinlock.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


#define UCT_GAUDI_FAIL_REASON_MAX 160


/* The device owned by this process */
struct uct_gaudi_dev {
    const uct_gaudi_dev_info_t *info;          /* discovered properties */
    char                       name[UCT_GAUDI_DEV_NAME_MAX]; /* "gaudiN" */
    int                        fd;             /* compute node */
    int                        adopted;        /* fd opened by the app */
    uct_gaudi_assign_rule_t    assigned_by;    /* rule that chose it */
    unsigned                   refcount;       /* acquire - release */
    ucs_spinlock_t             lock;           /* protects the failed state */
    volatile int               failed;         /* reset/removed: unusable */
    char                       fail_reason[UCT_GAUDI_FAIL_REASON_MAX];
    int                        memtype_range;  /* DRAM range in memtype cache */
    int                        can_import;     /* op 99: -1 not probed yet */
    uct_gaudi_mem_ctx_t        mem;            /* device memory */
    uct_gaudi_dma_ctx_t        dma;            /* DMA submission */
};


/**
 * Get the device of this process, opening it on first use: adopt a compute
 * node this process already holds, else the device UCX_GAUDI_DEVICE selects,
 * else the one the rules of Habana's runtime assign (gaudi_assign.h). The
 * choice and its rule are logged at info level.
 *
 * @return UCS_OK; UCS_ERR_BUSY when every candidate device, or the one
 *         device a rule forces, is owned by other processes (with one
 *         message saying so; no other device is taken); UCS_ERR_NO_DEVICE
 *         when there is no Gaudi or the rules name none;
 *         UCS_ERR_INVALID_PARAM for malformed assignment variables;
 *         UCS_ERR_UNSUPPORTED when only unsupported (Gaudi3) devices exist;
 *         other errors, logged.
 */
ucs_status_t uct_gaudi_dev_acquire(uct_gaudi_dev_t **dev_p);


/* Drop a reference; the last one releases memory and DMA state and closes
 * the compute node (an adopted one stays open) */
void uct_gaudi_dev_release(uct_gaudi_dev_t *dev);


/**
 * UCS_OK if @a dev is usable; otherwise log "device gaudiN failed: <reason>"
 * and return UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_gaudi_dev_check(uct_gaudi_dev_t *dev);


/* Move @a dev to the failed state (first reason wins; logged once) */
void uct_gaudi_dev_set_failed(uct_gaudi_dev_t *dev, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);


/* Ask the driver whether @a dev is operational (INFO DEVICE_STATUS) */
int uct_gaudi_dev_is_operational(uct_gaudi_dev_t *dev);

END_C_DECLS

#endif
