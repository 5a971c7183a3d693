#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# Intel Gaudi transports (gaudi_copy, gaudi_ipc). The module talks to the
# habanalabs kernel uAPI directly (no libhlthunk) through its own ABI header
# (seam/gaudi_abi.h), so it needs only the generic Linux uAPI headers
# (linux/ioctl.h, linux/types.h), libcjson (GAUDI_MAPPING_TABLE) and libnuma.
# A system habanalabs header (<misc/habanalabs.h> up to Linux 6.2,
# <drm/habanalabs_accel.h> from 6.3) is optional: when present, the build
# cross-checks our ABI against it. The module builds on machines without a
# Gaudi: devices are discovered at run time (or emulated with
# UCX_GAUDI_EMU_DEVICES=N). configure fails only if --with-gaudi=yes was
# asked for and a dependency is missing; otherwise it says why the
# transports are not built.
#

AC_ARG_WITH([gaudi],
    [AS_HELP_STRING([--with-gaudi],
        [Build the Intel Gaudi transports (default is autodetect).])],
    [], [with_gaudi=guess])

gaudi_happy=no
gaudi_missing=""
AS_IF([test "x$with_gaudi" != "xno"],
    [gaudi_happy=yes
     save_LIBS="$LIBS"
     AC_CHECK_HEADERS([linux/ioctl.h linux/types.h], [],
                      [gaudi_happy=no
                       gaudi_missing="$gaudi_missing $ac_header (Linux uAPI headers, package linux-libc-dev)"])
     AC_CHECK_HEADER([cjson/cJSON.h], [],
                     [gaudi_happy=no
                      gaudi_missing="$gaudi_missing cjson/cJSON.h (GAUDI_MAPPING_TABLE parser, package libcjson-dev)"])
     AC_CHECK_LIB([cjson], [cJSON_Parse], [:],
                  [gaudi_happy=no
                   gaudi_missing="$gaudi_missing libcjson (package libcjson-dev)"])
     AC_CHECK_HEADER([numa.h], [],
                     [gaudi_happy=no
                      gaudi_missing="$gaudi_missing numa.h (device locality, package libnuma-dev)"])
     AC_CHECK_LIB([numa], [numa_available], [:],
                  [gaudi_happy=no
                   gaudi_missing="$gaudi_missing libnuma (package libnuma-dev)"])
     LIBS="$save_LIBS"
     AS_IF([test "x$gaudi_happy" != "xyes"],
           [AS_IF([test "x$with_gaudi" = "xyes"],
                  [AC_MSG_ERROR([Gaudi support requested, but missing:$gaudi_missing])],
                  [AC_MSG_WARN([Gaudi transports (gaudi_copy, gaudi_ipc) will NOT be built; missing:$gaudi_missing])])])
    ],
    [AC_MSG_NOTICE([Gaudi transports (gaudi_copy, gaudi_ipc) will NOT be built: disabled by --without-gaudi])])

AS_IF([test "x$gaudi_happy" = "xyes"],
    [uct_modules="${uct_modules}:gaudi"
     # optional: only to cross-check our own ABI header at build time
     AC_CHECK_HEADERS([misc/habanalabs.h drm/habanalabs_accel.h], [break])
     AS_IF([test "x$ac_cv_header_misc_habanalabs_h" = "xyes"],
           [gaudi_uapi_check="checked against <misc/habanalabs.h>"],
           [test "x$ac_cv_header_drm_habanalabs_accel_h" = "xyes"],
           [gaudi_uapi_check="checked against <drm/habanalabs_accel.h>"],
           [gaudi_uapi_check="no system habanalabs header to check against"])
     AC_MSG_NOTICE([Gaudi transports (gaudi_copy, gaudi_ipc) will be built; built-in habanalabs uAPI, $gaudi_uapi_check])
     AC_SUBST([GAUDI_LIBS], ["-lcjson -lnuma -ldl"])
     AC_DEFINE([HAVE_GAUDI], [1], [Enable Intel Gaudi support])])
AM_CONDITIONAL([HAVE_GAUDI], [test "x$gaudi_happy" = "xyes"])

AC_CONFIG_FILES([src/uct/gaudi/Makefile])
