/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_md.h"

#include <uct/gaudi/base/gaudi_knob.h>
#include <uct/gaudi/base/gaudi_md.h>
#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>
#include <ucs/time/time.h>
#include <sys/random.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>


static ucs_config_field_t uct_gaudi_ipc_md_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gaudi_ipc_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"CACHE", "y",
     "Keep the peers' Gaudi memory this process imported (DMA-BUF imports\n"
     "into the owned device) for reuse by later operations. With \"n\" an\n"
     "import is released as soon as the remote key using it is released.\n"
     "Entries are dropped when the exporter frees the memory or dies.",
     ucs_offsetof(uct_gaudi_ipc_md_config_t, enable_cache),
     UCS_CONFIG_TYPE_BOOL},

    {"CACHE_MAX_ENTRIES", "512",
     "Most peer allocations kept imported for reuse (all peers together);\n"
     "beyond it the least recently used one is released (once no operation\n"
     "uses it). Bounds what peers can make this process map.",
     ucs_offsetof(uct_gaudi_ipc_md_config_t, cache_max),
     UCS_CONFIG_TYPE_UINT},

    {"TIMEOUT", "2s",
     "How long to wait for a peer's answer when fetching its exported memory;\n"
     "how long a free or deregistration of exported memory waits for all its\n"
     "importers together to let go (then its release is deferred); how long a\n"
     "connection to this process's fd server may stay silent. Must be positive.",
     ucs_offsetof(uct_gaudi_ipc_md_config_t, timeout),
     UCS_CONFIG_TYPE_TIME},

    {"DIR", "",
     "Directory where the processes of one user that share Gaudi memory find\n"
     "each other (the fd servers' sockets). Only this uid may enter it: it is\n"
     "created with mode 0700 if missing, and refused if it is a link, belongs\n"
     "to another uid or lets others in. Processes in other containers of the\n"
     "same host reach each other when the same host directory is mounted into\n"
     "them and this names it there. Empty: $XDG_RUNTIME_DIR/ucx-gaudi-ipc if\n"
     "that is a directory of ours, else /tmp/ucx-gaudi-ipc-<uid>.",
     ucs_offsetof(uct_gaudi_ipc_md_config_t, dir), UCS_CONFIG_TYPE_STRING},

    {"CHECK_PCI_ROUTE", "y",
     "Import a peer's Gaudi memory only when the PCIe tree in sysfs shows a\n"
     "peer-to-peer route between the two devices, as Linux's p2pdma rules\n"
     "decide it (a common PCIe switch, or host bridges known to forward); else\n"
     "stage the transfers through host memory, with a warning. Habana's\n"
     "driver imports without this check, and a peer DMA with no route loses\n"
     "its writes and hangs the device. \"n\": import anyway, on a platform\n"
     "known to forward peer DMA that the rules do not list.",
     ucs_offsetof(uct_gaudi_ipc_md_config_t, check_pci_route),
     UCS_CONFIG_TYPE_BOOL},

    {NULL}
};


/* guards the singleton and its refcount; the outermost lock of gaudi_ipc:
 * opening and closing the MD take the ownership, fd server and cache locks
 * inside it */
static pthread_mutex_t uct_gaudi_ipc_md_lock = PTHREAD_MUTEX_INITIALIZER;
static uct_gaudi_ipc_md_t *uct_gaudi_ipc_md_singleton;


static ucs_status_t
uct_gaudi_ipc_md_query(uct_md_h tl_md, uct_gaudi_md_attr_t *md_attr)
{
    uct_gaudi_md_caps_t caps = {
        .flags            = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY,
        .reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_GAUDI),
        .alloc_mem_types  = 0,
        .access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_GAUDI),
        .detect_mem_types = 0,
        /* UCP's protocols register through UCP's cache only (its
         * datatype iterator asserts it), where the newer UCP caches
         * (gaudi_ucx_compat.h: freed ranges leave its cache) */
        .cache_mem_types  = UCT_GAUDI_UCP_CACHES_GAUDI_REGS ?
                            UCS_BIT(UCS_MEMORY_TYPE_GAUDI) : 0,
        .dmabuf_mem_types = 0,
        .max_alloc        = 0,
        .max_reg          = ULONG_MAX,
        .rkey_packed_size = sizeof(uct_gaudi_ipc_rkey_t),
        .reg_cost         = ucs_linear_func_make(0, 0)
    };

    uct_gaudi_md_attr_set(md_attr, &caps);
    return UCS_OK;
}

