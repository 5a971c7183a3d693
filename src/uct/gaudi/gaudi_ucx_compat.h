/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_UCX_COMPAT_H_
#define UCT_GAUDI_UCX_COMPAT_H_

/*
 * The one place that knows which UCX the module is built against.
 *
 * The module builds two ways from the same sources: grafted into Debian's
 * UCX 1.13.1 (with our core patch), or as an out-of-tree plugin of a newer
 * UCX (configure --with-ucx, plugin/ucx.m4). The internal UCT/UCS API the
 * module implements changed between the two; configure's feature checks on
 * the plugin's UCX tree say which shape each difference takes there
 * (plugin/ucx_gaudi_features.h, UCX_GAUDI_HAVE_* 0 or 1), and this header
 * turns them into one vocabulary for the sources: types, extra arguments of
 * the ops, the ops table members only one side has, and small helpers. No
 * other file tests a UCX version or a feature; the out-of-line parts that
 * need the base iface class are in base/gaudi_ucx_compat.c.
 *
 * Every layer may include this header (drv/ too: it is below them all).
 */

#ifdef UCX_GAUDI_PLUGIN
/* the plugin build: what configure found in the UCX tree */
#  include <ucx_gaudi_features.h>
#else
/* in-tree: the patched UCX 1.13.1 (contrib/graft-ucx.sh checks the
 * version), which has none of the newer shapes */
#  define UCX_GAUDI_COPY_TL                         gaudi_copy
#  define UCX_GAUDI_HAVE_MD_QUERY_V2                0
#  define UCX_GAUDI_HAVE_MD_CACHE_MEM_TYPES         0
#  define UCX_GAUDI_HAVE_MD_MEM_REG_PARAMS          0
#  define UCX_GAUDI_HAVE_MD_MEM_QUERY_V2            0
#  define UCX_GAUDI_HAVE_MD_DMABUF                  0
#  define UCX_GAUDI_HAVE_MD_MKEY_PACK_ADDRESS       0
#  define UCX_GAUDI_HAVE_MD_MEM_ALLOC_SYS_DEV       0
#  define UCX_GAUDI_HAVE_MD_MEM_ATTACH              0
#  define UCX_GAUDI_HAVE_MD_MEM_ELEM_PACK           0
#  define UCX_GAUDI_HAVE_MD_IS_SOCKADDR_ACCESSIBLE  1
#  define UCX_GAUDI_HAVE_RKEY_UNPACK_PARAMS         0
#  define UCX_GAUDI_HAVE_RKEY_COMPARE               0
#  define UCX_GAUDI_HAVE_IFACE_QUERY_V2             0
#  define UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2      0
#  define UCX_GAUDI_HAVE_EP_IS_CONNECTED            0
#  define UCX_GAUDI_HAVE_EP_CONNECT_TO_EP_V2        0
#  define UCX_GAUDI_HAVE_EP_GET_DEVICE_EP           0
#  define UCX_GAUDI_HAVE_EP_PUT_SGL_ZCOPY           0
#  define UCX_GAUDI_HAVE_PERF_ATTR_PATH_BANDWIDTH   0
#  define UCX_GAUDI_HAVE_PERF_ATTR_FLAGS            0
#  define UCX_GAUDI_HAVE_LOCAL_IS_REACHABLE_PARAMS  0
#  define UCX_GAUDI_HAVE_KEEPALIVE_CHECK_PARAM_FLAGS 0
#  define UCX_GAUDI_HAVE_MPOOL_PARAMS               0
#  define UCX_GAUDI_HAVE_UCS_RCACHE_CONFIG          0
#  define UCX_GAUDI_HAVE_RCACHE_GET_ALIGNMENT       0
#  define UCX_GAUDI_HAVE_RCACHE_OPS_MERGE           0
#  define UCX_GAUDI_HAVE_MEMTYPE_CACHE_MEM_FLAGS    0
#  define UCX_GAUDI_HAVE_UCS_PTR_ARITH_H            0
#  define UCX_GAUDI_HAVE_TOPO_NAME_PRIORITY         0
#  define UCX_GAUDI_HAVE_CONFIG_DBL_AUTO            0
#  define UCX_GAUDI_HAVE_CONFIG_FILL_OPTS_ENTRY     0
#  define UCX_GAUDI_HAVE_CONFIG_SET_VALUE_PREFIX    0
#  define UCX_GAUDI_HAVE_UCP_PROTO_V2_DEFAULT       0
#  define UCX_GAUDI_HAVE_UCP_PERF_MEM_TYPE_CHECK    0
#endif

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/config/parser.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/memory/memtype_cache.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/math.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/time/time.h>
#include <string.h>
#if UCX_GAUDI_HAVE_UCS_PTR_ARITH_H
/* ucs_align_up() and the like, which 1.13.1 has in ucs/sys/math.h */
#  include <ucs/sys/ptr_arith.h>
#endif
#if UCX_GAUDI_HAVE_MD_CACHE_MEM_TYPES
#  include <ucm/event/event.h>
#endif

