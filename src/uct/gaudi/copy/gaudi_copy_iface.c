/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_copy_iface.h"
#include "gaudi_copy_md.h"
#include "gaudi_copy_ep.h"

#include <uct/gaudi/base/gaudi_ep.h>
#include <uct/gaudi/base/gaudi_md.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <ucs/type/class.h>
#include <string.h>


static ucs_config_field_t uct_gaudi_copy_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gaudi_copy_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_gaudi_iface_config_table)},

    {NULL}
};


static UCS_CLASS_DECLARE_DELETE_FUNC(uct_gaudi_copy_iface_t, uct_iface_t);

static ucs_status_t
uct_gaudi_copy_iface_get_address(uct_iface_h tl_iface,
                                 uct_iface_addr_t *iface_addr)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_iface,
                                                   uct_gaudi_copy_iface_t);
    uct_gaudi_copy_iface_addr_t id = iface->id;

    /* UCP packs addresses byte by byte: iface_addr may be misaligned */
    memcpy(iface_addr, &id, sizeof(id));
    return UCS_OK;
}

/* Only itself: a copy within this process, on its own device */
static int uct_gaudi_copy_iface_reachable(uct_gaudi_iface_t *super,
                                          const uct_device_addr_t *dev_addr,
                                          const uct_iface_addr_t *iface_addr,
                                          uct_gaudi_reach_info_t info)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(super,
                                                   uct_gaudi_copy_iface_t);
    uct_gaudi_copy_iface_addr_t id;

    if (iface_addr == NULL) {
        uct_gaudi_reach_fail(info, "no interface address");
        return 0;
    }

    memcpy(&id, iface_addr, sizeof(id)); /* may be misaligned */
    if (id != iface->id) {
        uct_gaudi_reach_fail(info, "another interface (gaudi_copy reaches "
                             "only itself)");
        return 0;
    }

    return 1;
}

static ucs_status_t
uct_gaudi_copy_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *iface_attr)
{
    uct_gaudi_copy_iface_t *iface = ucs_derived_of(tl_iface,
                                                   uct_gaudi_copy_iface_t);

    uct_gaudi_iface_query(&iface->super, iface_attr);
    iface_attr->iface_addr_len  = sizeof(uct_gaudi_copy_iface_addr_t);
    iface_attr->device_addr_len = 0;
    return UCS_OK;
}

static uct_iface_ops_t uct_gaudi_copy_iface_ops = {
    .ep_put_short             = uct_gaudi_ep_put_short,
    .ep_get_short             = uct_gaudi_ep_get_short,
    .ep_put_zcopy             = uct_gaudi_ep_put_zcopy,
    .ep_get_zcopy             = uct_gaudi_ep_get_zcopy,
    .ep_pending_add           = uct_gaudi_ep_pending_add,
    .ep_pending_purge         = uct_gaudi_ep_pending_purge,
    .ep_flush                 = uct_gaudi_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_gaudi_copy_ep_t),
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_gaudi_copy_ep_t),
    .iface_flush              = uct_gaudi_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_gaudi_iface_progress,
    .iface_event_fd_get       = uct_gaudi_iface_event_fd_get,
    .iface_event_arm          = uct_gaudi_iface_event_arm,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(
                                        uct_gaudi_copy_iface_t),
    .iface_query              = uct_gaudi_copy_iface_query,
    .iface_get_device_address = (uct_iface_get_device_address_func_t)
                                ucs_empty_function_return_success,
    .iface_get_address        = uct_gaudi_copy_iface_get_address,
    .iface_is_reachable       = UCT_GAUDI_IFACE_IS_REACHABLE
};

static uct_gaudi_iface_ops_t uct_gaudi_copy_iface_internal_ops = {
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
    .ep_rma_short    = uct_gaudi_copy_ep_rma_short,
    .ep_zcopy        = uct_gaudi_copy_ep_zcopy,
    .op_release      = uct_gaudi_copy_op_release,
    .iface_reachable = uct_gaudi_copy_iface_reachable,
    .ep_is_peer      = NULL
};

static ucs_status_t
uct_gaudi_copy_query_devices(uct_md_h tl_md,
                             uct_tl_device_resource_t **tl_devices_p,
                             unsigned *num_tl_devices_p)
{
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);

    return uct_gaudi_query_devices(tl_md, md->dev, md->dev->name,
                                   tl_devices_p, num_tl_devices_p);
}

static UCS_CLASS_INIT_FUNC(uct_gaudi_copy_iface_t, uct_md_h tl_md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    const uct_gaudi_copy_iface_config_t *config =
            ucs_derived_of(tl_config, uct_gaudi_copy_iface_config_t);
    uct_gaudi_copy_md_t *md = ucs_derived_of(tl_md, uct_gaudi_copy_md_t);
    uct_gaudi_iface_params_t gaudi_params = {
        .tl_name         = UCT_GAUDI_COPY_TL_NAME,
        .dev_name        = md->dev->name,
        .knob_prefix     = "UCX_GAUDI_COPY_",
        .auto_latency    = 8e-6,
        .peer_queues     = 0,
        /* an iov may need a host mapping at each end */
        .op_size         = sizeof(uct_gaudi_copy_op_t) +
                           (2 * ucs_max(config->super.max_iov, 1) *
                            sizeof(uct_gaudi_copy_memh_t*)),
        /* UCP stages memory-type copies through it */
        .queue_when_full = UCT_GAUDI_COPY_QUEUES_WHEN_FULL
    };

    UCS_CLASS_CALL_SUPER_INIT(uct_gaudi_iface_t, &uct_gaudi_copy_iface_ops,
                              &uct_gaudi_copy_iface_internal_ops, tl_md,
                              md->dev, worker, params, tl_config,
                              &gaudi_params);

    self->id = ucs_generate_uuid((uintptr_t)self);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gaudi_copy_iface_t)
{
}

UCS_CLASS_DEFINE(uct_gaudi_copy_iface_t, uct_gaudi_iface_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_gaudi_copy_iface_t, uct_iface_t, uct_md_h,
                          uct_worker_h, const uct_iface_params_t*,
                          const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_gaudi_copy_iface_t, uct_iface_t);

/* gaudi_copy, or gaudi_cpy where UCX's transport names are shorter
 * (gaudi_ucx_compat.h); its knobs are UCX_GAUDI_COPY_* either way */
UCT_GAUDI_TL_DEFINE(&uct_gaudi_copy_component, UCX_GAUDI_COPY_TL,
                    uct_gaudi_copy_query_devices, uct_gaudi_copy_iface_t,
                    "GAUDI_COPY_", uct_gaudi_copy_iface_config_table,
                    uct_gaudi_copy_iface_config_t);