/* Record that the process serving as @a id (pid @a pid in its namespace)
 * fetched the fd of @a export; md->lock held */
static ucs_status_t
uct_gaudi_ipc_export_add_importer(uct_gaudi_ipc_export_t *export,
                                  const uct_gaudi_ipc_srv_id_t *id, pid_t pid)
{
    int ret;

    kh_put(uct_gaudi_ipc_importers, &export->importers, *id, &ret);
    if (ret < 0) {
        ucs_error("gaudi_ipc: failed to record pid %d as an importer of "
                  "export %" PRIu64, (int)pid, export->export_id);
        return UCS_ERR_NO_MEMORY;
    }

    return UCS_OK;
}

static uct_gaudi_ipc_export_t *
uct_gaudi_ipc_md_find(khash_t(uct_gaudi_ipc_exports) *hash, uint64_t key)
{
    khiter_t iter = kh_get(uct_gaudi_ipc_exports, hash, key);

    return (iter == kh_end(hash)) ? NULL : kh_val(hash, iter);
}

static void uct_gaudi_ipc_md_forget(khash_t(uct_gaudi_ipc_exports) *hash,
                                    uint64_t key)
{
    khiter_t iter = kh_get(uct_gaudi_ipc_exports, hash, key);

    if (iter != kh_end(hash)) {
        kh_del(uct_gaudi_ipc_exports, hash, iter);
    }
}

/*
 * The DMA-BUF of @a export, made when the first peer asks for it, not at
 * the registration: an fd (and, on the driver, a reference that pins the
 * chunk and holds the device) only for memory a peer imports; none at all
 * where no driver on this node can import. md->lock held.
 */
static ucs_status_t uct_gaudi_ipc_md_dmabuf(uct_gaudi_ipc_md_t *md,
                                            uct_gaudi_ipc_export_t *export)
{
    uct_gaudi_export_t exp;
    ucs_status_t status;

    if (export->dmabuf_status != UCS_OK) {
        return export->dmabuf_status;   /* said at the first request */
    }

    /* the allocation, or the chunk, by its range: whichever allocation
     * registered first may be gone by now */
    status = uct_gaudi_share_export(md->dev, export->exp.base,
                                    export->exp.length, &exp);
    if (status != UCS_OK) {
        export->dmabuf_status = status;
        return status;
    }

    ucs_assertv((exp.base == export->exp.base) &&
                (exp.length == export->exp.length), "export 0x%" PRIx64
                "+%zu became 0x%" PRIx64 "+%zu", export->exp.base,
                export->exp.length, exp.base, exp.length);
    export->exp.fd = exp.fd;
    ucs_debug("gaudi_ipc: export %" PRIu64 " of 0x%" PRIx64 "+%zu made at "
              "a peer's first request: DMA-BUF fd %d", export->export_id,
              exp.base, exp.length, exp.fd);
    return UCS_OK;
}

/* fd server: a peer asks for an export */
static ucs_status_t uct_gaudi_ipc_md_srv_get_fd(void *arg,
                                                const uct_gaudi_ipc_msg_t *msg,
                                                int *fd_p)
{
    uct_gaudi_ipc_md_t *md = arg;
    pid_t pid              = msg->pid;
    uct_gaudi_ipc_export_t *export;
    ucs_status_t status;

    /* whoever has the fd must be revoked when the export goes */
    if (!uct_gaudi_ipc_srv_can_revoke(&md->srv, &msg->sender)) {
        ucs_diag("gaudi_ipc: refused pid %d: its fd server %016" PRIx64
                 "%016" PRIx64 " has no revocation entry in our directory",
                 (int)pid, msg->sender.hi, msg->sender.lo);
        return UCS_ERR_REJECTED;
    }

    pthread_mutex_lock(&md->lock);
    export = uct_gaudi_ipc_md_find(&md->by_id, msg->export_id);
    if ((export == NULL) || (export->cookie != msg->cookie)) {
        ucs_diag("gaudi_ipc: refused pid %d: %s export %" PRIu64, (int)pid,
                 (export == NULL) ? "no" : "wrong cookie for",
                 msg->export_id);
        status = UCS_ERR_REJECTED;
    } else if ((export->exp.fd < 0) &&
               ((status = uct_gaudi_ipc_md_dmabuf(md, export)) != UCS_OK)) {
        /* the driver refused the export (a device that failed, pages
         * outside the DRAM BAR), now or at an earlier request: the peer
         * stages, and says so */
        ucs_diag("gaudi_ipc: refused pid %d: export %" PRIu64 " of 0x%"
                 PRIx64 "+%zu failed: %s", (int)pid, msg->export_id,
                 export->exp.base, export->exp.length,
                 ucs_status_string(status));
        status = UCS_ERR_REJECTED;
    } else {
        /* recorded first: whoever has the fd is revoked */
        status = uct_gaudi_ipc_export_add_importer(export, &msg->sender,
                                                   pid);
        if (status == UCS_OK) {
            *fd_p = fcntl(export->exp.fd, F_DUPFD_CLOEXEC, 0);
            if (*fd_p < 0) {
                ucs_error("gaudi_ipc: failed to duplicate fd %d: %m",
                          export->exp.fd);
                status = UCS_ERR_IO_ERROR;
            }
        }
    }
    pthread_mutex_unlock(&md->lock);

    return status;
}

