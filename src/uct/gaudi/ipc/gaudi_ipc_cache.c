/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_cache.h"
#include "gaudi_ipc_srv.h"

#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/gaudi/drv/gaudi_share.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <inttypes.h>
#include <unistd.h>


typedef struct uct_gaudi_ipc_peer {
    uct_gaudi_ipc_srv_id_t id;
    ucs_pgtable_t   maps;   /* lookup by the peer's address */
    ucs_list_link_t list;   /* the same entries, to walk them */
} uct_gaudi_ipc_peer_t;


/*
 * An import between its GET_FD request and its entry in the cache. The
 * exporter records us as an importer when it answers, so its REVOKE may come
 * before the entry exists: the revocation marks this, and the import is
 * dropped instead of cached (revocations win).
 */
typedef struct uct_gaudi_ipc_importing {
    ucs_list_link_t        list;
    uct_gaudi_ipc_srv_id_t peer_id;
    uint64_t        export_id;
    uint64_t        cookie;
    int             revoked;
} uct_gaudi_ipc_importing_t;


void (*uct_gaudi_ipc_cache_import_hook)(const uct_gaudi_ipc_rkey_t *key) =
        NULL;


static ucs_pgt_dir_t *uct_gaudi_ipc_pgd_alloc(const ucs_pgtable_t *pgtable)
{
    return ucs_malloc(sizeof(ucs_pgt_dir_t), "gaudi_ipc_pgdir");
}

static void uct_gaudi_ipc_pgd_release(const ucs_pgtable_t *pgtable,
                                      ucs_pgt_dir_t *dir)
{
    ucs_free(dir);
}

#ifdef ENABLE_STATS
static ucs_stats_class_t uct_gaudi_ipc_cache_stats_class = {
    .name          = "gaudi_ipc_cache",
    .num_counters  = UCT_GAUDI_IPC_CACHE_STAT_LAST,
    .class_id      = UCS_STATS_CLASS_ID_INVALID,
    .counter_names = {
        [UCT_GAUDI_IPC_CACHE_STAT_HITS]    = "hits",
        [UCT_GAUDI_IPC_CACHE_STAT_MISSES]  = "misses",
        [UCT_GAUDI_IPC_CACHE_STAT_STALE]   = "stale",
        [UCT_GAUDI_IPC_CACHE_STAT_EVICTED] = "evicted"
    }
};
#endif

ucs_status_t uct_gaudi_ipc_cache_init(uct_gaudi_ipc_cache_t *cache,
                                      uct_gaudi_dev_t *dev,
                                      const uct_gaudi_ipc_srv_t *srv,
                                      int enabled, unsigned max_maps,
                                      double timeout)
{
    ucs_status_t status;

    status = UCS_STATS_NODE_ALLOC(&cache->stats,
                                  &uct_gaudi_ipc_cache_stats_class,
                                  ucs_stats_get_root(), "-%s", dev->name);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_init(&cache->lock, NULL);
    cache->dev      = dev;
    cache->srv      = srv;
    cache->max_maps = ucs_max(max_maps, 1);
    cache->num_maps = 0;
    ucs_list_head_init(&cache->importing);
    ucs_list_head_init(&cache->lru);
    cache->enabled = enabled;
    cache->timeout = timeout;
    kh_init_inplace(uct_gaudi_ipc_peers, &cache->peers);
    return UCS_OK;
}

/* Unmap and free an unreferenced mapping; cache->lock held */
static void uct_gaudi_ipc_map_destroy(uct_gaudi_ipc_cache_t *cache,
                                      uct_gaudi_ipc_map_t *map)
{
    ucs_trace("gaudi_ipc: unmapping pid %d export %" PRIu64 " at 0x%" PRIx64,
              map->pid, map->export_id, map->dva);
    if (!cache->dev->failed) {
        uct_gaudi_mem_unmap(cache->dev, map->dva);
    }
    ucs_free(map);
}

static void uct_gaudi_ipc_map_release(uct_gaudi_ipc_cache_t *cache,
                                      uct_gaudi_ipc_map_t *map)
{
    ucs_assert(map->refcount > 0);
    if (--map->refcount == 0) {
        uct_gaudi_ipc_map_destroy(cache, map);
    }
}

