#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# Intel Gaudi transports (gaudi_copy, gaudi_ipc). The module talks to the
# habanalabs kernel uAPI directly (no libhlthunk), so it needs only the uAPI
# header from linux-libc-dev, libcjson (GAUDI_MAPPING_TABLE) and libnuma.
# It builds on machines without a Gaudi: devices are discovered at run time
# (or emulated with UCX_GAUDI_EMU_DEVICES=N). Never fails configure unless
# --with-gaudi=yes was asked for and a dependency is missing.
#

AC_ARG_WITH([gaudi],
    [AS_HELP_STRING([--with-gaudi],
        [Build the Intel Gaudi transports (default is autodetect).])],
    [], [with_gaudi=guess])

gaudi_happy=no
AS_IF([test "x$with_gaudi" != "xno"],
    [gaudi_happy=yes
     save_LIBS="$LIBS"
     AC_CHECK_HEADER([misc/habanalabs.h], [],
                     [gaudi_happy=no; gaudi_missing="misc/habanalabs.h"])
     AC_CHECK_HEADER([cjson/cJSON.h], [],
                     [gaudi_happy=no; gaudi_missing="cjson/cJSON.h"])
     AC_CHECK_LIB([cjson], [cJSON_Parse], [:],
                  [gaudi_happy=no; gaudi_missing="libcjson"])
     AC_CHECK_HEADER([numa.h], [],
                     [gaudi_happy=no; gaudi_missing="numa.h"])
     AC_CHECK_LIB([numa], [numa_available], [:],
                  [gaudi_happy=no; gaudi_missing="libnuma"])
     LIBS="$save_LIBS"
     AS_IF([test "x$gaudi_happy" != "xyes"],
           [AS_IF([test "x$with_gaudi" = "xyes"],
                  [AC_MSG_ERROR([Gaudi support requested but $gaudi_missing not found])],
                  [AC_MSG_NOTICE([Gaudi transports disabled: $gaudi_missing not found])])])
    ])

AS_IF([test "x$gaudi_happy" = "xyes"],
    [uct_modules="${uct_modules}:gaudi"
     AC_SUBST([GAUDI_LIBS], ["-lcjson -lnuma -ldl"])
     AC_DEFINE([HAVE_GAUDI], [1], [Enable Intel Gaudi support])])
AM_CONDITIONAL([HAVE_GAUDI], [test "x$gaudi_happy" = "xyes"])

AC_CONFIG_FILES([src/uct/gaudi/Makefile])