/* fd server: an exporter revokes memory we imported */
static ucs_status_t uct_gaudi_ipc_md_srv_revoke(void *arg,
                                                const uct_gaudi_ipc_msg_t *msg)
{
    uct_gaudi_ipc_md_t *md = arg;

    return uct_gaudi_ipc_cache_revoke(&md->cache, &msg->sender, msg->pid,
                                      msg->export_id, msg->cookie);
}

static const uct_gaudi_ipc_srv_ops_t uct_gaudi_ipc_md_srv_ops = {
    .get_fd = uct_gaudi_ipc_md_srv_get_fd,
    .revoke = uct_gaudi_ipc_md_srv_revoke,
    .tick   = uct_gaudi_ipc_srv_revoking_progress
};

/*
 * Tell every importer of @a export that it goes, all in parallel on
 * non-blocking connections; the caller waits for their answers in @a rev
 * without md->lock, all under one deadline. md->lock held.
 */
static void uct_gaudi_ipc_md_revoke(uct_gaudi_ipc_md_t *md,
                                    uct_gaudi_ipc_export_t *export,
                                    uct_gaudi_ipc_srv_revocation_t *rev)
{
    uct_gaudi_ipc_srv_id_t id;
    unsigned total = 0;

    uct_gaudi_ipc_srv_revocation_init(rev, kh_size(&export->importers),
                                      export->export_id, export->cookie);
    kh_foreach_key(&export->importers, id, {
        uct_gaudi_ipc_srv_revoke(&md->srv, rev, &id);
        ++total;
    })

    ucs_debug("gaudi_ipc: revoked export %" PRIu64 " at %u of its %u "
              "importers (the others are gone)", export->export_id,
              rev->count, total);
    kh_clear(uct_gaudi_ipc_importers, &export->importers);
}

static void uct_gaudi_ipc_export_free(uct_gaudi_ipc_export_t *export)
{
    kh_destroy_inplace(uct_gaudi_ipc_importers, &export->importers);
    ucs_free(export);
}

/* @a export goes: forget its identity, close its fd, revoke its importers
 * (the caller waits for them in @a rev); md->lock held */
static void uct_gaudi_ipc_md_retire(uct_gaudi_ipc_md_t *md,
                                    uct_gaudi_ipc_export_t *export,
                                    uct_gaudi_ipc_srv_revocation_t *rev)
{
    uct_gaudi_ipc_md_forget(&md->by_base, export->exp.base);
    uct_gaudi_ipc_md_forget(&md->by_id, export->export_id);
    if (export->exp.fd >= 0) {
        close(export->exp.fd);
        export->exp.fd = -1;
    }
    uct_gaudi_ipc_md_revoke(md, export, rev);
}

/*
 * An exported allocation is being freed: tell the importers to let go, so
 * that its release (deferred while a peer still imports it) comes soon. If
 * it is still registered, its memory handles keep the export (retired)
 * until their deregistration.
 */
