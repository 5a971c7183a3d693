#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# ucx_perftest allocator for "-m gaudi". Needs nothing beyond the UCT gaudi
# module: gaudi_happy and the HAVE_GAUDI conditional come from
# src/uct/gaudi/configure.m4, which configure.ac reaches (through
# src/uct/configure.m4) before src/tools/perf/configure.m4.
#

AS_IF([test "x$gaudi_happy" = "xyes"],
      [ucx_perftest_modules="${ucx_perftest_modules}:gaudi"])

AC_CONFIG_FILES([src/tools/perf/gaudi/Makefile])
