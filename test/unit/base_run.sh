#!/usr/bin/env bash
#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# Build and run the driver-library unit tests on their own, against the built
# UCX (headers of the grafted source tree, libraries of the install prefix)
# and the emulator compiled from src/uct/gaudi/emu. Extra arguments go to
# the test binary (e.g. --gtest_filter='base_dma.*').
#
#   UCX_SRC    UCX source tree with the gaudi graft (build/src/ucx-1.13.1)
#   PREFIX     UCX install prefix (build/install)
#   BUILD_DIR  where to build (/tmp/ucx-gaudi-base-tests)
#
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
UCX_SRC=${UCX_SRC:-$top/build/src/ucx-1.13.1}
PREFIX=${PREFIX:-$top/build/install}
out=${BUILD_DIR:-/tmp/ucx-gaudi-base-tests}
gaudi=$top/src/uct/gaudi

warn="-Wall -Werror -Wno-missing-field-initializers -Wno-unused-parameter
      -Wno-sign-compare -Wno-pointer-sign -Wshadow"
cflags="-std=gnu99 -O2 -g -fPIC $warn -Werror=declaration-after-statement
        -Wnested-externs"
cppflags="-DHAVE_CONFIG_H -I$UCX_SRC -I$UCX_SRC/src -I$top/src"

mkdir -p "$out/obj"

# the emulator, next to the test binary where the driver library looks first
gcc -std=gnu99 -O2 -g -fPIC -shared -fvisibility=hidden -Wall \
    -I"$top/src" -o "$out/libgaudi_emu.so.0" "$gaudi"/emu/*.c -lpthread

objs=()
for src in "$gaudi"/base/*.c; do
    obj="$out/obj/$(basename "${src%.c}").o"
    gcc $cflags $cppflags -c "$src" -o "$obj"
    objs+=("$obj")
done

g++ -std=gnu++14 -O1 -g -Wall -Werror -Wno-unused-parameter $cppflags \
    -o "$out/base_unit" "$here/main.cc" "$here"/base_*.cc "${objs[@]}" \
    -L"$PREFIX/lib" -lucs -lucm -lcjson -lnuma -ldl -lgtest -lpthread \
    -Wl,-rpath,"$PREFIX/lib" -Wl,-rpath,"$out"

cd "$out"
exec ./base_unit "$@"