static void uct_gaudi_ipc_md_free_cb(void *arg, uint64_t dva, size_t length)
{
    uct_gaudi_ipc_md_t *md = arg;
    uct_gaudi_ipc_srv_revocation_t rev;
    uct_gaudi_ipc_export_t *export;
    unsigned num_regs      = 0;

    uct_gaudi_ipc_srv_revocation_init(&rev, 0, 0, 0);
    pthread_mutex_lock(&md->lock);
    export = uct_gaudi_ipc_md_find(&md->by_base, dva);
    if (export != NULL) {
        uct_gaudi_ipc_md_retire(md, export, &rev);
        export->freed = 1;
        num_regs      = export->num_regs;
    }
    pthread_mutex_unlock(&md->lock);

    /* the release that follows succeeds if they let go within a short
     * grace; else it is deferred and retried, and the free goes on */
    uct_gaudi_ipc_srv_revocation_finish(&md->srv, &rev, md->timeout);

    if ((num_regs > 0) && md->dev->failed) {
        /* not a free: the failed device is released, its exports with it
         * (gaudi_reset.h); the registrations stay until deregistered */
        ucs_debug("gaudi_ipc: export of 0x%" PRIx64 "+%zu withdrawn with "
                  "its failed device (%u registrations)", dva, length,
                  num_regs);
    } else if (num_regs > 0) {
        /* an application's mistake, unless UCP itself caches registrations
         * (gaudi_ucx_compat.h): it lets go of them once told of the free */
        ucs_log(UCT_GAUDI_UCP_CACHES_GAUDI_REGS ? UCS_LOG_LEVEL_DEBUG :
                                                  UCS_LOG_LEVEL_WARN,
                "gaudi_ipc: Gaudi memory 0x%" PRIx64 "+%zu freed while "
                "still registered (%u registrations)", dva, length,
                num_regs);
    } else if (export != NULL) {
        uct_gaudi_ipc_export_free(export);
    }
}

/* The memh of device memory that cannot be exported: export id 0, which
 * no export has (ids start at 1) */
static uct_gaudi_ipc_export_t uct_gaudi_ipc_md_unexported = {
    .exp       = {.fd = -1},
    .export_id = 0
};

