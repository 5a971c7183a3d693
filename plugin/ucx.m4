#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# --with-ucx=DIR: build ucx-gaudi as an out-of-tree plugin of a UCX that
# loads external modules (UCX_PLUGIN_PATH, <libdir>/ucx; UCX >= 1.18), instead
# of grafting it into Debian's UCX 1.13.1 (the default build).
#
# DIR is a UCX source tree, configured and built, whose "make install" is the
# UCX the plugin will run in: the plugin includes UCX's internal headers
# (uct/base/*.h, ucs/debug/log.h, ...) and DIR/config.h, which are not
# installed, and links the installed -luct -lucs. contrib/build-ucx.sh
# 1.22.0 makes one: build/src/ucx-1.22.0, installed into build/install-1.22.
#
# What the plugin compiles against is decided here by feature checks on DIR's
# headers, one per API difference the sources have to follow (and two on
# UCP's sources, for what UCP expects of a copy transport); they go to
# plugin/ucx_gaudi_features.h as UCX_GAUDI_HAVE_* = 0 or 1, which the
# compatibility header of the sources (src/uct/gaudi/gaudi_ucx_compat.h)
# reads: no UCX version numbers in the sources. Without --with-ucx nothing
# is checked and the header is not used: the in-tree build is always the
# patched UCX 1.13.1 (contrib/graft-ucx.sh checks), whose values the
# compatibility header states itself.
#
# Sets: ucx_plugin (yes/no), UCX_PLUGIN_SRC, UCX_PLUGIN_PREFIX,
# UCX_PLUGIN_VERSION, UCX_PLUGIN_CONFIG (release, or checks: assertions or
# parameter checks on), UCX_PLUGIN_CFLAGS (the tree's BASE_CFLAGS, with which
# UCX compiles its modules), UCX_GAUDI_COPY_TL (the gaudi_cpy transport's
# name), AM_CONDITIONAL UCX_PLUGIN.
#

# UCX_GAUDI_FEATURE(NAME, DESCRIPTION, PROLOGUE, BODY)
# Compile BODY (after PROLOGUE) against the UCX tree; UCX_GAUDI_HAVE_NAME is 1
# when it compiles. Incompatible function pointer types are errors here:
# most checks assign one of our function shapes to a UCX ops field.
AC_DEFUN([UCX_GAUDI_FEATURE], [
    AS_IF([test "x$ucx_plugin" = "xyes"],
          [AC_MSG_CHECKING([UCX: $2])
           AC_COMPILE_IFELSE([AC_LANG_PROGRAM([$3], [$4])],
                             [UCX_GAUDI_HAVE_$1=1], [UCX_GAUDI_HAVE_$1=0])
           AS_IF([test "$UCX_GAUDI_HAVE_$1" = 1], [AC_MSG_RESULT([yes])],
                 [AC_MSG_RESULT([no])])],
          [UCX_GAUDI_HAVE_$1=0])
    AC_SUBST([UCX_GAUDI_HAVE_$1])
])

# UCX_GAUDI_UCP_SOURCE(NAME, DESCRIPTION, FILE, TEXT)
# For what UCP expects of a transport, which no header shows: whether FILE
# of the UCX tree (the plugin builds against the tree anyway) has TEXT (a
# grep pattern); UCX_GAUDI_HAVE_NAME is 1 if it does.
AC_DEFUN([UCX_GAUDI_UCP_SOURCE], [
    AS_IF([test "x$ucx_plugin" = "xyes"],
          [AC_MSG_CHECKING([UCX: $2])
           AS_IF([grep -q -e '$4' "$UCX_PLUGIN_SRC/$3" 2>/dev/null],
                 [UCX_GAUDI_HAVE_$1=1; AC_MSG_RESULT([yes])],
                 [UCX_GAUDI_HAVE_$1=0; AC_MSG_RESULT([no])])],
          [UCX_GAUDI_HAVE_$1=0])
    AC_SUBST([UCX_GAUDI_HAVE_$1])
])

m4_define([UCX_GAUDI_MD_H], [[
#include <uct/base/uct_md.h>
]])
m4_define([UCX_GAUDI_IFACE_H], [[
#include <uct/base/uct_iface.h>
]])