/* Take @a map out of its peer's table and drop the table's reference */
static void uct_gaudi_ipc_map_uncache(uct_gaudi_ipc_cache_t *cache,
                                      uct_gaudi_ipc_map_t *map)
{
    ucs_assert(map->cached);
    ucs_pgtable_remove(&map->peer->maps, &map->super);
    ucs_list_del(&map->list);
    ucs_list_del(&map->lru);
    --cache->num_maps;
    map->cached = 0;
    uct_gaudi_ipc_map_release(cache, map);
}

/* Uncache the entries of @a peer overlapping [from, to) that match
 * @a export_id/cookie (any if export_id is 0). Returns how many were
 * removed, and in *busy_p whether any is still in use. cache->lock held */
static unsigned uct_gaudi_ipc_peer_drop(uct_gaudi_ipc_cache_t *cache,
                                        uct_gaudi_ipc_peer_t *peer,
                                        uint64_t from, uint64_t to,
                                        uint64_t export_id, uint64_t cookie,
                                        int *busy_p)
{
    uct_gaudi_ipc_map_t *map, *tmp;
    unsigned count = 0;

    ucs_list_for_each_safe(map, tmp, &peer->list, list) {
        if ((map->super.end <= from) || (map->super.start >= to) ||
            ((export_id != 0) &&
             ((map->export_id != export_id) || (map->cookie != cookie)))) {
            continue;
        }

        if ((busy_p != NULL) && (map->refcount > 1)) {
            *busy_p = 1;    /* unmapped when its last user lets go */
        }
        uct_gaudi_ipc_map_uncache(cache, map);
        ++count;
    }

    return count;
}

static uct_gaudi_ipc_peer_t *
uct_gaudi_ipc_cache_peer(uct_gaudi_ipc_cache_t *cache,
                         const uct_gaudi_ipc_srv_id_t *id, int create)
{
    uct_gaudi_ipc_peer_t *peer;
    khiter_t iter;
    int ret;

    iter = kh_get(uct_gaudi_ipc_peers, &cache->peers, *id);
    if (iter != kh_end(&cache->peers)) {
        return kh_val(&cache->peers, iter);
    } else if (!create) {
        return NULL;
    }

    peer = ucs_malloc(sizeof(*peer), "gaudi_ipc_peer");
    if (peer == NULL) {
        return NULL;
    }

    peer->id = *id;
    ucs_list_head_init(&peer->list);
    if (ucs_pgtable_init(&peer->maps, uct_gaudi_ipc_pgd_alloc,
                         uct_gaudi_ipc_pgd_release) != UCS_OK) {
        ucs_free(peer);
        return NULL;
    }

    iter = kh_put(uct_gaudi_ipc_peers, &cache->peers, *id, &ret);
    if (ret < 0) {
        ucs_pgtable_cleanup(&peer->maps);
        ucs_free(peer);
        return NULL;
    }

    kh_val(&cache->peers, iter) = peer;
    return peer;
}

static void uct_gaudi_ipc_cache_peer_destroy(uct_gaudi_ipc_cache_t *cache,
                                             uct_gaudi_ipc_peer_t *peer)
{
    khiter_t iter;

    uct_gaudi_ipc_peer_drop(cache, peer, 0, UINT64_MAX, 0, 0, NULL);
    iter = kh_get(uct_gaudi_ipc_peers, &cache->peers, peer->id);
    if (iter != kh_end(&cache->peers)) {
        kh_del(uct_gaudi_ipc_peers, &cache->peers, iter);
    }
    ucs_pgtable_cleanup(&peer->maps);
    ucs_free(peer);
}

/* A cached mapping with the identity of @a key, or NULL; cache->lock held */
static uct_gaudi_ipc_map_t *
uct_gaudi_ipc_cache_lookup(uct_gaudi_ipc_peer_t *peer,
                           const uct_gaudi_ipc_rkey_t *key)
{
    ucs_pgt_region_t *region;
    uct_gaudi_ipc_map_t *map;

    region = ucs_pgtable_lookup(&peer->maps, key->base);
    if (region == NULL) {
        return NULL;
    }

    map = ucs_derived_of(region, uct_gaudi_ipc_map_t);
    return ((map->export_id == key->export_id) &&
            (map->cookie == key->cookie) && (region->start == key->base) &&
            (region->end == key->base + key->length)) ? map : NULL;
}