static ucs_status_t uct_gaudi_ipc_md_export(uct_gaudi_ipc_md_t *md,
                                            uint64_t address, size_t length,
                                            uct_gaudi_ipc_export_t **export_p)
{
    uct_gaudi_ipc_export_t *export;
    uct_gaudi_mem_t mem;
    ucs_status_t status;
    size_t exp_length;
    uint64_t base;
    khiter_t iter;
    int ret;

    /* an export covers the allocation, or its whole chunk (6.1 handles):
     * the registrations of everything it covers share it */
    status = uct_gaudi_share_prepare(md->dev, address, length, &mem, &base,
                                     &exp_length);
    if (status != UCS_OK) {
        return status;
    }

    export = uct_gaudi_ipc_md_find(&md->by_base, base);
    if (export != NULL) {
        *export_p = export;
        return UCS_OK;
    }

    export = ucs_calloc(1, sizeof(*export), "gaudi_ipc_export");
    if (export == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    /* its identity now, its DMA-BUF at the first peer's request
     * (uct_gaudi_ipc_md_dmabuf) */
    kh_init_inplace(uct_gaudi_ipc_importers, &export->importers);
    export->exp.fd        = -1;
    export->exp.base      = base;
    export->exp.length    = exp_length;
    export->dmabuf_status = UCS_OK;
    export->export_id     = ++md->next_export_id;
    /* the only secret between us and a peer of our uid that guesses */
    if (getrandom(&export->cookie, sizeof(export->cookie), 0) !=
        sizeof(export->cookie)) {
        ucs_error("gaudi_ipc: getrandom failed: %m");
        status = UCS_ERR_IO_ERROR;
        goto err_free;
    }
    iter = kh_put(uct_gaudi_ipc_exports, &md->by_base, base, &ret);
    if (ret < 0) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    kh_val(&md->by_base, iter) = export;

    iter = kh_put(uct_gaudi_ipc_exports, &md->by_id, export->export_id, &ret);
    if (ret < 0) {
        uct_gaudi_ipc_md_forget(&md->by_base, base);
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    kh_val(&md->by_id, iter) = export;

    *export_p = export;
    return UCS_OK;

err_free:
    uct_gaudi_ipc_export_free(export);
    return status;
}

static ucs_status_t uct_gaudi_ipc_mem_reg(uct_md_h tl_md, void *address,
                                          size_t length,
                                          UCT_GAUDI_MEM_REG_ARG(reg),
                                          uct_mem_h *memh_p)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);
    unsigned flags         = UCT_GAUDI_MEM_REG_FLAGS(reg);
    uct_gaudi_ipc_export_t *export;
    uct_gaudi_ipc_memh_t *memh;
    ucs_status_t status;

    memh = ucs_malloc(sizeof(*memh), "gaudi_ipc_memh");
    if (memh == NULL) {
        ucs_error("gaudi_ipc: failed to allocate a memory handle");
        return UCS_ERR_NO_MEMORY;
    }

    pthread_mutex_lock(&md->lock);
    status = uct_gaudi_ipc_md_export(md, (uintptr_t)address, length, &export);
    if (status == UCS_OK) {
        ++export->num_regs;
    }
    pthread_mutex_unlock(&md->lock);

    if ((status == UCS_ERR_INVALID_ADDR) &&
        uct_gaudi_mem_is_device_address(md->dev, (uintptr_t)address,
                                        length)) {
        /* memory the application allocated on the device itself: its
         * allocation (hence its export identity) is unknown here. The rkey
         * says so; peers find it unreachable and UCP stages the transfer */
        ucs_debug("gaudi_ipc: %p+%zu was not allocated through UCX: it "
                  "cannot be exported, peers reach it staged", address,
                  length);
        export = &uct_gaudi_ipc_md_unexported;
        status = UCS_OK;
    }

    if (status != UCS_OK) {
        ucs_free(memh);
    }

    if (status == UCS_ERR_INVALID_ADDR) {
        if (!(flags & UCT_MD_MEM_FLAG_HIDE_ERRORS)) {
            ucs_error("gaudi_ipc: cannot register %p..%p: not Gaudi memory "
                      "allocated by this process through UCX on %s", address,
                      UCS_PTR_BYTE_OFFSET(address, length), md->dev->name);
        }
        return status;
    } else if (status != UCS_OK) {
        return status;
    }

    ucs_trace("gaudi_ipc: registered %p+%zu: export %" PRIu64 " fd %d",
              address, length, export->export_id, export->exp.fd);
    memh->export  = export;
    memh->address = (uintptr_t)address;
    memh->length  = length;
    *memh_p       = memh;
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_ipc_mem_dereg(uct_md_h tl_md,
                        const uct_md_mem_dereg_params_t *params)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);
    uct_gaudi_ipc_srv_revocation_t rev;
    uct_gaudi_ipc_memh_t *memh;
    uct_gaudi_ipc_export_t *export;
    int last;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);

    memh   = params->memh;
    export = memh->export;
    ucs_free(memh);
    if (export == &uct_gaudi_ipc_md_unexported) {
        return UCS_OK;
    }

    uct_gaudi_ipc_srv_revocation_init(&rev, 0, 0, 0);
    pthread_mutex_lock(&md->lock);
    ucs_assert(export->num_regs > 0);
    last = (--export->num_regs == 0);
    if (last && !export->freed) {
        /* what is not registered is not shared any more */
        uct_gaudi_ipc_md_retire(md, export, &rev);
    }
    pthread_mutex_unlock(&md->lock);

    uct_gaudi_ipc_srv_revocation_finish(&md->srv, &rev, md->timeout);

    if (last) {
        uct_gaudi_ipc_export_free(export);
    }
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_ipc_mkey_pack(uct_md_h tl_md, uct_mem_h memh,
                        UCT_GAUDI_MKEY_PACK_ADDRESS_ARGS
                        const uct_md_mkey_pack_params_t *params,
                        void *rkey_buffer)
{
    uct_gaudi_ipc_md_t *md         = ucs_derived_of(tl_md,
                                                    uct_gaudi_ipc_md_t);
    uct_gaudi_ipc_memh_t *reg      = memh;
    uct_gaudi_ipc_export_t *export = reg->export;
    uct_gaudi_ipc_rkey_t packed;
    uct_gaudi_ipc_rkey_t *key      = &packed;

    memset(key, 0, sizeof(*key));
    key->system_id    = md->system_id;
    key->pid          = getpid();
    key->dev_index    = md->dev->info->index;
    key->export_id    = export->export_id;
    key->cookie       = export->cookie;
    key->base         = export->exp.base;
    key->length       = export->exp.length;
    key->offset       = 0;
    key->bus_hash     = uct_gaudi_pci_bus_hash(md->dev->info->bus_id);
    key->srv          = md->srv.entry;
    /* the importer maps the allocation, but may use only what was
     * registered */
    key->range_offset = reg->address - export->exp.base;
    key->range_length = reg->length;
    if (export == &uct_gaudi_ipc_md_unexported) {
        /* export id 0 tells peers it is unreachable; the key stays well
         * formed (its range inside its base and length) */
        key->base         = reg->address;
        key->length       = reg->length;
        key->range_offset = 0;
    }
    /* UCP packs rkeys byte by byte: rkey_buffer may be misaligned */
    memcpy(rkey_buffer, key, sizeof(*key));
    return UCS_OK;
}

