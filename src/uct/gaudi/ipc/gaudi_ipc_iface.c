/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_iface.h"
#include "gaudi_ipc_ep.h"

#include <uct/gaudi/base/gaudi_ep.h>
#include <uct/gaudi/base/gaudi_md.h>
#include <uct/gaudi/base/gaudi_tls.h>
#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_share.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>
#include <ucs/type/class.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static ucs_config_field_t uct_gaudi_ipc_iface_config_table[] = {
    /* (MAX_BCOPY, the name of this buffer's size before, is a field of
     * UCX's own iface table, which reported it "deprecated") */
    /* UCS separates the overridden defaults with ';' (with ',' the
     * second was part of the first's value, and BOUNCE_SIZE stayed 1m) */
    {"", "OVERHEAD=2us;BOUNCE_SIZE=256k", NULL,
     ucs_offsetof(uct_gaudi_ipc_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_gaudi_iface_config_table)},

    {NULL}
};


static UCS_CLASS_DECLARE_DELETE_FUNC(uct_gaudi_ipc_iface_t, uct_iface_t);

static ucs_status_t
uct_gaudi_ipc_iface_get_device_address(uct_iface_h tl_iface,
                                       uct_device_addr_t *addr)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_device_addr_t dev;

    dev.system_id = iface->md->system_id;
    dev.dir_dev   = iface->md->srv.dir.dev;
    dev.dir_ino   = iface->md->srv.dir.ino;
    /* UCP packs addresses byte by byte: addr may be misaligned */
    memcpy(addr, &dev, sizeof(dev));
    return UCS_OK;
}

static ucs_status_t
uct_gaudi_ipc_iface_get_address(uct_iface_h tl_iface,
                                uct_iface_addr_t *iface_addr)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);
    uct_gaudi_ipc_iface_addr_t addr;

    addr.srv = iface->md->srv.entry;
    addr.pid = getpid();
    memcpy(iface_addr, &addr, sizeof(addr));
    return UCS_OK;
}

/* A process of this host that meets its peers in another directory: said
 * once per process at info level (UCP then moves Gaudi memory between us
 * staged, which an operator of containers wants to know about) */
static void uct_gaudi_ipc_iface_not_shared(uct_gaudi_ipc_iface_t *iface,
                                           uint64_t pid,
                                           uct_gaudi_reach_info_t info)
{
    static int reported = 0;
    ucs_log_level_t level;

    uct_gaudi_reach_fail(info, "pid %" PRIu64 " meets its peers in another "
                         "directory than our %s", pid,
                         iface->md->srv.dir.path);
    /* (ucs_log() evaluates its level more than once) */
    level = __sync_lock_test_and_set(&reported, 1) ? UCS_LOG_LEVEL_DEBUG :
                                                     UCS_LOG_LEVEL_INFO;
    ucs_log(level, "gaudi_ipc: pid %" PRIu64 " of this host (another "
            "container, or another UCX_GAUDI_IPC_DIR) does not share our "
            "rendezvous directory %s: Gaudi memory between us moves staged "
            "through host memory, not by gaudi_ipc; to use gaudi_ipc, mount "
            "the same host directory into both and name it in "
            "UCX_GAUDI_IPC_DIR", pid, iface->md->srv.dir.path);
}

/* Another process of this host whose fd server's entry is
 * in our directory (it shares the directory: its network and PID namespaces
 * do not matter) and whose DMA-BUFs our driver can import (op 99) */