BEGIN_C_DECLS


/* ---- names ---------------------------------------------------------- */

/* The copy transport: "gaudi_copy" where UCT_TL_NAME_MAX holds it (our
 * 1.13.1 core patch raised it to 16), "gaudi_cpy" where it is UCX's 10
 * (with the NUL), like cuda_cpy/rocm_cpy. UCT_TL_DEFINE wants a token;
 * this indirection expands UCX_GAUDI_COPY_TL before UCT_TL_DEFINE pastes
 * and stringizes it. */
#define UCT_GAUDI_TL_DEFINE(...)    UCT_TL_DEFINE(__VA_ARGS__)
#define UCT_GAUDI_COPY_TL_NAME      UCS_PP_MAKE_STRING(UCX_GAUDI_COPY_TL)

/* "gaudi" in UCX_TLS: both our transports in the patched 1.13.1 (our core
 * patch's alias); in newer UCX, upstream's gaudi_gdr. NULL: no alias of
 * ours (it ends the name lists it is the last entry of) */
#ifdef UCX_GAUDI_PLUGIN
#  define UCT_GAUDI_TLS_ALIAS       NULL
#else
#  define UCT_GAUDI_TLS_ALIAS       "gaudi"
#endif


/* ---- what UCP of this UCX expects of a memory-type copy transport ---- */

/* UCP's protocols (v2) select a lane for a memory-type pair only if
 * estimate_perf accepts the pair, and a zero-copy lane of an MD that needs
 * no memory handle only if the MD can access the local memory type: the
 * copy MD lists host memory, and host-to-host is refused (or gaudi_copy
 * would be a candidate for host-only copies). Where UCP does not ask,
 * estimate_perf must not fail (1.13.1 logs such failures as errors). */
#define UCT_GAUDI_PERF_CHECKS_MEM_TYPES UCX_GAUDI_HAVE_UCP_PERF_MEM_TYPE_CHECK

/* Protocols v2 (the default where UCX_GAUDI_HAVE_UCP_PROTO_V2_DEFAULT)
 * stage memory-type copies with uct_ep_put/get_zcopy on the memtype
 * endpoint and have no pending path for them: a full DMA queue must not
 * return UCS_ERR_NO_RESOURCE there, the copy transport queues the operation
 * in its iface's backlog (base/gaudi_iface.c); 1.13.1's protocols v1 retry
 * from the pending queue. (Receive events, which both UCPs want of a lane
 * of a worker that may sleep, are announced in every build:
 * uct_gaudi_iface_query.) */
#define UCT_GAUDI_COPY_QUEUES_WHEN_FULL UCX_GAUDI_HAVE_UCP_PROTO_V2_DEFAULT


/* ---- UCM's relocation patching --------------------------------------- */