/* Why a key's memory cannot be imported, or NULL if it can; md_lock held */
static const char *
uct_gaudi_ipc_md_unreachable_reason(uct_gaudi_ipc_md_t *md,
                                    const uct_gaudi_ipc_rkey_t *key)
{
    const char *why;

    if (md == NULL) {
        return "no gaudi_ipc memory domain";
    } else if (key->export_id == 0) {
        return "memory not exported (allocated outside UCX)";
    } else if (key->system_id != md->system_id) {
        return "another system";
    } else if (!uct_gaudi_share_can_import(md->dev)) {
        return "the driver cannot import DMA-BUFs";
    } else if ((why = uct_gaudi_ipc_routes_refusal(&md->routes,
                                                   key->bus_hash)) != NULL) {
        return why;
    }

    return NULL;
}

static ucs_status_t
uct_gaudi_ipc_rkey_unpack(uct_component_t *component, const void *rkey_buffer,
                          UCT_GAUDI_RKEY_UNPACK_PARAMS_ARG
                          uct_rkey_t *rkey_p, void **handle_p)
{
    uct_gaudi_ipc_rkey_t unpacked;
    const uct_gaudi_ipc_rkey_t *key = &unpacked;
    uct_gaudi_ipc_unpacked_rkey_t *rkey;
    uct_gaudi_ipc_md_t *md;
    const char *reason;
    ucs_status_t status;

    /* UCP packs rkeys byte by byte: rkey_buffer may be misaligned */
    memcpy(&unpacked, rkey_buffer, sizeof(unpacked));

    if ((key->range_offset > key->length) ||
        (key->range_length > key->length - key->range_offset)) {
        ucs_error("gaudi_ipc: invalid remote key of pid %d: range +%" PRIu64
                  " length %" PRIu64 " is outside its allocation 0x%" PRIx64
                  "+%" PRIu64, key->pid, key->range_offset, key->range_length,
                  key->base, key->length);
        return UCS_ERR_INVALID_PARAM;
    }

    rkey = ucs_malloc(sizeof(*rkey), "gaudi_ipc_rkey");
    if (rkey == NULL) {
        ucs_error("gaudi_ipc: failed to allocate a remote key");
        return UCS_ERR_NO_MEMORY;
    }

    rkey->start = key->base + key->range_offset;
    rkey->end   = rkey->start + key->range_length;

    pthread_mutex_lock(&uct_gaudi_ipc_md_lock);
    md = uct_gaudi_ipc_md_singleton;
    /* ours by our fd server's identity, not by pid (a process of another
     * PID namespace may have our pid): this process's own memory is not
     * gaudi_ipc's, as its interface says (gaudi_ipc_iface.c). UCP unpacks
     * the keys of its endpoints to self too and stages nothing for them:
     * no line, no count */
    if ((md != NULL) && (key->system_id == md->system_id) &&
        uct_gaudi_ipc_md_key_is_local(md, key)) {
        pthread_mutex_unlock(&uct_gaudi_ipc_md_lock);
        ucs_debug("gaudi_ipc: a key of this process's own memory 0x%" PRIx64
                  "+%" PRIu64 ": not reachable (gaudi_copy's)", key->base,
                  key->length);
        status = UCS_ERR_UNREACHABLE;
        goto err_free;
    }

    reason = uct_gaudi_ipc_md_unreachable_reason(md, key);
    status = (reason == NULL) ? UCS_OK : UCS_ERR_UNREACHABLE;
    if (status == UCS_OK) {
        ++md->refcount; /* the mapping refers to the MD */
    } else {
        if (md != NULL) {
            ++md->num_unreachable;
        }
        uct_gaudi_log_once(UCS_LOG_LEVEL_INFO, reason,
                           "gaudi_ipc: Gaudi memory of pid %d is not "
                           "reachable (%s): transfers to it are staged "
                           "through host memory", key->pid, reason);
    }
    pthread_mutex_unlock(&uct_gaudi_ipc_md_lock);

    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_gaudi_ipc_cache_get(&md->cache, key, &rkey->map);
    if (status != UCS_OK) {
        uct_md_close(&md->super);
        goto err_free;
    }

    *rkey_p   = (uintptr_t)rkey;
    *handle_p = md;
    return UCS_OK;

err_free:
    ucs_free(rkey);
    return status;
}