static int uct_gaudi_ipc_iface_reachable(uct_gaudi_iface_t *super,
                                         const uct_device_addr_t *dev_addr,
                                         const uct_iface_addr_t *iface_addr,
                                         uct_gaudi_reach_info_t info)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(super,
                                                  uct_gaudi_ipc_iface_t);
    const uct_gaudi_ipc_srv_t *srv = &iface->md->srv;
    uct_gaudi_ipc_device_addr_t dev;
    uct_gaudi_ipc_iface_addr_t addr;
    const char *reason;

    if ((dev_addr == NULL) || (iface_addr == NULL)) {
        uct_gaudi_reach_fail(info, "no device or interface address");
        return 0;
    }

    /* UCP packs addresses byte by byte: they may be misaligned */
    memcpy(&dev, dev_addr, sizeof(dev));
    memcpy(&addr, iface_addr, sizeof(addr));
    if (dev.system_id != iface->md->system_id) {
        uct_gaudi_reach_fail(info, "another host (boot id)");
        return 0;
    } else if (uct_gaudi_ipc_srv_id_equal(&addr.srv.id, &srv->entry.id)) {
        /* This process, as cuda_ipc: not reachable. UCP's memory-type
         * endpoints (to self) would take gaudi_ipc for their RMA lane, and
         * UCP 1.13.1's rendezvous pipeline then gets from the device buffer
         * with a key packed from its host fragment's memh
         * (ucp_rndv_send_frag_update_get_rkey, for an MD that needs keys):
         * the key of other memory, no key of ours (UBSan: a NULL key in
         * uct_gaudi_ipc_map_translate). gaudi_copy moves this process's own
         * Gaudi memory, and a key of our own export does not unpack
         * (gaudi_ipc_md.c). */
        uct_gaudi_reach_fail(info, "this process (its own Gaudi memory is "
                             "gaudi_copy's)");
        return 0;
    } else if ((dev.dir_dev != srv->dir.dev) ||
               (dev.dir_ino != srv->dir.ino)) {
        uct_gaudi_ipc_iface_not_shared(iface, addr.pid, info);
        return 0;
    } else if (uct_gaudi_ipc_srv_check_entry(srv, &addr.srv, &reason) !=
               UCS_OK) {
        uct_gaudi_reach_fail(info, "pid %" PRIu64 ": %s", addr.pid, reason);
        return 0;
    } else if (!uct_gaudi_share_can_import(super->dev)) {
        uct_gaudi_reach_fail(info, "the driver of %s cannot import DMA-BUFs",
                             super->dev->name);
        return 0;
    }

    return 1;
}

static ucs_status_t
uct_gaudi_ipc_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *iface_attr)
{
    uct_gaudi_ipc_iface_t *iface = ucs_derived_of(tl_iface,
                                                  uct_gaudi_ipc_iface_t);

    uct_gaudi_iface_query(&iface->super, iface_attr);
    iface_attr->iface_addr_len     = sizeof(uct_gaudi_ipc_iface_addr_t);
    iface_attr->device_addr_len    = sizeof(uct_gaudi_ipc_device_addr_t);
    /* host data of short and bcopy operations is staged by the bounce
     * buffer; a peer that dies is noticed by its keepalive */
    iface_attr->cap.flags         |= UCT_IFACE_FLAG_PUT_BCOPY |
                                     UCT_IFACE_FLAG_GET_BCOPY |
                                     UCT_IFACE_FLAG_EP_CHECK |
                                     UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
    iface_attr->cap.put.max_bcopy  = iface->super.bounce.size;
    iface_attr->cap.get.max_bcopy  = iface->super.bounce.size;
    return UCS_OK;
}

static uct_iface_ops_t uct_gaudi_ipc_iface_ops = {
    .ep_put_short             = uct_gaudi_ep_put_short,
    .ep_get_short             = uct_gaudi_ep_get_short,
    .ep_put_bcopy             = uct_gaudi_ipc_ep_put_bcopy,
    .ep_get_bcopy             = uct_gaudi_ipc_ep_get_bcopy,
    .ep_put_zcopy             = uct_gaudi_ep_put_zcopy,
    .ep_get_zcopy             = uct_gaudi_ep_get_zcopy,
    .ep_pending_add           = uct_gaudi_ep_pending_add,
    .ep_pending_purge         = uct_gaudi_ep_pending_purge,
    .ep_flush                 = uct_gaudi_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_check                 = uct_gaudi_ipc_ep_check,
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_gaudi_ipc_ep_t),
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_gaudi_ipc_ep_t),
    .iface_flush              = uct_gaudi_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_gaudi_iface_progress,
    .iface_event_fd_get       = uct_gaudi_iface_event_fd_get,
    .iface_event_arm          = uct_gaudi_iface_event_arm,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(
                                        uct_gaudi_ipc_iface_t),
    .iface_query              = uct_gaudi_ipc_iface_query,
    .iface_get_device_address = uct_gaudi_ipc_iface_get_device_address,
    .iface_get_address        = uct_gaudi_ipc_iface_get_address,
    .iface_is_reachable       = UCT_GAUDI_IFACE_IS_REACHABLE
};

static uct_gaudi_iface_ops_t uct_gaudi_ipc_iface_internal_ops = {
    .super = {
        .iface_estimate_perf = uct_gaudi_iface_estimate_perf,
        .iface_vfs_refresh   = (uct_iface_vfs_refresh_func_t)
                               ucs_empty_function,
        .ep_query            = (uct_ep_query_func_t)
                               ucs_empty_function_return_unsupported,
        .ep_invalidate       = (uct_ep_invalidate_func_t)
                               ucs_empty_function_return_unsupported,
        UCT_GAUDI_IFACE_INTERNAL_OPS_EXTRA
    },
    .ep_rma_short    = uct_gaudi_ipc_ep_rma_short,
    .ep_zcopy        = uct_gaudi_ipc_ep_zcopy,
    .op_release      = uct_gaudi_ipc_op_release,
    .iface_reachable = uct_gaudi_ipc_iface_reachable,
    .ep_is_peer      = uct_gaudi_ipc_ep_is_peer
};