/* How UCM hooks a function in every loaded object (and every object loaded
 * later): ucm_reloc_modify(), which libucm.so exports in every UCX we build
 * against, from a header no UCX installs (ucm/util/reloc.h). Its argument
 * has the same layout in 1.13.1 and 1.22: the symbol, our function, the
 * previous value (UCM fills it in), UCM's list link and a list of objects
 * to leave alone. UCM keeps the structure in its list for ever. */
typedef struct uct_gaudi_reloc_patch {
    const char      *symbol;
    void            *value;
    void            *prev_value;
    ucs_list_link_t list;
    char            **blacklist;
} uct_gaudi_reloc_patch_t;

ucs_status_t ucm_reloc_modify(uct_gaudi_reloc_patch_t *patch);


/* ---- memory domain ---------------------------------------------------- */

/* What an MD says about itself, whatever the query's shape */
typedef struct uct_gaudi_md_caps {
    uint64_t          flags;
    uint64_t          reg_mem_types;
    uint64_t          alloc_mem_types;
    uint64_t          access_mem_types;
    uint64_t          detect_mem_types;
    uint64_t          cache_mem_types;    /* newer UCX only */
    uint64_t          dmabuf_mem_types;   /* newer UCX only */
    size_t            max_alloc;
    size_t            max_reg;
    size_t            rkey_packed_size;
    ucs_linear_func_t reg_cost;
} uct_gaudi_md_caps_t;

#if UCX_GAUDI_HAVE_MD_QUERY_V2
typedef uct_md_attr_v2_t uct_gaudi_md_attr_t;

static inline void
uct_gaudi_md_attr_set(uct_gaudi_md_attr_t *attr,
                      const uct_gaudi_md_caps_t *caps)
{
    /* UCT asserts that every field it copies was set: start from the
     * defaults of every field (local_cpus: all) */
    uct_md_base_md_query(attr);
    attr->flags            = caps->flags;
    attr->reg_mem_types    = caps->reg_mem_types;
    attr->alloc_mem_types  = caps->alloc_mem_types;
    attr->access_mem_types = caps->access_mem_types;
    attr->detect_mem_types = caps->detect_mem_types;
    attr->cache_mem_types  = caps->cache_mem_types;
    attr->dmabuf_mem_types = caps->dmabuf_mem_types;
    attr->max_alloc        = caps->max_alloc;
    attr->max_reg          = caps->max_reg;
    attr->rkey_packed_size = caps->rkey_packed_size;
    attr->reg_cost         = caps->reg_cost;
}
#else
typedef uct_md_attr_t uct_gaudi_md_attr_t;

static inline void
uct_gaudi_md_attr_set(uct_gaudi_md_attr_t *attr,
                      const uct_gaudi_md_caps_t *caps)
{
    attr->cap.flags            = caps->flags;
    attr->cap.reg_mem_types    = caps->reg_mem_types;
    attr->cap.alloc_mem_types  = caps->alloc_mem_types;
    attr->cap.access_mem_types = caps->access_mem_types;
    attr->cap.detect_mem_types = caps->detect_mem_types;
    attr->cap.max_alloc        = caps->max_alloc;
    attr->cap.max_reg          = caps->max_reg;
    attr->rkey_packed_size     = caps->rkey_packed_size;
    attr->reg_cost             = caps->reg_cost;
    /* UCP weighs devices by the sys_dev distance, not by local_cpus */
    memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
}
#endif

#if UCX_GAUDI_HAVE_MD_MEM_QUERY_V2
/* same field names and field bits as the old one */
typedef uct_md_mem_attr_v2_t uct_gaudi_mem_attr_t;
#else
typedef uct_md_mem_attr_t uct_gaudi_mem_attr_t;
#endif

/* DMA-BUFs between MDs: gaudi_cpy provides one of Gaudi memory (mem_query
 * with UCT_MD_MEM_ATTR_FIELD_DMABUF_FD/_OFFSET), which UCP hands to every MD
 * that registers DMA-BUFs (UCT_MD_FLAG_REG_DMABUF: InfiniBand's
 * ibv_reg_dmabuf_mr). 1.13.1 has neither side. */