static ucs_status_t uct_gaudi_ipc_rkey_release(uct_component_t *component,
                                               uct_rkey_t rkey, void *handle)
{
    uct_gaudi_ipc_unpacked_rkey_t *unpacked = (void*)rkey;
    uct_gaudi_ipc_md_t *md                  = handle;

    /* callers release keys whose unpack failed or never happened (UCX's
     * perftest after an unreachable peer): nothing was made for them */
    if ((md == NULL) || (rkey == 0) || (rkey == UCT_INVALID_RKEY)) {
        return UCS_OK;
    }

    uct_gaudi_ipc_cache_put(&md->cache, unpacked->map);
    ucs_free(unpacked);
    uct_md_close(&md->super);
    return UCS_OK;
}

static void uct_gaudi_ipc_md_destroy(uct_gaudi_ipc_md_t *md)
{
    uct_gaudi_ipc_cache_t *cache = &md->cache;
    uct_gaudi_ipc_export_t *export;

    /* the one place a user sees whether gaudi_ipc moved anything: an
     * endpoint with a gaudi_ipc lane may still have staged every transfer */
    if ((cache->num_imports + cache->num_hits + cache->num_failed +
         md->num_unreachable) > 0) {
        ucs_info("gaudi_ipc: %lu imports of peers' Gaudi memory (%lu more "
                 "uses found it imported); %lu imports failed and %lu remote "
                 "keys were unreachable%s", cache->num_imports,
                 cache->num_hits, cache->num_failed, md->num_unreachable,
                 (cache->num_failed + md->num_unreachable) ?
                 ": transfers to those were staged through host memory" :
                 "");
    }

    /* no free callback from now on, then no server: a free callback
     * revokes through the server */
    uct_gaudi_mem_set_free_cb(md->dev, NULL, NULL, 0);
    uct_gaudi_ipc_srv_stop(&md->srv);
    uct_gaudi_ipc_cache_cleanup(&md->cache);
    kh_foreach_value(&md->by_id, export, {
        if (export->exp.fd >= 0) {
            close(export->exp.fd);
        }
        uct_gaudi_ipc_export_free(export);
    })
    kh_destroy_inplace(uct_gaudi_ipc_exports, &md->by_id);
    kh_destroy_inplace(uct_gaudi_ipc_exports, &md->by_base);
    pthread_mutex_destroy(&md->lock);
    uct_gaudi_own_release(md->dev);
    ucs_free(md);
}

static void uct_gaudi_ipc_md_close(uct_md_h tl_md)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);

    pthread_mutex_lock(&uct_gaudi_ipc_md_lock);
    ucs_assert(md == uct_gaudi_ipc_md_singleton);
    if (--md->refcount > 0) {
        pthread_mutex_unlock(&uct_gaudi_ipc_md_lock);
        return;
    }

    uct_gaudi_ipc_md_singleton = NULL;
    pthread_mutex_unlock(&uct_gaudi_ipc_md_lock);
    uct_gaudi_ipc_md_destroy(md);
}

static uct_md_ops_t uct_gaudi_ipc_md_ops = {
    .close                  = uct_gaudi_ipc_md_close,
    .query                  = uct_gaudi_ipc_md_query,
    .mem_alloc              = (uct_md_mem_alloc_func_t)
                              ucs_empty_function_return_unsupported,
    .mem_free               = (uct_md_mem_free_func_t)
                              ucs_empty_function_return_unsupported,
    .mem_advise             = (uct_md_mem_advise_func_t)
                              ucs_empty_function_return_unsupported,
    .mem_reg                = uct_gaudi_ipc_mem_reg,
    .mem_dereg              = uct_gaudi_ipc_mem_dereg,
    .mem_query              = (uct_md_mem_query_func_t)
                              ucs_empty_function_return_unsupported,
    .mkey_pack              = uct_gaudi_ipc_mkey_pack,
    .detect_memory_type     = (uct_md_detect_memory_type_func_t)
                              ucs_empty_function_return_unsupported,
    UCT_GAUDI_MD_OPS_EXTRA
};

