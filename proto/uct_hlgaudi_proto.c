/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * PROOF ONLY (issue 14), not part of the module: the smallest out-of-tree UCT
 * module UCX 1.22.0 loads from UCX_PLUGIN_PATH. It shows that the file name
 * (libuct_hlgaudi.so.0), the build flags (the configured 1.22 source tree's
 * headers and config.h, linked with the installed -luct -lucs) and the names
 * proposed for the 1.22 plugin are accepted:
 *
 *   component / MD "gaudi_cpy" with transport "gaudi_cpy" (9 characters,
 *   UCT_TL_NAME_MAX is 10 with the NUL), component / MD "gaudi_ipc" with
 *   transport "gaudi_ipc".
 *
 * With -DHLGAUDI_PROTO_LONG_TL_NAME it also defines a transport named
 * "gaudi_copy" (10 characters) to show what 1.22 makes of that name.
 *
 * Each MD does nothing (no registration, no allocation); each transport opens
 * an interface with no capabilities that reaches nothing. Every operation a
 * 1.22 caller may reach without a NULL check is set (uct_md_ops_t,
 * uct_component_t, uct_iface_ops_t used by ucx_info, uct_iface_internal_ops_t).
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <uct/base/uct_md.h>
#include <uct/base/uct_iface.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/module.h>
#include <ucs/type/class.h>
#include <ucs/memory/memory_type.h>


typedef struct {
    uct_iface_config_t super;
} uct_hlgproto_iface_config_t;

typedef struct {
    uct_base_iface_t   super;
} uct_hlgproto_iface_t;

static ucs_config_field_t uct_hlgproto_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_hlgproto_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {NULL}
};



/* ---- memory domain: nothing to register, allocate or detect ---- */

static void uct_hlgproto_md_close(uct_md_h md)
{
    ucs_free(md);
}

static ucs_status_t uct_hlgproto_md_query(uct_md_h md,
                                          uct_md_attr_v2_t *md_attr)
{
    /* every field of uct_md_attr_v2_t: uct_md_query_v2() copies them all */
    uct_md_base_md_query(md_attr);
    return UCS_OK;
}