static ucs_status_t
uct_gaudi_ipc_query_devices(uct_md_h tl_md,
                            uct_tl_device_resource_t **tl_devices_p,
                            unsigned *num_tl_devices_p)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);

    return uct_gaudi_query_devices(tl_md, md->dev, UCT_GAUDI_IPC_DEV_NAME,
                                   tl_devices_p, num_tl_devices_p);
}

/* Whether UCX_TLS asks for gaudi_ipc by name (or by our alias, in-tree) */
static int uct_gaudi_ipc_iface_is_requested(void)
{
    static const char *const names[] = {"gaudi_ipc", UCT_GAUDI_TLS_ALIAS,
                                        NULL};

    return uct_gaudi_tls_lists(names);
}

/*
 * Say once per process whether this node's driver imports the peers'
 * DMA-BUFs: without it every Gaudi<->Gaudi transfer between processes is
 * staged through host memory, which nothing else would show. A warning
 * where the user asked for gaudi_ipc; in ucx_info, whose job is to describe
 * the transports, a line in gaudi_ipc's section of its output (the
 * interface is opened while that section is printed); info level otherwise.
 */
static void uct_gaudi_ipc_iface_tell_import(uct_gaudi_dev_t *dev)
{
    const char *exe = ucs_get_exe();
    int can_import  = uct_gaudi_share_can_import(dev);

    if (!uct_gaudi_lib_first_notice("ipc-can-import")) {
        return;
    }

    if ((exe != NULL) && !strcmp(ucs_basename(exe), "ucx_info")) {
        printf("#   peer memory import: %s\n", can_import ?
               "yes (DMA-BUF import, op 99)" :
               "no: this driver cannot import DMA-BUFs (Habana's out-of-tree "
               "driver can); Gaudi<->Gaudi between processes is staged "
               "through host memory");
    } else if (can_import) {
        ucs_info("gaudi_ipc: the driver of %s imports peers' Gaudi memory "
                 "(DMA-BUF import, op 99)", dev->name);
    } else {
        ucs_log(uct_gaudi_ipc_iface_is_requested() ? UCS_LOG_LEVEL_WARN :
                                                     UCS_LOG_LEVEL_INFO,
                "gaudi_ipc: the driver of %s cannot import other processes' "
                "Gaudi memory (DMA-BUF import is in Habana's out-of-tree "
                "driver only): Gaudi<->Gaudi transfers between processes "
                "are staged through host memory", dev->name);
    }
}

static UCS_CLASS_INIT_FUNC(uct_gaudi_ipc_iface_t, uct_md_h tl_md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    uct_gaudi_ipc_md_t *md = ucs_derived_of(tl_md, uct_gaudi_ipc_md_t);
    uct_gaudi_iface_params_t gaudi_params = {
        .tl_name         = "gaudi_ipc",
        .dev_name        = UCT_GAUDI_IPC_DEV_NAME,
        .knob_prefix     = "UCX_GAUDI_IPC_",
        .auto_latency    = 10e-6,
        .peer_queues     = 1,
        .op_size         = sizeof(uct_gaudi_ipc_op_t),
        /* UCP's protocols to a peer retry from the pending queue */
        .queue_when_full = 0
    };

    UCS_CLASS_CALL_SUPER_INIT(uct_gaudi_iface_t, &uct_gaudi_ipc_iface_ops,
                              &uct_gaudi_ipc_iface_internal_ops, tl_md,
                              md->dev, worker, params, tl_config,
                              &gaudi_params);

    self->md = md;
    uct_gaudi_ipc_iface_tell_import(md->dev);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gaudi_ipc_iface_t)
{
}

UCS_CLASS_DEFINE(uct_gaudi_ipc_iface_t, uct_gaudi_iface_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_gaudi_ipc_iface_t, uct_iface_t, uct_md_h,
                          uct_worker_h, const uct_iface_params_t*,
                          const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_gaudi_ipc_iface_t, uct_iface_t);

UCT_TL_DEFINE(&uct_gaudi_ipc_component, gaudi_ipc,
              uct_gaudi_ipc_query_devices, uct_gaudi_ipc_iface_t,
              "GAUDI_IPC_", uct_gaudi_ipc_iface_config_table,
              uct_gaudi_ipc_iface_config_t);