static ucs_status_t
uct_gaudi_ipc_md_create(const uct_gaudi_ipc_md_config_t *config,
                        uct_gaudi_ipc_md_t **md_p)
{
    uct_gaudi_ipc_md_t *md;
    ucs_status_t status;

    /* SO_RCVTIMEO takes 0 as "wait forever"; under a millisecond no peer
     * can answer, over an hour a dead one holds a free that long */
    status = uct_gaudi_knob_check_dbl("UCX_GAUDI_IPC_", "TIMEOUT",
                                      config->timeout, "s", 1e-3, 3600.0);
    if (status == UCS_OK) {
        status = uct_gaudi_knob_check_uint("UCX_GAUDI_IPC_",
                                           "CACHE_MAX_ENTRIES",
                                           config->cache_max, 1, 1u << 20);
    }
    if (status != UCS_OK) {
        return status;
    }

    md = ucs_calloc(1, sizeof(*md), "uct_gaudi_ipc_md_t");
    if (md == NULL) {
        ucs_error("failed to allocate memory for uct_gaudi_ipc_md_t");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_gaudi_own_acquire(&md->dev);
    if (status != UCS_OK) {
        goto err_free;
    }

    md->super.ops       = &uct_gaudi_ipc_md_ops;
    md->super.component = &uct_gaudi_ipc_component;
    md->refcount        = 1;
    md->system_id       = ucs_get_system_id();
    md->timeout         = config->timeout;
    uct_gaudi_ipc_routes_init(&md->routes, config->check_pci_route,
                              md->dev);
    pthread_mutex_init(&md->lock, NULL);
    kh_init_inplace(uct_gaudi_ipc_exports, &md->by_base);
    kh_init_inplace(uct_gaudi_ipc_exports, &md->by_id);
    status = uct_gaudi_ipc_cache_init(&md->cache, md->dev, &md->srv,
                                      config->enable_cache, config->cache_max,
                                      config->timeout);
    if (status != UCS_OK) {
        goto err_tables;
    }

    status = uct_gaudi_ipc_srv_start(&md->srv, &uct_gaudi_ipc_md_srv_ops, md,
                                     config->timeout, config->dir);
    if (status != UCS_OK) {
        goto err_cache;
    }

    uct_gaudi_mem_set_free_cb(md->dev, uct_gaudi_ipc_md_free_cb, md,
                              md->timeout);
    *md_p = md;
    return UCS_OK;

err_cache:
    uct_gaudi_ipc_cache_cleanup(&md->cache);
err_tables:
    kh_destroy_inplace(uct_gaudi_ipc_exports, &md->by_id);
    kh_destroy_inplace(uct_gaudi_ipc_exports, &md->by_base);
    pthread_mutex_destroy(&md->lock);
    uct_gaudi_own_release(md->dev);
err_free:
    ucs_free(md);
    return status;
}

static ucs_status_t
uct_gaudi_ipc_md_open(uct_component_t *component, const char *md_name,
                      const uct_md_config_t *uct_md_config, uct_md_h *md_p)
{
    const uct_gaudi_ipc_md_config_t *config =
            ucs_derived_of(uct_md_config, uct_gaudi_ipc_md_config_t);
    ucs_status_t status = UCS_OK;

    pthread_mutex_lock(&uct_gaudi_ipc_md_lock);
    if (uct_gaudi_ipc_md_singleton != NULL) {
        /* one per process: the first opening's configuration holds */
        ++uct_gaudi_ipc_md_singleton->refcount;
    } else {
        status = uct_gaudi_ipc_md_create(config, &uct_gaudi_ipc_md_singleton);
    }

    if (status == UCS_OK) {
        *md_p = &uct_gaudi_ipc_md_singleton->super;
    }
    pthread_mutex_unlock(&uct_gaudi_ipc_md_lock);

    return status;
}

uct_component_t uct_gaudi_ipc_component = {
    .query_md_resources = uct_gaudi_query_mds,
    .md_open            = uct_gaudi_ipc_md_open,
    .cm_open            = (uct_component_cm_open_func_t)
                          ucs_empty_function_return_unsupported,
    .rkey_unpack        = uct_gaudi_ipc_rkey_unpack,
    .rkey_ptr           = (uct_component_rkey_ptr_func_t)
                          ucs_empty_function_return_unsupported,
    .rkey_release       = uct_gaudi_ipc_rkey_release,
    .name               = "gaudi_ipc",
    .md_config          = {
        .name           = "Gaudi-IPC memory domain",
        .prefix         = "GAUDI_IPC_",
        .table          = uct_gaudi_ipc_md_config_table,
        .size           = sizeof(uct_gaudi_ipc_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(
                                  &uct_gaudi_ipc_component),
    .flags              = 0,
    .md_vfs_init        = (uct_component_md_vfs_init_func_t)
                          ucs_empty_function,
    UCT_GAUDI_COMPONENT_EXTRA
};
UCT_COMPONENT_REGISTER(&uct_gaudi_ipc_component);