/*
 * Keep @a map (imported through a key that worked) in @a peer's table:
 * whatever overlaps it is an older allocation the peer freed, and the least
 * recently used entries go beyond the limit. cache->lock held.
 */
static void uct_gaudi_ipc_cache_insert(uct_gaudi_ipc_cache_t *cache,
                                       uct_gaudi_ipc_peer_t *peer,
                                       uct_gaudi_ipc_map_t *map)
{
    uct_gaudi_ipc_map_t *lru;

    if (uct_gaudi_ipc_peer_drop(cache, peer, map->super.start,
                                map->super.end, 0, 0, NULL) > 0) {
        UCS_STATS_UPDATE_COUNTER(cache->stats,
                                 UCT_GAUDI_IPC_CACHE_STAT_STALE, 1);
        ucs_debug("gaudi_ipc: dropped stale mappings of pid %d for "
                  "0x%" PRIx64 "..0x%" PRIx64, map->pid,
                  (uint64_t)map->super.start, (uint64_t)map->super.end);
    }

    while (cache->num_maps >= cache->max_maps) {
        lru = ucs_list_head(&cache->lru, uct_gaudi_ipc_map_t, lru);
        ucs_debug("gaudi_ipc: cache full (%u): releasing pid %d export %"
                  PRIu64, cache->max_maps, lru->pid, lru->export_id);
        UCS_STATS_UPDATE_COUNTER(cache->stats,
                                 UCT_GAUDI_IPC_CACHE_STAT_EVICTED, 1);
        uct_gaudi_ipc_map_uncache(cache, lru);
    }

    if (ucs_pgtable_insert(&peer->maps, &map->super) != UCS_OK) {
        return;     /* not cached: it lives as long as its key */
    }

    ucs_list_add_tail(&peer->list, &map->list);
    ucs_list_add_tail(&cache->lru, &map->lru);
    ++cache->num_maps;
    map->peer   = peer;
    map->cached = 1;
    ++map->refcount;
}

/* Fetch the peer's DMA-BUF and import it (no lock held: talks to the peer) */
static ucs_status_t uct_gaudi_ipc_cache_import(uct_gaudi_ipc_cache_t *cache,
                                               const uct_gaudi_ipc_rkey_t *key,
                                               uint64_t *dva_p)
{
    ucs_status_t status;
    int fd;

    /* the fd server of the key's entry, if it is still the one the
     * exporter bound (else it is gone: nothing is sent) */
    status = uct_gaudi_ipc_srv_get_fd(cache->srv, &key->srv, key->pid,
                                      key->export_id, key->cookie,
                                      cache->timeout, &fd);
    if (status != UCS_OK) {
        ucs_diag("gaudi_ipc: pid %d did not give export %" PRIu64 " "
                 "(0x%" PRIx64 "+%" PRIu64 "): %s", key->pid, key->export_id,
                 key->base, key->length, ucs_status_string(status));
        return status;
    }

    status = uct_gaudi_share_import(cache->dev, fd, key->length, dva_p);
    close(fd);  /* the import holds the buffer */
    return status;
}

/* A cached mapping of @a key, held for the caller, or NULL; cache->lock
 * held */
static uct_gaudi_ipc_map_t *
uct_gaudi_ipc_cache_hit(uct_gaudi_ipc_cache_t *cache,
                        const uct_gaudi_ipc_rkey_t *key)
{
    uct_gaudi_ipc_peer_t *peer;
    uct_gaudi_ipc_map_t *hit;

    if (!cache->enabled) {
        return NULL;
    }

    peer = uct_gaudi_ipc_cache_peer(cache, &key->srv.id, 0);
    hit  = (peer != NULL) ? uct_gaudi_ipc_cache_lookup(peer, key) : NULL;
    if (hit != NULL) {
        ++hit->refcount;
        ++cache->num_hits;
        UCS_STATS_UPDATE_COUNTER(cache->stats, UCT_GAUDI_IPC_CACHE_STAT_HITS,
                                 1);
        ucs_list_del(&hit->lru);
        ucs_list_add_tail(&cache->lru, &hit->lru);
    }

    return hit;
}