#define UCT_GAUDI_MD_DMABUF UCX_GAUDI_HAVE_MD_DMABUF

/* mem_reg(md, address, length, UCT_GAUDI_MEM_REG_ARG(reg), memh_p): the
 * registration flags are UCT_GAUDI_MEM_REG_FLAGS(reg) */
#if UCX_GAUDI_HAVE_MD_MEM_REG_PARAMS
#  define UCT_GAUDI_MEM_REG_ARG(_p)   const uct_md_mem_reg_params_t *_p
#  define UCT_GAUDI_MEM_REG_FLAGS(_p) \
          UCT_MD_MEM_REG_FIELD_VALUE(_p, flags, FIELD_FLAGS, 0)
#else
#  define UCT_GAUDI_MEM_REG_ARG(_p)   unsigned _p
#  define UCT_GAUDI_MEM_REG_FLAGS(_p) (_p)
#endif

/* Arguments only the newer ops have, each with its trailing comma: written
 * in place in the op's parameter list */
#if UCX_GAUDI_HAVE_MD_MKEY_PACK_ADDRESS
#  define UCT_GAUDI_MKEY_PACK_ADDRESS_ARGS void *address, size_t length,
#else
#  define UCT_GAUDI_MKEY_PACK_ADDRESS_ARGS
#endif

#if UCX_GAUDI_HAVE_MD_MEM_ALLOC_SYS_DEV
#  define UCT_GAUDI_MEM_ALLOC_SYS_DEV_ARG ucs_sys_device_t sys_dev,
#else
#  define UCT_GAUDI_MEM_ALLOC_SYS_DEV_ARG
#endif

#if UCX_GAUDI_HAVE_RKEY_UNPACK_PARAMS
#  define UCT_GAUDI_RKEY_UNPACK_PARAMS_ARG \
          const uct_rkey_unpack_params_t *unpack_params,
#else
#  define UCT_GAUDI_RKEY_UNPACK_PARAMS_ARG
#endif

/* The uct_md_ops_t members only one side has; a newer UCX calls them
 * without checking for NULL */
#if UCX_GAUDI_HAVE_MD_MEM_ATTACH
#  define _UCT_GAUDI_MD_OP_MEM_ATTACH \
          .mem_attach = (uct_md_mem_attach_func_t) \
                        ucs_empty_function_return_unsupported,
#else
#  define _UCT_GAUDI_MD_OP_MEM_ATTACH
#endif
#if UCX_GAUDI_HAVE_MD_MEM_ELEM_PACK
#  define _UCT_GAUDI_MD_OP_MEM_ELEM_PACK \
          .mem_elem_pack = (uct_md_mem_elem_pack_func_t) \
                           ucs_empty_function_return_unsupported,
#else
#  define _UCT_GAUDI_MD_OP_MEM_ELEM_PACK
#endif
#if UCX_GAUDI_HAVE_MD_IS_SOCKADDR_ACCESSIBLE
#  define _UCT_GAUDI_MD_OP_SOCKADDR \
          .is_sockaddr_accessible = ucs_empty_function_return_zero_int,
#else
#  define _UCT_GAUDI_MD_OP_SOCKADDR
#endif
#define UCT_GAUDI_MD_OPS_EXTRA \
        _UCT_GAUDI_MD_OP_MEM_ATTACH \
        _UCT_GAUDI_MD_OP_MEM_ELEM_PACK \
        _UCT_GAUDI_MD_OP_SOCKADDR

/* The uct_component_t members only the newer UCX has (uct_rkey_compare
 * calls it unchecked) */
#if UCX_GAUDI_HAVE_RKEY_COMPARE
#  define UCT_GAUDI_COMPONENT_EXTRA .rkey_compare = uct_base_rkey_compare,
#else
#  define UCT_GAUDI_COMPONENT_EXTRA
#endif


