/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_MD_H_
#define UCT_GAUDI_IPC_MD_H_

#include "gaudi_ipc_cache.h"
#include "gaudi_ipc_proto.h"
#include "gaudi_ipc_route.h"
#include "gaudi_ipc_srv.h"

#include <uct/base/uct_md.h>
#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/gaudi/drv/gaudi_own.h>
#include <uct/gaudi/drv/gaudi_share.h>
#include <ucs/datastruct/khash.h>
#include <pthread.h>


extern uct_component_t uct_gaudi_ipc_component;


typedef struct uct_gaudi_ipc_md_config {
    uct_md_config_t super;
    int             enable_cache;  /* keep imported mappings for reuse */
    unsigned        cache_max;     /* imports kept, at most */
    double          timeout;       /* fd server requests, seconds */
    char            *dir;          /* rendezvous directory ("": default) */
    int             check_pci_route; /* refuse peers with no PCIe route */
} uct_gaudi_ipc_md_config_t;


/* Importers of an export: the identities of their fd servers */
KHASH_INIT(uct_gaudi_ipc_importers, uct_gaudi_ipc_srv_id_t, char, 0,
           uct_gaudi_ipc_srv_id_hash, uct_gaudi_ipc_srv_id_hash_equal);


/*
 * An exported allocation of this process: from its first registration
 * until its last deregistration (or its free, if that comes first). Its
 * DMA-BUF is made when a peer first asks for it, and held from then on.
 * When it goes its importers are revoked, and the next registration of the
 * allocation is a new export with a new identity {export id, cookie}: keys
 * of the old one stop working.
 */
typedef struct uct_gaudi_ipc_export {
    uct_gaudi_export_t exp;          /* fd (-1: not asked for yet, or gone),
                                        base, len */
    ucs_status_t       dmabuf_status; /* the driver refused the export:
                                         every later request is refused */
    uint64_t           export_id;    /* never reused by this process */
    uint64_t           cookie;       /* random */
    unsigned           num_regs;     /* memory handles pointing here */
    int                freed;        /* memory freed while registered */
    khash_t(uct_gaudi_ipc_importers) importers; /* peers that fetched it */
} uct_gaudi_ipc_export_t;


/* The memory handle of gaudi_ipc: one registered range of an export */
typedef struct uct_gaudi_ipc_memh {
    uct_gaudi_ipc_export_t *export;
    uint64_t               address;
    size_t                 length;
} uct_gaudi_ipc_memh_t;


KHASH_MAP_INIT_INT64(uct_gaudi_ipc_exports, uct_gaudi_ipc_export_t*);


/* The MD: one per process (a singleton), shared by every md_open */
typedef struct uct_gaudi_ipc_md {
    uct_md_t                       super;
    uct_gaudi_dev_t                *dev;        /* the owned device */
    unsigned                       refcount;    /* md_open - md_close */
    /* guards the export tables; taken inside the fd server's lock (which
     * serves a GET_FD under it), never around a call to the server */
    pthread_mutex_t                lock;
    khash_t(uct_gaudi_ipc_exports) by_base;     /* allocation base -> */
    khash_t(uct_gaudi_ipc_exports) by_id;       /* export id -> */
    uint64_t                       next_export_id;
    uint64_t                       system_id;
    double                         timeout;     /* revocations, seconds */
    unsigned long                  num_unreachable; /* keys refused; under
                                                       uct_gaudi_ipc_md_lock */
    uct_gaudi_ipc_srv_t            srv;
    uct_gaudi_ipc_cache_t          cache;
    uct_gaudi_ipc_routes_t         routes;      /* to peers' devices; under
                                                   uct_gaudi_ipc_md_lock */
} uct_gaudi_ipc_md_t;


/* Remote key handed to the ep: a referenced mapping of the peer's
 * allocation, and the range of it the key grants */
typedef struct uct_gaudi_ipc_unpacked_rkey {
    uct_gaudi_ipc_map_t *map;    /* the cache's */
    uint64_t            start;   /* peer's VA */
    uint64_t            end;
} uct_gaudi_ipc_unpacked_rkey_t;


/* Whether @a key is of this process's own memory: its fd server is ours.
 * (Not its pid: a process of another PID namespace may have ours.) */
static inline int
uct_gaudi_ipc_md_key_is_local(const uct_gaudi_ipc_md_t *md,
                              const uct_gaudi_ipc_rkey_t *key)
{
    return uct_gaudi_ipc_srv_id_equal(&key->srv.id, &md->srv.entry.id);
}

#endif
