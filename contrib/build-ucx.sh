#!/usr/bin/env bash
# Build (and install) UCX 1.13.1 with the gaudi module grafted in.
# Called by the top-level Makefile with the environment below; idempotent:
# every step is skipped when its result is already there, and UCX's own make
# rebuilds only what changed.
#
#   UCX_SRC       UCX source tree (fetched/unpacked here unless UCX_ORIGIN=dir)
#   UCX_ORIGIN    debian | tarball | dir
#   UCX_TARBALL   the tarball, for UCX_ORIGIN=tarball
#   PREFIX        install prefix
#   BUILD_DIR     scratch directory (fetched sources, logs)
#   UCX_CONFIGURE_FLAGS  extra flags for UCX's configure
#
# usage: build-ucx.sh build|install
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
action=${1:?usage: build-ucx.sh build|install}
: "${UCX_SRC:?}" "${UCX_ORIGIN:?}" "${PREFIX:?}" "${BUILD_DIR:?}"
jobs=${JOBS:-$(nproc)}
mkdir -p "$BUILD_DIR"

log() { echo "build-ucx: $*"; }

fetch() {
    [ -f "$UCX_SRC/configure.ac" ] && return 0
    case "$UCX_ORIGIN" in
    debian)
        "$here/contrib/fetch-ucx.sh" "$(dirname "$UCX_SRC")" ;;
    tarball)
        mkdir -p "$UCX_SRC"
        tar -xf "$UCX_TARBALL" -C "$UCX_SRC" --strip-components=1
        # upstream's orig tarball keeps debian/*.in under debian.upstream/
        if [ ! -d "$UCX_SRC/debian" ] && [ -d "$UCX_SRC/debian.upstream" ]; then
            cp -r "$UCX_SRC/debian.upstream" "$UCX_SRC/debian"
        fi ;;
    dir)
        echo "build-ucx: $UCX_SRC is not a UCX source tree" >&2; exit 1 ;;
    esac
}

configure_ucx() {
    local flags="--prefix=$PREFIX --without-verbs --without-rdmacm
                 --without-cuda --without-rocm --without-knem --without-xpmem
                 --without-java --without-go --disable-doxygen-doc --enable-mt
                 --enable-gtest --with-gaudi=yes $UCX_CONFIGURE_FLAGS"
    local stamp="$UCX_SRC/.ucx-gaudi-configured"
    flags=$(echo $flags)
    # UCX's Makefiles do not regenerate themselves: a change of the patch or
    # of any of our automake/m4 files means bootstrapping again
    if [ -f "$UCX_SRC/Makefile" ] && [ -f "$stamp" ] &&
       [ "$(cat "$stamp")" = "$flags" ] &&
       [ -f "$UCX_SRC/src/uct/gaudi/Makefile" ] &&
       [ -f "$UCX_SRC/src/tools/perf/gaudi/Makefile" ] &&
       [ "$UCX_SRC/config.status" -nt "$here/contrib/ucx-1.13.1-gaudi.patch" ] &&
       [ -z "$(find "$here/src" \( -name '*.am' -o -name '*.m4' \) \
                    -newer "$UCX_SRC/config.status")" ]; then
        return 0
    fi
    log "bootstrapping and configuring UCX (log: $BUILD_DIR/ucx-configure.log)"
    (cd "$UCX_SRC" && ./autogen.sh && ./configure $flags) \
        > "$BUILD_DIR/ucx-configure.log" 2>&1 ||
        { tail -n 30 "$BUILD_DIR/ucx-configure.log"; exit 1; }
    echo "$flags" > "$stamp"
}

build_ucx() {
    local log="$BUILD_DIR/ucx-build.log" dir
    local gtest_cxxflags="-g -O2 -Wno-error=use-after-free
                          -Wno-error=maybe-uninitialized"

    log "building UCX + gaudi and UCX's gtest (log: $log)"
    : > "$log"
    # UCX's configure empties CXXFLAGS, and gcc 12 flags use-after-free and
    # maybe-uninitialized in 1.13.1's own gtest sources (ucm/malloc_hook.cc):
    # build every directory but test/gtest as UCX does, then test/gtest with
    # those two kept as warnings. Never override CXXFLAGS for the whole tree:
    # src/tools/perf/lib appends its own flags to it.
    for dir in $(make -s -C "$UCX_SRC" -f Makefile -f - print-subdirs \
                     <<< 'print-subdirs: ; @echo $(SUBDIRS)'); do
        [ "$dir" = test/gtest ] && continue
        make -C "$UCX_SRC/$dir" -j"$jobs" >> "$log" 2>&1 ||
            { grep -E 'error|Error' "$log" | tail -n 30; exit 1; }
    done
    make -C "$UCX_SRC/test/gtest" -j"$jobs" CXXFLAGS="$(echo $gtest_cxxflags)" \
        >> "$log" 2>&1 ||
        { grep -E 'error|Error' "$log" | tail -n 30; exit 1; }
    make -C "$UCX_SRC" -j"$jobs" >> "$log" 2>&1 ||
        { grep -E 'error|Error' "$log" | tail -n 30; exit 1; }
}

case "$action" in
build)
    fetch
    "$here/contrib/graft-ucx.sh" "$UCX_SRC"
    configure_ucx
    build_ucx ;;
install)
    log "installing UCX + gaudi into $PREFIX"
    make -C "$UCX_SRC" install > "$BUILD_DIR/ucx-install.log" 2>&1 ||
        { tail -n 30 "$BUILD_DIR/ucx-install.log"; exit 1; } ;;
*)
    echo "usage: build-ucx.sh build|install" >&2; exit 1 ;;
esac