/* ---- interface -------------------------------------------------------- */

/* Where a reachability check says why a peer is not reachable: the info
 * string of the newer is_reachable_v2 (NULL where UCP asks none); nowhere
 * in 1.13.1, whose is_reachable has no such string */
#if UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2
typedef const uct_iface_is_reachable_params_t *uct_gaudi_reach_info_t;
#  define uct_gaudi_reach_fail(_info, ...) \
          do { \
              if ((_info) != NULL) { \
                  uct_iface_fill_info_str_buf(_info, __VA_ARGS__); \
              } \
          } while (0)
#else
typedef const void *uct_gaudi_reach_info_t;
#  define uct_gaudi_reach_fail(_info, ...) do { (void)(_info); } while (0)
#endif

#if UCX_GAUDI_HAVE_LOCAL_IS_REACHABLE_PARAMS
#  define uct_gaudi_local_is_reachable(_addr, _ns, _info) \
          uct_iface_local_is_reachable(_addr, _ns, _info)
#else
#  define uct_gaudi_local_is_reachable(_addr, _ns, _info) \
          uct_iface_local_is_reachable(_addr, _ns)
#endif

#if UCX_GAUDI_HAVE_KEEPALIVE_CHECK_PARAM_FLAGS
#  define UCT_GAUDI_EP_KEEPALIVE_CHECK_PARAM(_flags, _comp) \
          UCT_EP_KEEPALIVE_CHECK_PARAM(_flags)
#else
#  define UCT_GAUDI_EP_KEEPALIVE_CHECK_PARAM(_flags, _comp) \
          UCT_EP_KEEPALIVE_CHECK_PARAM(_flags, _comp)
#endif

/* uct_iface_ops_t.iface_is_reachable: where UCX has is_reachable_v2, UCT's
 * base turns the old call into the new one, which the base class answers
 * (base/gaudi_ucx_compat.c, through the transport's iface_reachable); else
 * the base class answers the old call (base/gaudi_iface.c) */
#if UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2
#  define UCT_GAUDI_IFACE_IS_REACHABLE uct_base_iface_is_reachable

int uct_gaudi_iface_is_reachable_v2(
        const uct_iface_h tl_iface,
        const uct_iface_is_reachable_params_t *params);
#else
#  define UCT_GAUDI_IFACE_IS_REACHABLE uct_gaudi_iface_is_reachable
#endif

#if UCX_GAUDI_HAVE_EP_IS_CONNECTED
/* the base check, then the transport's ep_is_peer */
int uct_gaudi_ep_is_connected(const uct_ep_h tl_ep,
                              const uct_ep_is_connected_params_t *params);
#endif

/* The uct_iface_internal_ops_t members only the newer UCX has. UCP calls
 * them without checking for NULL. */
#if UCX_GAUDI_HAVE_IFACE_QUERY_V2
#  define _UCT_GAUDI_IFACE_OP_QUERY_V2 \
          .iface_query_v2 = uct_iface_base_query_v2,
#else
#  define _UCT_GAUDI_IFACE_OP_QUERY_V2
#endif
#if UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2
#  define _UCT_GAUDI_IFACE_OP_REACHABLE_V2 \
          .iface_is_reachable_v2 = uct_gaudi_iface_is_reachable_v2,
#else
#  define _UCT_GAUDI_IFACE_OP_REACHABLE_V2
#endif
#if UCX_GAUDI_HAVE_EP_IS_CONNECTED
#  define _UCT_GAUDI_IFACE_OP_IS_CONNECTED \
          .ep_is_connected = uct_gaudi_ep_is_connected,
#else
#  define _UCT_GAUDI_IFACE_OP_IS_CONNECTED
#endif
#if UCX_GAUDI_HAVE_EP_CONNECT_TO_EP_V2
#  define _UCT_GAUDI_IFACE_OP_CONNECT_TO_EP_V2 \
          .ep_connect_to_ep_v2 = (uct_ep_connect_to_ep_v2_func_t) \
                                 ucs_empty_function_return_unsupported,
