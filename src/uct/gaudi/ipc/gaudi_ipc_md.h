/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_MD_H_
#define UCT_GAUDI_IPC_MD_H_

#include "gaudi_ipc_cache.h"
#include "gaudi_ipc_proto.h"
#include "gaudi_ipc_srv.h"

#include <uct/base/uct_md.h>
#include <uct/gaudi/base/gaudi_own.h>
#include <uct/gaudi/base/gaudi_share.h>
#include <ucs/datastruct/khash.h>
#include <pthread.h>


extern uct_component_t uct_gaudi_ipc_component;


typedef struct uct_gaudi_ipc_md_config {
    uct_md_config_t super;
    int             enable_cache;  /* keep imported mappings for reuse */
    double          timeout;       /* fd server requests, seconds */
} uct_gaudi_ipc_md_config_t;


/*
 * An exported allocation of this process. It lives from the first
 * registration of the allocation until the allocation is freed, so its
 * identity {export id, cookie} stays the same while the memory does (the
 * importers' cached mappings stay valid); the DMA-BUF fd is held while the
 * allocation is registered and closed at the last deregistration.
 * The memory handle of gaudi_ipc is this object.
 */
typedef struct uct_gaudi_ipc_export {
    uct_gaudi_export_t exp;          /* fd (-1: not registered), base, len */
    uint64_t           export_id;    /* never reused by this process */
    uint64_t           cookie;       /* random */
    unsigned           num_regs;     /* registrations holding the fd */
    unsigned           num_importers;
    pid_t              importers[8]; /* peers that fetched it (first 8) */
    int                more_importers; /* more than fit */
} uct_gaudi_ipc_export_t;


KHASH_MAP_INIT_INT64(uct_gaudi_ipc_exports, uct_gaudi_ipc_export_t*);


/* The MD: one per process (a singleton), shared by every md_open */
typedef struct uct_gaudi_ipc_md {
    uct_md_t                       super;
    uct_gaudi_dev_t                *dev;        /* the owned device */
    unsigned                       refcount;    /* md_open - md_close */
    pthread_mutex_t                lock;        /* export tables */
    khash_t(uct_gaudi_ipc_exports) by_base;     /* allocation base -> */
    khash_t(uct_gaudi_ipc_exports) by_id;       /* export id -> */
    uint64_t                       next_export_id;
    uint64_t                       system_id;
    double                         timeout;
    uct_gaudi_ipc_srv_t            srv;
    uct_gaudi_ipc_cache_t          cache;
} uct_gaudi_ipc_md_t;


/* Remote key handed to the ep: a referenced mapping of the peer's memory */
typedef uct_gaudi_ipc_map_t uct_gaudi_ipc_unpacked_rkey_t;


/* The process's MD while it is open, else NULL (no dangling pointer) */
uct_gaudi_ipc_md_t *uct_gaudi_ipc_md_get(void);

#endif