static uct_md_ops_t uct_hlgproto_md_ops = {
    .close              = uct_hlgproto_md_close,
    .query              = uct_hlgproto_md_query,
    .mem_alloc          = (uct_md_mem_alloc_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_free           = (uct_md_mem_free_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_advise         = (uct_md_mem_advise_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_reg            = (uct_md_mem_reg_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_dereg          = (uct_md_mem_dereg_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_query          = (uct_md_mem_query_func_t)
                          ucs_empty_function_return_unsupported,
    .mkey_pack          = (uct_md_mkey_pack_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_attach         = (uct_md_mem_attach_func_t)
                          ucs_empty_function_return_unsupported,
    .detect_memory_type = (uct_md_detect_memory_type_func_t)
                          ucs_empty_function_return_unsupported,
    .mem_elem_pack      = (uct_md_mem_elem_pack_func_t)
                          ucs_empty_function_return_unsupported
};

static ucs_status_t
uct_hlgproto_md_open(uct_component_t *component, const char *md_name,
                     const uct_md_config_t *config, uct_md_h *md_p)
{
    uct_md_t *md;

    md = ucs_calloc(1, sizeof(*md), "hlgproto_md");
    if (md == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    md->ops       = &uct_hlgproto_md_ops;
    md->component = component;
    *md_p         = md;
    return UCS_OK;
}


/* ---- interface: no capabilities, reaches nothing ---- */

static ucs_status_t uct_hlgproto_iface_query(uct_iface_h tl_iface,
                                             uct_iface_attr_t *iface_attr)
{
    uct_hlgproto_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_hlgproto_iface_t);

    uct_base_iface_query(&iface->super, iface_attr);
    iface_attr->iface_addr_len      = 0;
    iface_attr->device_addr_len     = 0;
    iface_attr->ep_addr_len         = 0;
    iface_attr->cap.flags           = UCT_IFACE_FLAG_CONNECT_TO_IFACE;
    iface_attr->latency             = ucs_linear_func_make(1e-6, 0);
    iface_attr->bandwidth.dedicated = 0;
    iface_attr->bandwidth.shared    = 1e9;
    iface_attr->overhead            = 1e-6;
    iface_attr->priority            = 0;
    return UCS_OK;
}

static int
uct_hlgproto_iface_is_reachable_v2(const uct_iface_h tl_iface,
                                   const uct_iface_is_reachable_params_t *params)
{
    uct_iface_fill_info_str_buf(params, "proof module reaches nothing");
    return 0;
}

static ucs_status_t
uct_hlgproto_estimate_perf(uct_iface_h tl_iface, uct_perf_attr_t *perf_attr)
{
    /* the memory-type pairs this transport moves: none (UCP's protocol
     * selection takes UCS_OK here as "this pair is supported") */
    return UCS_ERR_UNSUPPORTED;
}

static UCS_CLASS_DECLARE_DELETE_FUNC(uct_hlgproto_iface_t, uct_iface_t);

/* uct_iface_t's constructor asserts the ones from ep_flush to
 * iface_is_reachable (uct_iface.c, UCS_CLASS_INIT_FUNC(uct_iface_t)) */
static uct_iface_ops_t uct_hlgproto_iface_ops = {
    .ep_create                = (uct_ep_create_func_t)
                                ucs_empty_function_return_unsupported,
    .ep_flush                 = (uct_ep_flush_func_t)
                                ucs_empty_function_return_success,
    .ep_fence                 = (uct_ep_fence_func_t)
                                ucs_empty_function_return_success,
    .ep_destroy               = (uct_ep_destroy_func_t)ucs_empty_function,
    .iface_flush              = (uct_iface_flush_func_t)
                                ucs_empty_function_return_success,
    .iface_fence              = (uct_iface_fence_func_t)
                                ucs_empty_function_return_success,
    .iface_progress_enable    = (uct_iface_progress_enable_func_t)
                                ucs_empty_function,
    .iface_progress_disable   = (uct_iface_progress_disable_func_t)
                                ucs_empty_function,
    .iface_progress           = (uct_iface_progress_func_t)
                                ucs_empty_function_return_zero,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(
                                        uct_hlgproto_iface_t),
    .iface_query              = uct_hlgproto_iface_query,
    .iface_get_device_address = (uct_iface_get_device_address_func_t)
                                ucs_empty_function_return_success,
    .iface_get_address        = (uct_iface_get_address_func_t)
                                ucs_empty_function_return_success,
    .iface_is_reachable       = uct_base_iface_is_reachable
};

/* UCP and ucx_info call each of these without a NULL check */
static uct_iface_internal_ops_t uct_hlgproto_iface_internal_ops = {
    .iface_query_v2        = uct_iface_base_query_v2,
    .iface_estimate_perf   = uct_hlgproto_estimate_perf,
    .iface_vfs_refresh     = (uct_iface_vfs_refresh_func_t)ucs_empty_function,
    .ep_query              = (uct_ep_query_func_t)
                             ucs_empty_function_return_unsupported,
    .ep_invalidate         = (uct_ep_invalidate_func_t)
                             ucs_empty_function_return_unsupported,
    .ep_connect_to_ep_v2   = (uct_ep_connect_to_ep_v2_func_t)
                             ucs_empty_function_return_unsupported,
    .iface_is_reachable_v2 = uct_hlgproto_iface_is_reachable_v2,
    .ep_is_connected       = uct_base_ep_is_connected,
    .ep_get_device_ep      = (uct_ep_get_device_ep_func_t)
                             ucs_empty_function_return_unsupported,
    .ep_put_sgl_zcopy      = (uct_ep_put_sgl_zcopy_func_t)
                             ucs_empty_function_return_unsupported
};

static UCS_CLASS_INIT_FUNC(uct_hlgproto_iface_t, uct_md_h md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_hlgproto_iface_ops,
                              &uct_hlgproto_iface_internal_ops, md, worker,
                              params, tl_config
                              UCS_STATS_ARG(params->stats_root)
                              UCS_STATS_ARG("hlgproto"));
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_hlgproto_iface_t)
{
}

UCS_CLASS_DEFINE(uct_hlgproto_iface_t, uct_base_iface_t);
static UCS_CLASS_DEFINE_NEW_FUNC(uct_hlgproto_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t*,
                                 const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_hlgproto_iface_t, uct_iface_t);

static ucs_status_t
uct_hlgproto_query_devices(uct_md_h md, uct_tl_device_resource_t **devices_p,
                           unsigned *num_devices_p)
{
    return uct_single_device_resource(md, "hlgproto0", UCT_DEVICE_TYPE_ACC,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, devices_p,
                                      num_devices_p);
}


/* ---- one component (= MD name) with one transport ---- */

/*
 * The copy transport's name: with -DHLGAUDI_PROTO_FEATURES (the plugin build
 * of the top-level configure --with-ucx), the one configure chose from
 * UCT_TL_NAME_MAX (plugin/ucx_gaudi_features.h), as the module will.
 */
#ifdef HLGAUDI_PROTO_FEATURES
#  include "ucx_gaudi_features.h"
#  define HLGPROTO_COPY_TL UCX_GAUDI_COPY_TL
#else
#  define HLGPROTO_COPY_TL gaudi_cpy
#endif

#define UCT_HLGPROTO_COMPONENT(_cmpt, _tl, _prefix) \
    uct_component_t uct_hlgproto_##_cmpt##_component = { \
        .query_md_resources = uct_md_query_single_md_resource, \
        .md_open            = uct_hlgproto_md_open, \
        .cm_open            = (uct_component_cm_open_func_t) \
                              ucs_empty_function_return_unsupported, \
        .rkey_unpack        = uct_md_stub_rkey_unpack, \
        .rkey_ptr           = (uct_component_rkey_ptr_func_t) \
                              ucs_empty_function_return_unsupported, \
        .rkey_release       = (uct_component_rkey_release_func_t) \
                              ucs_empty_function_return_success, \
        .rkey_compare       = uct_base_rkey_compare, \
        .name               = #_cmpt, \
        .md_config          = { \
            .name           = #_cmpt " proof memory domain", \
            .prefix         = _prefix, \
            .table          = uct_md_config_table, \
            .size           = sizeof(uct_md_config_t), \
        }, \
        .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY, \
        .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER( \
                                      &uct_hlgproto_##_cmpt##_component), \
        .flags              = 0, \
        .md_vfs_init        = (uct_component_md_vfs_init_func_t) \
                              ucs_empty_function \
    }; \
    UCT_COMPONENT_REGISTER(&uct_hlgproto_##_cmpt##_component); \
    UCT_TL_DEFINE(&uct_hlgproto_##_cmpt##_component, _tl, \
                  uct_hlgproto_query_devices, uct_hlgproto_iface_t, \
                  _prefix, uct_hlgproto_iface_config_table, \
                  uct_hlgproto_iface_config_t)

/* UCT_TL_DEFINE pastes and stringizes its _name: one more level of macro
 * expansion lets a macro (HLGPROTO_COPY_TL) name the transport */
#define UCT_HLGPROTO_COMPONENT_EXPAND(...) UCT_HLGPROTO_COMPONENT(__VA_ARGS__)

UCT_HLGPROTO_COMPONENT_EXPAND(gaudi_cpy, HLGPROTO_COPY_TL, "HLGPROTO_CPY_")
UCT_HLGPROTO_COMPONENT(gaudi_ipc, gaudi_ipc, "HLGPROTO_IPC_")

#ifdef HLGAUDI_PROTO_LONG_TL_NAME
/* 10 characters in a char[UCT_TL_NAME_MAX] (10): no terminating NUL */
UCT_TL_DEFINE(&uct_hlgproto_gaudi_cpy_component, gaudi_copy,
              uct_hlgproto_query_devices, uct_hlgproto_iface_t,
              "HLGPROTO_COPY_", uct_hlgproto_iface_config_table,
              uct_hlgproto_iface_config_t)
#endif

/* Called by the module loader (ucs_module_init) after dlopen() */
UCS_MODULE_INIT() {
    ucs_debug("hlgaudi proof module: loaded into UCX %s, memory type %d is "
              "'%s', UCT_TL_NAME_MAX %d", UCT_VERNO_STRING,
              UCS_MEMORY_TYPE_GAUDI,
              ucs_memory_type_names[UCS_MEMORY_TYPE_GAUDI], UCT_TL_NAME_MAX);
    return UCS_OK;
}