#else
#  define _UCT_GAUDI_IFACE_OP_CONNECT_TO_EP_V2
#endif
#if UCX_GAUDI_HAVE_EP_GET_DEVICE_EP
#  define _UCT_GAUDI_IFACE_OP_GET_DEVICE_EP \
          .ep_get_device_ep = (uct_ep_get_device_ep_func_t) \
                              ucs_empty_function_return_unsupported,
#else
#  define _UCT_GAUDI_IFACE_OP_GET_DEVICE_EP
#endif
#if UCX_GAUDI_HAVE_EP_PUT_SGL_ZCOPY
#  define _UCT_GAUDI_IFACE_OP_PUT_SGL_ZCOPY \
          .ep_put_sgl_zcopy = (uct_ep_put_sgl_zcopy_func_t) \
                              ucs_empty_function_return_unsupported,
#else
#  define _UCT_GAUDI_IFACE_OP_PUT_SGL_ZCOPY
#endif
#define UCT_GAUDI_IFACE_INTERNAL_OPS_EXTRA \
        _UCT_GAUDI_IFACE_OP_QUERY_V2 \
        _UCT_GAUDI_IFACE_OP_REACHABLE_V2 \
        _UCT_GAUDI_IFACE_OP_IS_CONNECTED \
        _UCT_GAUDI_IFACE_OP_CONNECT_TO_EP_V2 \
        _UCT_GAUDI_IFACE_OP_GET_DEVICE_EP \
        _UCT_GAUDI_IFACE_OP_PUT_SGL_ZCOPY

/* The fields of uct_perf_attr_t only the newer UCX has: UCP asks for them
 * (proto_common.c, on a struct it did not initialize: select.c) */
#if UCX_GAUDI_HAVE_PERF_ATTR_PATH_BANDWIDTH
#  define _uct_gaudi_perf_set_path_bandwidth(_attr, _bw) \
          do { \
              if ((_attr)->field_mask & UCT_PERF_ATTR_FIELD_PATH_BANDWIDTH) { \
                  (_attr)->path_bandwidth = (_bw); \
              } \
          } while (0)
#else
#  define _uct_gaudi_perf_set_path_bandwidth(_attr, _bw) do { } while (0)
#endif
#if UCX_GAUDI_HAVE_PERF_ATTR_FLAGS
#  define _uct_gaudi_perf_set_flags(_attr) \
          do { \
              if ((_attr)->field_mask & UCT_PERF_ATTR_FIELD_FLAGS) { \
                  (_attr)->flags = 0; \
              } \
          } while (0)
#else
#  define _uct_gaudi_perf_set_flags(_attr) do { } while (0)
#endif
#define uct_gaudi_perf_attr_set_extra(_attr, _bw) \
        do { \
            _uct_gaudi_perf_set_path_bandwidth(_attr, _bw); \
            _uct_gaudi_perf_set_flags(_attr); \
        } while (0)


/* ---- UCS -------------------------------------------------------------- */

static inline ucs_status_t
uct_gaudi_mpool_init(ucs_mpool_t *mp, size_t elem_size, size_t alignment,
                     unsigned elems_per_chunk, unsigned max_elems,
                     ucs_mpool_ops_t *ops, const char *name)
{
#if UCX_GAUDI_HAVE_MPOOL_PARAMS
    ucs_mpool_params_t params;

    ucs_mpool_params_reset(&params);
    params.elem_size       = elem_size;
    params.alignment       = alignment;
    params.elems_per_chunk = elems_per_chunk;
    params.max_elems       = max_elems;
    params.ops             = ops;
    params.name            = name;
    return ucs_mpool_init(&params, mp);
#else
    return ucs_mpool_init(mp, 0, elem_size, 0, alignment, elems_per_chunk,
                          max_elems, ops, name);
#endif
}