AC_DEFUN([UCX_GAUDI_WITH_UCX], [
AC_ARG_WITH([ucx],
    [AS_HELP_STRING([--with-ucx=DIR],
        [Build the out-of-tree plugin (libuct_hlgaudi.so.0) against this
         configured and built UCX source tree and the UCX installed from it
         (UCX >= 1.18, e.g. build/src/ucx-1.22.0 made by
         contrib/build-ucx.sh 1.22.0), instead of grafting the module into
         Debian's UCX 1.13.1])],
    [], [with_ucx=no])
AC_ARG_WITH([ucx-prefix],
    [AS_HELP_STRING([--with-ucx-prefix=DIR],
        [Where the UCX of --with-ucx is installed (default: the prefix that
         tree was configured with)])],
    [], [with_ucx_prefix=""])

ucx_plugin=no
AS_IF([test "x$with_ucx" != "xno"], [
    AS_IF([test "x$with_ucx" = "xyes"],
          [AC_MSG_ERROR([--with-ucx needs the UCX source tree: --with-ucx=DIR])])
    ucx_plugin=yes
    UCX_PLUGIN_SRC=$(cd "$with_ucx" 2>/dev/null && pwd) ||
        AC_MSG_ERROR([--with-ucx=$with_ucx: no such directory])
    AS_IF([test -f "$UCX_PLUGIN_SRC/src/uct/base/uct_iface.h"], [],
          [AC_MSG_ERROR([--with-ucx=$with_ucx is not a UCX source tree])])
    AS_IF([test -f "$UCX_PLUGIN_SRC/config.h" &&
           test -f "$UCX_PLUGIN_SRC/src/uct/api/version.h"], [],
          [AC_MSG_ERROR([--with-ucx=$with_ucx is not configured (no config.h):
                         run its configure (contrib/build-ucx.sh 1.22.0 does)])])
    AS_IF([grep -q 'uct_MODULES' "$UCX_PLUGIN_SRC/config.h" &&
           test -f "$UCX_PLUGIN_SRC/src/ucs/sys/module.c" &&
           grep -q 'plugin_path' "$UCX_PLUGIN_SRC/src/ucs/sys/module.c"], [],
          [AC_MSG_ERROR([the UCX in $with_ucx cannot load external modules
                         (no UCX_PLUGIN_PATH in src/ucs/sys/module.c); UCX
                         1.13.1 is built in-tree: configure without --with-ucx])])
    UCX_PLUGIN_VERSION=$(sed -n 's/^#define UCT_VERNO_STRING *"\(.*\)"/\1/p' \
                         "$UCX_PLUGIN_SRC/src/uct/api/version.h")

    dnl the prefix: given, or the one the tree was configured with
    AS_IF([test -n "$with_ucx_prefix"],
          [UCX_PLUGIN_PREFIX=$(cd "$with_ucx_prefix" 2>/dev/null && pwd)],
          [UCX_PLUGIN_PREFIX=$(sed -n 's/^prefix = //p' "$UCX_PLUGIN_SRC/Makefile")])
    AS_IF([test -n "$UCX_PLUGIN_PREFIX" &&
           test -x "$UCX_PLUGIN_PREFIX/bin/ucx_info" &&
           test -e "$UCX_PLUGIN_PREFIX/lib/libuct.so" &&
           test -e "$UCX_PLUGIN_PREFIX/lib/libucs.so"], [],
          [AC_MSG_ERROR([no UCX installed in '$UCX_PLUGIN_PREFIX' (bin/ucx_info,
                         lib/libuct.so, lib/libucs.so): build and install
                         $with_ucx first, or give --with-ucx-prefix])])

    dnl The ABI options of the installed UCX (ucx_info -b prints its config.h)
    dnl must be the tree's: ENABLE_STATS adds a field to uct_base_iface_t and
    dnl uct_base_ep_t, ENABLE_ASSERT one to ucs_async_context_t, the others
    dnl change inline code (log levels, mpool debug, parameter checks).
    AC_MSG_CHECKING([whether $UCX_PLUGIN_PREFIX was built from $UCX_PLUGIN_SRC's configuration])
    ucx_abi_keys='VERSION ENABLE_STATS ENABLE_MT ENABLE_DEBUG_DATA ENABLE_ASSERT ENABLE_PARAMS_CHECK HAVE_PROFILING UCS_MAX_LOG_LEVEL UCX_MODULE_FILE_SUFFIX'
    ucx_abi_diff=""
    ucx_installed_cfg=$("$UCX_PLUGIN_PREFIX/bin/ucx_info" -b 2>/dev/null) ||
        AC_MSG_ERROR([$UCX_PLUGIN_PREFIX/bin/ucx_info -b failed])
    for key in $ucx_abi_keys; do
        tree_val=$(sed -n "s/^#define $key  *//p" "$UCX_PLUGIN_SRC/config.h")
        inst_val=$(echo "$ucx_installed_cfg" | sed -n "s/^#define $key  *//p")
        AS_IF([test "x$tree_val" != "x$inst_val"],
              [ucx_abi_diff="$ucx_abi_diff $key(tree:${tree_val:-undefined},installed:${inst_val:-undefined})"])
    done
    AS_IF([test -z "$ucx_abi_diff"], [AC_MSG_RESULT([yes])],
          [AC_MSG_RESULT([no])
           AC_MSG_ERROR([the installed UCX differs from $with_ucx in:$ucx_abi_diff.
             Configure the tree as the installed UCX was
             ($UCX_PLUGIN_PREFIX/bin/ucx_info -b | grep UCX_CONFIGURE_FLAGS)])])

    dnl how the tree is configured, for the test output's build name: a
    dnl release configuration (contrib/configure-release of UCX: no
    dnl assertions, no parameter checks) or one with UCX's checks
    AS_IF([grep -q '^#define ENABLE_ASSERT 1' "$UCX_PLUGIN_SRC/config.h" ||
           grep -q '^#define ENABLE_PARAMS_CHECK 1' "$UCX_PLUGIN_SRC/config.h"],
          [UCX_PLUGIN_CONFIG=checks; UCX_PLUGIN_BUILD_SUFFIX=""],
          [UCX_PLUGIN_CONFIG=release; UCX_PLUGIN_BUILD_SUFFIX=-release])

    dnl the plugin compiles with the flags UCX compiles its own modules with
    UCX_PLUGIN_CFLAGS=$(sed -n 's/^BASE_CFLAGS = //p' \
                        "$UCX_PLUGIN_SRC/src/uct/Makefile" 2>/dev/null)
    AS_IF([test -n "$UCX_PLUGIN_CFLAGS"], [],
          [AC_MSG_ERROR([no BASE_CFLAGS in $with_ucx/src/uct/Makefile: is
                         the tree configured?])])
])
AC_SUBST([UCX_PLUGIN_SRC])
AC_SUBST([UCX_PLUGIN_PREFIX])
AC_SUBST([UCX_PLUGIN_VERSION])
AC_SUBST([UCX_PLUGIN_CONFIG])
AC_SUBST([UCX_PLUGIN_BUILD_SUFFIX])
AC_SUBST([UCX_PLUGIN_CFLAGS])
AM_CONDITIONAL([UCX_PLUGIN], [test "x$ucx_plugin" = "xyes"])

dnl ---- feature checks: each is one API difference the sources follow ----
save_CPPFLAGS="$CPPFLAGS"
save_CFLAGS="$CFLAGS"
AS_IF([test "x$ucx_plugin" = "xyes"],
      [CPPFLAGS="-DHAVE_CONFIG_H -I$UCX_PLUGIN_SRC -I$UCX_PLUGIN_SRC/src $CPPFLAGS"
       CFLAGS="$CFLAGS -Werror=incompatible-pointer-types -Werror=implicit-function-declaration"])
AC_LANG_PUSH([C])

UCX_GAUDI_FEATURE([MEMORY_TYPE_GAUDI], [UCS_MEMORY_TYPE_GAUDI],
    [#include <ucs/memory/memory_type.h>],
    [return UCS_MEMORY_TYPE_GAUDI;])
AS_IF([test "x$ucx_plugin" = "xyes" && test "$UCX_GAUDI_HAVE_MEMORY_TYPE_GAUDI" = 0],
      [AC_MSG_ERROR([the UCX in $with_ucx has no UCS_MEMORY_TYPE_GAUDI: UCP
                     would not know Gaudi memory])])

dnl memory domain
UCX_GAUDI_FEATURE([MD_QUERY_V2], [md query fills uct_md_attr_v2_t], UCX_GAUDI_MD_H
    [static ucs_status_t q(uct_md_h md, uct_md_attr_v2_t *a)
     { uct_md_base_md_query(a); return UCS_OK; }],
    [uct_md_ops_t ops = {.query = q}; (void)ops;])
UCX_GAUDI_FEATURE([MD_CACHE_MEM_TYPES], [UCP caches registrations of the memory types an MD lists (cache_mem_types)], UCX_GAUDI_MD_H,
    [uct_md_attr_v2_t a; a.cache_mem_types = 0; (void)a;])
UCX_GAUDI_FEATURE([MD_MEM_REG_PARAMS], [mem_reg takes uct_md_mem_reg_params_t], UCX_GAUDI_MD_H
    [static ucs_status_t r(uct_md_h md, void *a, size_t l,
                           const uct_md_mem_reg_params_t *p, uct_mem_h *m)
     { return UCS_OK; }],
    [uct_md_ops_t ops = {.mem_reg = r}; (void)ops;])
UCX_GAUDI_FEATURE([MD_MEM_QUERY_V2], [mem_query fills uct_md_mem_attr_v2_t], UCX_GAUDI_MD_H
    [static ucs_status_t q(uct_md_h md, const void *a, size_t l,
                           uct_md_mem_attr_v2_t *m) { return UCS_OK; }],
    [uct_md_ops_t ops = {.mem_query = q}; (void)ops;])
UCX_GAUDI_FEATURE([MD_DMABUF], [an MD provides and registers DMA-BUFs (dmabuf_mem_types, UCT_MD_MEM_ATTR_FIELD_DMABUF_FD)], UCX_GAUDI_MD_H,
    [uct_md_attr_v2_t a; uct_md_mem_attr_v2_t m;
     a.flags            = UCT_MD_FLAG_REG_DMABUF;
     a.dmabuf_mem_types = 0;
     m.field_mask       = UCT_MD_MEM_ATTR_FIELD_DMABUF_FD |
                          UCT_MD_MEM_ATTR_FIELD_DMABUF_OFFSET;
     m.dmabuf_fd        = UCT_DMABUF_FD_INVALID;
     m.dmabuf_offset    = 0;
     (void)a; (void)m;])
UCX_GAUDI_FEATURE([MD_MKEY_PACK_ADDRESS], [mkey_pack takes the address and length], UCX_GAUDI_MD_H
    [static ucs_status_t p(uct_md_h md, uct_mem_h h, void *a, size_t l,
                           const uct_md_mkey_pack_params_t *pp, void *b)
     { return UCS_OK; }],
    [uct_md_ops_t ops = {.mkey_pack = p}; (void)ops;])
UCX_GAUDI_FEATURE([MD_MEM_ALLOC_SYS_DEV], [mem_alloc takes a system device], UCX_GAUDI_MD_H
    [static ucs_status_t al(uct_md_h md, size_t *l, void **a,
                            ucs_memory_type_t t, ucs_sys_device_t d,
                            unsigned f, const char *n, uct_mem_h *m)
     { return UCS_OK; }],
    [uct_md_ops_t ops = {.mem_alloc = al}; (void)ops;])
UCX_GAUDI_FEATURE([MD_MEM_ATTACH], [uct_md_ops_t.mem_attach], UCX_GAUDI_MD_H,
    [uct_md_ops_t ops = {.mem_attach = NULL}; (void)ops;])
UCX_GAUDI_FEATURE([MD_MEM_ELEM_PACK], [uct_md_ops_t.mem_elem_pack], UCX_GAUDI_MD_H,
    [uct_md_ops_t ops = {.mem_elem_pack = NULL}; (void)ops;])
UCX_GAUDI_FEATURE([MD_IS_SOCKADDR_ACCESSIBLE], [uct_md_ops_t.is_sockaddr_accessible], UCX_GAUDI_MD_H,
    [uct_md_ops_t ops = {.is_sockaddr_accessible = NULL}; (void)ops;])

dnl component
UCX_GAUDI_FEATURE([RKEY_UNPACK_PARAMS], [rkey_unpack takes uct_rkey_unpack_params_t], UCX_GAUDI_MD_H
    [static ucs_status_t u(uct_component_t *c, const void *b,
                           const uct_rkey_unpack_params_t *p, uct_rkey_t *r,
                           void **h) { return UCS_OK; }],
    [uct_component_t c = {.rkey_unpack = u}; (void)c;])
UCX_GAUDI_FEATURE([RKEY_COMPARE], [uct_component_t.rkey_compare], UCX_GAUDI_MD_H,
    [uct_component_t c = {.rkey_compare = uct_base_rkey_compare}; (void)c;])

dnl interface
UCX_GAUDI_FEATURE([IFACE_QUERY_V2], [internal op iface_query_v2], UCX_GAUDI_IFACE_H,
    [uct_iface_internal_ops_t o = {.iface_query_v2 = uct_iface_base_query_v2}; (void)o;])
UCX_GAUDI_FEATURE([IFACE_IS_REACHABLE_V2], [internal op iface_is_reachable_v2], UCX_GAUDI_IFACE_H,
    [uct_iface_internal_ops_t o = {.iface_is_reachable_v2 = NULL}; (void)o;])
UCX_GAUDI_FEATURE([EP_IS_CONNECTED], [internal op ep_is_connected], UCX_GAUDI_IFACE_H,
    [uct_iface_internal_ops_t o = {.ep_is_connected = uct_base_ep_is_connected}; (void)o;])
UCX_GAUDI_FEATURE([EP_CONNECT_TO_EP_V2], [internal op ep_connect_to_ep_v2], UCX_GAUDI_IFACE_H,
    [uct_iface_internal_ops_t o = {.ep_connect_to_ep_v2 = NULL}; (void)o;])
UCX_GAUDI_FEATURE([EP_GET_DEVICE_EP], [internal op ep_get_device_ep], UCX_GAUDI_IFACE_H,
    [uct_iface_internal_ops_t o = {.ep_get_device_ep = NULL}; (void)o;])
UCX_GAUDI_FEATURE([EP_PUT_SGL_ZCOPY], [internal op ep_put_sgl_zcopy], UCX_GAUDI_IFACE_H,
    [uct_iface_internal_ops_t o = {.ep_put_sgl_zcopy = NULL}; (void)o;])
UCX_GAUDI_FEATURE([PERF_ATTR_PATH_BANDWIDTH], [uct_perf_attr_t.path_bandwidth], UCX_GAUDI_IFACE_H,
    [uct_perf_attr_t a; a.path_bandwidth.shared = 0; (void)a;])
UCX_GAUDI_FEATURE([PERF_ATTR_FLAGS], [uct_perf_attr_t.flags], UCX_GAUDI_IFACE_H,
    [uct_perf_attr_t a; a.flags = UCT_PERF_ATTR_FIELD_FLAGS; (void)a;])
UCX_GAUDI_FEATURE([LOCAL_IS_REACHABLE_PARAMS], [uct_iface_local_is_reachable() takes the reachability params], UCX_GAUDI_IFACE_H,
    [return uct_iface_local_is_reachable(NULL, UCS_SYS_NS_TYPE_NET,
                                          (const uct_iface_is_reachable_params_t*)NULL);])
UCX_GAUDI_FEATURE([KEEPALIVE_CHECK_PARAM_FLAGS], [UCT_EP_KEEPALIVE_CHECK_PARAM(flags) without comp], UCX_GAUDI_IFACE_H
    [static ucs_status_t k(unsigned flags)
     { UCT_EP_KEEPALIVE_CHECK_PARAM(flags); return UCS_OK; }],
    [return k(0);])

dnl UCS
UCX_GAUDI_FEATURE([MPOOL_PARAMS], [ucs_mpool_init(ucs_mpool_params_t)],
    [#include <ucs/datastruct/mpool.h>],
    [ucs_mpool_params_t p; ucs_mpool_params_reset(&p);
     return ucs_mpool_init(&p, (ucs_mpool_t*)NULL);])
UCX_GAUDI_FEATURE([UCS_RCACHE_CONFIG], [rcache configuration in UCS (ucs_rcache_config_t)],
    [#include <ucs/memory/rcache.h>],
    [ucs_rcache_config_t c; ucs_rcache_params_t p; ucs_rcache_set_params(&p, &c);
     return ucs_config_rcache_table@<:@0@:>@.name != NULL;])
UCX_GAUDI_FEATURE([RCACHE_GET_ALIGNMENT], [ucs_rcache_get() takes an alignment],
    [#include <ucs/memory/rcache.h>],
    [return ucs_rcache_get(NULL, NULL, 0, 0, 0, NULL, NULL);])
UCX_GAUDI_FEATURE([RCACHE_OPS_MERGE], [ucs_rcache_ops_t.merge],
    [#include <ucs/memory/rcache.h>],
    [ucs_rcache_ops_t o = {.merge = NULL}; (void)o;])
UCX_GAUDI_FEATURE([MEMTYPE_CACHE_MEM_FLAGS], [ucs_memtype_cache_update() takes memory flags],
    [#include <ucs/memory/memtype_cache.h>],
    [ucs_memtype_cache_update(NULL, 0, UCS_MEMORY_TYPE_HOST,
                              UCS_SYS_DEVICE_ID_UNKNOWN, 0);])
UCX_GAUDI_FEATURE([UCS_PTR_ARITH_H], [ucs_align_up() in ucs/sys/ptr_arith.h],
    [#include <ucs/sys/ptr_arith.h>],
    [return ucs_align_up(3, 4);])
UCX_GAUDI_FEATURE([TOPO_NAME_PRIORITY], [ucs_topo_sys_device_set_name() takes a priority],
    [#include <ucs/sys/topo/base/topo.h>],
    [return ucs_topo_sys_device_set_name(0, "", 0);])
UCX_GAUDI_FEATURE([CONFIG_DBL_AUTO], [UCS_CONFIG_DBL_AUTO (was UCS_CONFIG_BW_AUTO)],
    [#include <ucs/config/parser.h>],
    [double d = UCS_CONFIG_DBL_AUTO; return UCS_CONFIG_DBL_IS_AUTO(d);])
UCX_GAUDI_FEATURE([CONFIG_FILL_OPTS_ENTRY], [ucs_config_parser_fill_opts() takes a table entry],
    [#include <ucs/config/parser.h>],
    [return ucs_config_parser_fill_opts(NULL,
                (ucs_config_global_list_entry_t*)NULL, "", 0);])
UCX_GAUDI_FEATURE([CONFIG_SET_VALUE_PREFIX], [ucs_config_parser_set_value() takes a table prefix],
    [#include <ucs/config/parser.h>],
    [return ucs_config_parser_set_value(NULL, NULL, NULL, "", "");])

dnl ---- what UCP of that UCX expects of a memory-type copy transport ----
dnl Semantics no header shows: read from UCP's sources in the tree
dnl (UCX_GAUDI_UCP_SOURCE).
dnl protocols v2 by default: they stage memory-type copies with zero-copy
dnl RMA on the memtype endpoint, with no pending path for NO_RESOURCE
UCX_GAUDI_UCP_SOURCE([UCP_PROTO_V2_DEFAULT],
    [UCP protocols v2 are the default],
    [src/ucp/core/ucp_context.c], [{"PROTO_ENABLE", "y"])
dnl lanes kept per memory-type pair only if estimate_perf accepts the pair
UCX_GAUDI_UCP_SOURCE([UCP_PERF_MEM_TYPE_CHECK],
    [UCP asks estimate_perf whether a lane moves a memory-type pair],
    [src/ucp/proto/proto_common.c], [ucp_proto_common_find_lanes_check_mem_type])

dnl a transport name is a char[UCT_TL_NAME_MAX] including its NUL
AS_IF([test "x$ucx_plugin" = "xyes"],
      [AC_MSG_CHECKING([UCX: UCT_TL_NAME_MAX])
       AC_COMPUTE_INT([ucx_tl_name_max], [UCT_TL_NAME_MAX],
                      [#include <uct/api/uct_def.h>],
                      [AC_MSG_ERROR([cannot compute UCT_TL_NAME_MAX])])
       AC_MSG_RESULT([$ucx_tl_name_max])],
      [dnl in-tree: the 1.13.1 core patch raises UCT_TL_NAME_MAX from 10 to 16
       ucx_tl_name_max=16])
AS_IF([test "$ucx_tl_name_max" -gt 10],
      [UCX_GAUDI_COPY_TL=gaudi_copy], [UCX_GAUDI_COPY_TL=gaudi_cpy])
AC_SUBST([UCX_GAUDI_COPY_TL])

dnl the DMA-BUF provider test (test/dmabuf) needs DMA-BUF registration
AM_CONDITIONAL([UCX_GAUDI_DMABUF_TESTS],
               [test "x$ucx_plugin" = "xyes" && test "$UCX_GAUDI_HAVE_MD_DMABUF" = 1])

AC_LANG_POP([C])
CPPFLAGS="$save_CPPFLAGS"
CFLAGS="$save_CFLAGS"

AC_CONFIG_FILES([plugin/ucx_gaudi_features.h])
])
