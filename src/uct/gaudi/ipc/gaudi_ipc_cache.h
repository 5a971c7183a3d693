/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_CACHE_H_
#define UCT_GAUDI_IPC_CACHE_H_

/*
 * Remote-mapping cache of gaudi_ipc: the peers' exported allocations this
 * process imported into its device, per peer in a ucs_pgtable keyed by the
 * peer's VA range. A peer is the identity of its fd server (not its pid,
 * which another PID namespace numbers differently); an entry is identified
 * by {peer, export id, cookie}: a
 * key naming the same range with another identity is a new allocation and
 * replaces the stale entry. Mappings are reference counted (remote keys,
 * operations in flight, the cache itself) and unmapped when the last
 * reference goes; the cache drops its reference when the exporter revokes
 * the export, when the peer is found dead, when the cache is full (the least
 * recently used entry goes), or at cleanup. A key that fails to import
 * changes nothing in the cache.
 */

#include "gaudi_ipc_proto.h"
#include "gaudi_ipc_srv.h"

#include <uct/gaudi/drv/gaudi_own.h>
#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/pgtable.h>
#include <ucs/type/status.h>
#include <ucs/stats/stats.h>
#include <pthread.h>
#include <sys/types.h>


struct uct_gaudi_ipc_peer;


/* A peer's allocation imported into the owned device */
typedef struct uct_gaudi_ipc_map {
    ucs_pgt_region_t          super;      /* the peer's [base, base+length) */
    ucs_list_link_t           list;       /* in the peer's list, if cached */
    ucs_list_link_t           lru;        /* in the cache's, if cached */
    struct uct_gaudi_ipc_peer *peer;
    uct_gaudi_ipc_srv_id_t    peer_id;    /* the exporter's fd server */
    pid_t                     pid;        /* the exporter's, in its own PID
                                             namespace: for log lines */
    uint64_t                  export_id;
    uint64_t                  cookie;
    uint64_t                  dva;        /* the import in our device */
    unsigned                  refcount;
    int                       cached;     /* in the peer's table */
} uct_gaudi_ipc_map_t;


KHASH_INIT(uct_gaudi_ipc_peers, uct_gaudi_ipc_srv_id_t,
           struct uct_gaudi_ipc_peer*, 1, uct_gaudi_ipc_srv_id_hash,
           uct_gaudi_ipc_srv_id_hash_equal);


typedef struct uct_gaudi_ipc_cache {
    /* guards peers, maps, lru and importing; taken inside the fd server's
     * lock (which serves a REVOKE under it); not held while an fd is asked
     * of a peer; the driver's locks may be taken inside it */
    pthread_mutex_t            lock;
    ucs_list_link_t            importing; /* uct_gaudi_ipc_importing_t */
    uct_gaudi_dev_t            *dev;
    const uct_gaudi_ipc_srv_t  *srv;      /* ours: our identity, our
                                             directory */
    int                        enabled;   /* keep mappings for reuse */
    unsigned                   max_maps;  /* cached mappings, at most */
    unsigned                   num_maps;  /* cached mappings */
    ucs_list_link_t            lru;       /* cached, least recent first */
    double                     timeout;   /* fd server requests, seconds */
    khash_t(uct_gaudi_ipc_peers) peers;
    /* what the user sees at cleanup (UCX_LOG_LEVEL=info), in every build */
    unsigned long              num_imports; /* peer allocations imported */
    unsigned long              num_hits;    /* found imported already */
    unsigned long              num_failed;  /* imports that failed: staged */
    UCS_STATS_NODE_DECLARE(stats)
} uct_gaudi_ipc_cache_t;


enum {
    UCT_GAUDI_IPC_CACHE_STAT_HITS,     /* a peer's memory mapped already */
    UCT_GAUDI_IPC_CACHE_STAT_MISSES,   /* imported */
    UCT_GAUDI_IPC_CACHE_STAT_STALE,    /* dropped: the peer freed it */
    UCT_GAUDI_IPC_CACHE_STAT_EVICTED,  /* dropped: the cache was full */
    UCT_GAUDI_IPC_CACHE_STAT_LAST
};


ucs_status_t uct_gaudi_ipc_cache_init(uct_gaudi_ipc_cache_t *cache,
                                      uct_gaudi_dev_t *dev,
                                      const uct_gaudi_ipc_srv_t *srv,
                                      int enabled, unsigned max_maps,
                                      double timeout);


/* Drop every cached mapping (mappings still referenced go with their last
 * reference) */
void uct_gaudi_ipc_cache_cleanup(uct_gaudi_ipc_cache_t *cache);


/**
 * A referenced mapping of the peer allocation @a key describes: from the
 * cache, or fetched from the peer's fd server and imported.
 *
 * @return UCS_ERR_UNREACHABLE if the peer cannot be reached, refused, or
 *         the import failed (logged).
 */
ucs_status_t uct_gaudi_ipc_cache_get(uct_gaudi_ipc_cache_t *cache,
                                     const uct_gaudi_ipc_rkey_t *key,
                                     uct_gaudi_ipc_map_t **map_p);


/* Take another reference of @a map */
void uct_gaudi_ipc_cache_hold(uct_gaudi_ipc_cache_t *cache,
                              uct_gaudi_ipc_map_t *map);


/* Drop a reference; the last one unmaps the import */
void uct_gaudi_ipc_cache_put(uct_gaudi_ipc_cache_t *cache,
                             uct_gaudi_ipc_map_t *map);


/* The exporter serving as @a id (pid @a pid in its namespace, for log
 * lines) revoked export {export_id, cookie}: forget it.
 * @return UCS_OK if unmapped, UCS_INPROGRESS if still referenced */
ucs_status_t uct_gaudi_ipc_cache_revoke(uct_gaudi_ipc_cache_t *cache,
                                        const uct_gaudi_ipc_srv_id_t *id,
                                        pid_t pid, uint64_t export_id,
                                        uint64_t cookie);


/* The peer serving as @a id is gone: forget everything imported from it */
void uct_gaudi_ipc_cache_purge_peer(uct_gaudi_ipc_cache_t *cache,
                                    const uct_gaudi_ipc_srv_id_t *id);


/* Tests only (NULL otherwise): called by uct_gaudi_ipc_cache_get() between
 * receiving a peer's descriptor and keeping its import, to widen the window
 * in which a revocation races the import */
extern void (*uct_gaudi_ipc_cache_import_hook)(const uct_gaudi_ipc_rkey_t *key);

#endif