/* The registration cache's knobs (RCACHE_*): UCT's table in 1.13.1, UCS's
 * in newer UCX, which has no RCACHE_ADDR_ALIGN (an alignment is given per
 * lookup instead). The defaults string is the table entry's. */
#if UCX_GAUDI_HAVE_UCS_RCACHE_CONFIG
typedef ucs_rcache_config_t uct_gaudi_rcache_config_t;
#  define UCT_GAUDI_RCACHE_CONFIG_TABLE    ucs_config_rcache_table
#  define UCT_GAUDI_RCACHE_CONFIG_DEFAULTS ""
#else
typedef uct_md_rcache_config_t uct_gaudi_rcache_config_t;
#  define UCT_GAUDI_RCACHE_CONFIG_TABLE    uct_md_config_rcache_table
#  define UCT_GAUDI_RCACHE_CONFIG_DEFAULTS "RCACHE_ADDR_ALIGN=4096"
#endif

/* Cache parameters from the knobs, regions aligned to @a alignment */
static inline void
uct_gaudi_rcache_set_params(ucs_rcache_params_t *params,
                            const uct_gaudi_rcache_config_t *config,
                            size_t alignment)
{
#if UCX_GAUDI_HAVE_UCS_RCACHE_CONFIG
    ucs_rcache_set_params(params, config);
#else
    uct_md_set_rcache_params(params, config);
    params->max_alignment = alignment;
#endif
}

/* RCACHE_ADDR_ALIGN, where UCX has that knob; the page size (the
 * alignment the cache is asked for) where it has not */
#if UCX_GAUDI_HAVE_UCS_RCACHE_CONFIG
#  define UCT_GAUDI_RCACHE_CONFIG_ALIGNMENT(_config) ucs_get_page_size()
#else
#  define UCT_GAUDI_RCACHE_CONFIG_ALIGNMENT(_config) ((_config)->alignment)
#endif

/* Seconds a lookup costs (RCACHE_OVERHEAD; "auto" as UCT 1.13.1 on x86) */
static inline double
uct_gaudi_rcache_overhead(const uct_gaudi_rcache_config_t *config)
{
#if UCX_GAUDI_HAVE_UCS_RCACHE_CONFIG
    return ucs_time_units_to_sec(config->overhead, 180e-9);
#else
    return uct_md_rcache_overhead(config);
#endif
}

static inline ucs_status_t
uct_gaudi_rcache_get(ucs_rcache_t *rcache, void *address, size_t length,
                     size_t alignment, int prot, void *arg,
                     ucs_rcache_region_t **region_p)
{
#if UCX_GAUDI_HAVE_RCACHE_GET_ALIGNMENT
    return ucs_rcache_get(rcache, address, length, alignment, prot, arg,
                          region_p);
#else
    /* the alignment is the cache's (uct_gaudi_rcache_set_params) */
    return ucs_rcache_get(rcache, address, length, prot, arg, region_p);
#endif
}

/* The rcache calls merge unchecked when two regions merge */
#if UCX_GAUDI_HAVE_RCACHE_OPS_MERGE
#  define UCT_GAUDI_RCACHE_OPS_EXTRA \
          .merge = (void (*)(void*, ucs_rcache_t*, void*, \
                             ucs_rcache_region_t*))ucs_empty_function,
#else
#  define UCT_GAUDI_RCACHE_OPS_EXTRA
#endif

/* Gaudi memory in UCS's memory-type cache: registrable (by MDs that take
 * Gaudi memory), as UCT's mem_query presets for a detecting MD's answer */
#if UCX_GAUDI_HAVE_MEMTYPE_CACHE_MEM_FLAGS
#  define uct_gaudi_memtype_cache_update(_addr, _length, _sys_dev) \
          ucs_memtype_cache_update(_addr, _length, UCS_MEMORY_TYPE_GAUDI, \
                                   _sys_dev, UCS_MEM_FLAG_REGISTRABLE)