/* @a map becomes the mapping of @a key imported at @a dva, held for the
 * caller, and is cached unless another thread cached the same meanwhile;
 * cache->lock held */
static void uct_gaudi_ipc_cache_add(uct_gaudi_ipc_cache_t *cache,
                                    const uct_gaudi_ipc_rkey_t *key,
                                    uct_gaudi_ipc_map_t *map, uint64_t dva)
{
    uct_gaudi_ipc_peer_t *peer;

    map->super.start = key->base;
    map->super.end   = key->base + key->length;
    map->peer_id     = key->srv.id;
    map->pid         = key->pid;
    map->export_id   = key->export_id;
    map->cookie      = key->cookie;
    map->dva         = dva;
    map->refcount    = 1;
    ++cache->num_imports;
    UCS_STATS_UPDATE_COUNTER(cache->stats, UCT_GAUDI_IPC_CACHE_STAT_MISSES, 1);
    if (!cache->enabled) {
        return;
    }

    peer = uct_gaudi_ipc_cache_peer(cache, &key->srv.id, 1);
    if ((peer != NULL) && (uct_gaudi_ipc_cache_lookup(peer, key) == NULL)) {
        uct_gaudi_ipc_cache_insert(cache, peer, map);
    }
}

ucs_status_t uct_gaudi_ipc_cache_get(uct_gaudi_ipc_cache_t *cache,
                                     const uct_gaudi_ipc_rkey_t *key,
                                     uct_gaudi_ipc_map_t **map_p)
{
    uct_gaudi_ipc_importing_t importing;
    uct_gaudi_ipc_map_t *map, *hit;
    ucs_status_t status;
    uint64_t dva;

    if ((key->length == 0) || (key->base + key->length < key->base) ||
        (key->base % UCS_PGT_ADDR_ALIGN) ||
        (key->length % UCS_PGT_ADDR_ALIGN)) {
        ucs_error("gaudi_ipc: invalid remote key (pid %d range "
                  "0x%" PRIx64 "+%" PRIu64 ")", key->pid, key->base,
                  key->length);
        return UCS_ERR_INVALID_PARAM;
    }

    /* allocated before the import: the revoked check and the insert below
     * must be one critical section, or a REVOKE handled between them finds
     * neither the import in progress nor a cached map, and is lost */
    map = ucs_calloc(1, sizeof(*map), "gaudi_ipc_map");
    if (map == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    importing.peer_id   = key->srv.id;
    importing.export_id = key->export_id;
    importing.cookie    = key->cookie;
    importing.revoked   = 0;
    pthread_mutex_lock(&cache->lock);
    hit = uct_gaudi_ipc_cache_hit(cache, key);
    if (hit != NULL) {
        pthread_mutex_unlock(&cache->lock);
        ucs_free(map);
        *map_p = hit;
        return UCS_OK;
    }
    ucs_list_add_tail(&cache->importing, &importing.list);
    pthread_mutex_unlock(&cache->lock);

    status = uct_gaudi_ipc_cache_import(cache, key, &dva);
    if ((status == UCS_OK) && (uct_gaudi_ipc_cache_import_hook != NULL)) {
        uct_gaudi_ipc_cache_import_hook(key);
    }

    pthread_mutex_lock(&cache->lock);
    ucs_list_del(&importing.list);
    if ((status == UCS_OK) && importing.revoked) {
        ucs_diag("gaudi_ipc: pid %d revoked export %" PRIu64 " while we "
                 "imported it", key->pid, key->export_id);
        uct_gaudi_mem_unmap(cache->dev, dva);
        status = UCS_ERR_CANCELED;
    }
    if (status == UCS_OK) {
        uct_gaudi_ipc_cache_add(cache, key, map, dva);
    } else {
        ++cache->num_failed;
    }
    pthread_mutex_unlock(&cache->lock);

    if (status != UCS_OK) {
        /* UCP takes the key as unreachable and stages what it moves to
         * this memory through host memory: slower, and the user should
         * know, once, why */
        uct_gaudi_log_once(UCS_LOG_LEVEL_INFO, "ipc-import-failed",
                           "gaudi_ipc: importing Gaudi memory of pid %d "
                           "failed (%s): transfers to it are staged through "
                           "host memory", key->pid,
                           ucs_status_string(status));
        ucs_free(map);
        return UCS_ERR_UNREACHABLE;
    }

    ucs_debug("gaudi_ipc: imported pid %d export %" PRIu64 " 0x%" PRIx64
              "+%" PRIu64 " at 0x%" PRIx64 "%s", key->pid, key->export_id,
              key->base, key->length, dva, map->cached ? " (cached)" : "");
    *map_p = map;
    return UCS_OK;
}

void uct_gaudi_ipc_cache_hold(uct_gaudi_ipc_cache_t *cache,
                              uct_gaudi_ipc_map_t *map)
{
    pthread_mutex_lock(&cache->lock);
    ++map->refcount;
    pthread_mutex_unlock(&cache->lock);
}

void uct_gaudi_ipc_cache_put(uct_gaudi_ipc_cache_t *cache,
                             uct_gaudi_ipc_map_t *map)
{
    pthread_mutex_lock(&cache->lock);
    uct_gaudi_ipc_map_release(cache, map);
    pthread_mutex_unlock(&cache->lock);
}

/* Mark the imports in progress from @a id of @a export_id/cookie (any if
 * export_id is 0) as revoked; cache->lock held */
static void
uct_gaudi_ipc_cache_revoke_importing(uct_gaudi_ipc_cache_t *cache,
                                     const uct_gaudi_ipc_srv_id_t *id,
                                     uint64_t export_id, uint64_t cookie)
{
    uct_gaudi_ipc_importing_t *importing;

    ucs_list_for_each(importing, &cache->importing, list) {
        if (uct_gaudi_ipc_srv_id_equal(&importing->peer_id, id) &&
            ((export_id == 0) || ((importing->export_id == export_id) &&
                                  (importing->cookie == cookie)))) {
            importing->revoked = 1;
        }
    }
}

ucs_status_t uct_gaudi_ipc_cache_revoke(uct_gaudi_ipc_cache_t *cache,
                                        const uct_gaudi_ipc_srv_id_t *id,
                                        pid_t pid, uint64_t export_id,
                                        uint64_t cookie)
{
    uct_gaudi_ipc_peer_t *peer;
    int busy = 0;

    pthread_mutex_lock(&cache->lock);
    uct_gaudi_ipc_cache_revoke_importing(cache, id, export_id, cookie);
    peer = uct_gaudi_ipc_cache_peer(cache, id, 0);
    if (peer != NULL) {
        uct_gaudi_ipc_peer_drop(cache, peer, 0, UINT64_MAX, export_id,
                                cookie, &busy);
    }
    pthread_mutex_unlock(&cache->lock);

    ucs_debug("gaudi_ipc: pid %d revoked export %" PRIu64 "%s", pid,
              export_id, busy ? " (still in use)" : "");
    return busy ? UCS_INPROGRESS : UCS_OK;
}

void uct_gaudi_ipc_cache_purge_peer(uct_gaudi_ipc_cache_t *cache,
                                    const uct_gaudi_ipc_srv_id_t *id)
{
    uct_gaudi_ipc_peer_t *peer;

    pthread_mutex_lock(&cache->lock);
    uct_gaudi_ipc_cache_revoke_importing(cache, id, 0, 0);
    peer = uct_gaudi_ipc_cache_peer(cache, id, 0);
    if (peer != NULL) {
        ucs_debug("gaudi_ipc: forgetting the mappings of peer %016" PRIx64
                  "%016" PRIx64, id->hi, id->lo);
        uct_gaudi_ipc_cache_peer_destroy(cache, peer);
    }
    pthread_mutex_unlock(&cache->lock);
}

void uct_gaudi_ipc_cache_cleanup(uct_gaudi_ipc_cache_t *cache)
{
    uct_gaudi_ipc_peer_t *peer;

    pthread_mutex_lock(&cache->lock);
    kh_foreach_value(&cache->peers, peer, {
        uct_gaudi_ipc_peer_drop(cache, peer, 0, UINT64_MAX, 0, 0, NULL);
        ucs_pgtable_cleanup(&peer->maps);
        ucs_free(peer);
    })
    kh_destroy_inplace(uct_gaudi_ipc_peers, &cache->peers);
    pthread_mutex_unlock(&cache->lock);

    UCS_STATS_NODE_FREE(cache->stats);
    pthread_mutex_destroy(&cache->lock);
}