#else
#  define uct_gaudi_memtype_cache_update(_addr, _length, _sys_dev) \
          ucs_memtype_cache_update(_addr, _length, UCS_MEMORY_TYPE_GAUDI, \
                                   _sys_dev)
#endif

/* Where UCP caches the registrations of Gaudi memory (gaudi_ipc's: it must
 * list Gaudi memory in cache_mem_types, UCP's protocols register only
 * through its cache), the cache must learn that a Gaudi allocation is gone
 * before its address range is handed out again, as CUDA's memory hooks tell
 * it: a memory-type free event, which UCP's cache (and UCS's memory-type
 * cache) listen to. 1.13.1's UCP does not cache Gaudi registrations. */
#if UCX_GAUDI_HAVE_MD_CACHE_MEM_TYPES
#  define UCT_GAUDI_UCP_CACHES_GAUDI_REGS 1

static inline void uct_gaudi_ucm_mem_type_free(void *address, size_t length)
{
    ucm_event_t event;

    memset(&event, 0, sizeof(event));
    event.mem_type.address  = address;
    event.mem_type.size     = length;
    event.mem_type.mem_type = UCS_MEMORY_TYPE_GAUDI;
    event.mem_type.sys_dev  = UCS_SYS_DEVICE_ID_UNKNOWN;
    ucm_event_dispatch(UCM_EVENT_MEM_TYPE_FREE, &event);
}
#else
#  define UCT_GAUDI_UCP_CACHES_GAUDI_REGS 0
#  define uct_gaudi_ucm_mem_type_free(_address, _length) do { } while (0)
#endif

/* Name a system device. Priority 5 where names have one: upstream's
 * gaudi_gdr module names the same device with 10, and wins when both are
 * loaded. */
#if UCX_GAUDI_HAVE_TOPO_NAME_PRIORITY
#  define uct_gaudi_topo_set_name(_sys_dev, _name) \
          ucs_topo_sys_device_set_name(_sys_dev, _name, 5)
#else
#  define uct_gaudi_topo_set_name(_sys_dev, _name) \
          ucs_topo_sys_device_set_name(_sys_dev, _name)
#endif

/* Fill @a _opts from the environment through a registered table's entry
 * (UCS_CONFIG_REGISTER_TABLE's _config_entry) */
#if UCX_GAUDI_HAVE_CONFIG_FILL_OPTS_ENTRY
#  define uct_gaudi_config_fill(_opts, _entry, _env_prefix, _ignore) \
          ucs_config_parser_fill_opts(_opts, _entry, _env_prefix, _ignore)
#else
#  define uct_gaudi_config_fill(_opts, _entry, _env_prefix, _ignore) \
          ucs_config_parser_fill_opts(_opts, (_entry)->table, _env_prefix, \
                                      (_entry)->prefix, _ignore)
#endif

/* Set one knob of @a _opts by its name in @a _fields (no table prefix) */
#if UCX_GAUDI_HAVE_CONFIG_SET_VALUE_PREFIX
#  define uct_gaudi_config_set_value(_opts, _fields, _name, _value) \
          ucs_config_parser_set_value(_opts, _fields, NULL, _name, _value)
#else
#  define uct_gaudi_config_set_value(_opts, _fields, _name, _value) \
          ucs_config_parser_set_value(_opts, _fields, _name, _value)
#endif

/* A bandwidth knob's "auto" (the same value, renamed) */
#if UCX_GAUDI_HAVE_CONFIG_DBL_AUTO
#  define UCT_GAUDI_CONFIG_BW_IS_AUTO(_value) UCS_CONFIG_DBL_IS_AUTO(_value)
#else
#  define UCT_GAUDI_CONFIG_BW_IS_AUTO(_value) UCS_CONFIG_BW_IS_AUTO(_value)
#endif

END_C_DECLS

#endif
