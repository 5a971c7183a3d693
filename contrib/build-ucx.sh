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
# usage: build-ucx.sh build|install|gtest
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
action=${1:?usage: build-ucx.sh build|install|gtest}
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
    # verbs and rdmacm as Debian's libucx0 has them (rdma-core): on a node
    # with an RDMA NIC, UCP gets rc/ud/dc (and mlx5's accelerated variants)
    # between nodes, and Gaudi memory is staged through host memory over
    # them; without a device the ib module loads and finds nothing
    local flags="--prefix=$PREFIX --with-verbs --with-rdmacm
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
    local t0=$SECONDS
    log "bootstrapping and configuring UCX (about 1-2 min; log: $BUILD_DIR/ucx-configure.log)"
    (cd "$UCX_SRC" && ./autogen.sh && ./configure $flags) \
        > "$BUILD_DIR/ucx-configure.log" 2>&1 ||
        { tail -n 30 "$BUILD_DIR/ucx-configure.log"; exit 1; }
    check_rdma
    echo "$flags" > "$stamp"
    log "UCX configured in $((SECONDS - t0)) s"
}

# UCX's configure drops a transport it cannot build without failing: an
# explicit --without-verbs or --without-rdmacm in UCX_CONFIGURE_FLAGS is
# honoured, anything else that ends without them is an error
check_rdma() {
    local mod mods="" extra
    extra=" $(echo ${UCX_CONFIGURE_FLAGS:-}) "
    [[ $extra == *" --without-verbs "* ]] || mods=ib
    [[ $extra == *" --without-rdmacm "* ]] || mods="$mods rdmacm"
    for mod in $mods; do
        grep -q "^#define uct_MODULES .*:$mod[:\"]" "$UCX_SRC/config.h" ||
            { echo "build-ucx: UCX's configure did not enable its $mod" \
                   "module (rdma-core's libibverbs-dev and librdmacm-dev" \
                   "installed? see $BUILD_DIR/ucx-configure.log)" >&2
              exit 1; }
    done
}

# UCX's top-level SUBDIRS less its tests: the main job needs the libraries,
# the module and the tools. UCX's gtest (several minutes more) is built by
# the "gtest" action, for the test command only; test/apps (UCX's own
# sample and regression programs, iodemo among them) is used by neither.
ucx_subdirs() {
    make -s --no-print-directory -C "$UCX_SRC" -f Makefile -f - print-subdirs \
        <<< 'print-subdirs: ; @echo $(SUBDIRS)' | tr ' ' '\n' |
        grep -vxE 'test/gtest|test/apps'
}

# run_make LOG WHAT ARGS...: make with output to LOG, the error lines on failure
run_make() {
    local log=$1 what=$2
    shift 2
    make "$@" >> "$log" 2>&1 ||
        { echo "build-ucx: $what failed; the errors (whole log: $log):" >&2
          grep -E 'error|Error' "$log" | tail -n 30 >&2; exit 1; }
}

build_ucx() {
    local log="$BUILD_DIR/ucx-build.log" dir t0=$SECONDS

    log "building UCX + gaudi (2-4 min on 2 cores; log: $log)"
    : > "$log"
    for dir in $(ucx_subdirs); do
        run_make "$log" "make in $dir" -C "$UCX_SRC/$dir" -j"$jobs"
    done
    run_make "$log" "make of UCX's top level" -C "$UCX_SRC" -j"$jobs" all-am
    log "UCX + gaudi built in $((SECONDS - t0)) s"
}

install_ucx() {
    local log="$BUILD_DIR/ucx-install.log" dir

    log "installing UCX + gaudi into $PREFIX (log: $log)"
    : > "$log"
    for dir in $(ucx_subdirs); do
        run_make "$log" "make install in $dir" -C "$UCX_SRC/$dir" install
    done
    run_make "$log" "make install of UCX's top level" -C "$UCX_SRC" \
        install-exec-am install-data-am
}

build_gtest() {
    local log="$BUILD_DIR/ucx-gtest-build.log" t0=$SECONDS
    # UCX's configure empties CXXFLAGS, and gcc 12 flags use-after-free and
    # maybe-uninitialized in 1.13.1's own gtest sources (ucm/malloc_hook.cc):
    # test/gtest keeps those two as warnings. Never override CXXFLAGS for the
    # whole tree: src/tools/perf/lib appends its own flags to it.
    local gtest_cxxflags="-g -O2 -Wno-error=use-after-free
                          -Wno-error=maybe-uninitialized"

    [ -x "$UCX_SRC/test/gtest/gtest" ] ||
        log "building UCX's gtest (about 8 min on 2 cores; log: $log)"
    : > "$log"
    run_make "$log" "make of UCX's gtest" -C "$UCX_SRC/test/gtest" -j"$jobs" \
        CXXFLAGS="$(echo $gtest_cxxflags)"
    log "UCX's gtest built in $((SECONDS - t0)) s"
}

case "$action" in
build)
    fetch
    "$here/contrib/graft-ucx.sh" "$UCX_SRC"
    configure_ucx
    build_ucx ;;
install)
    install_ucx ;;
gtest)
    build_gtest ;;
*)
    echo "usage: build-ucx.sh build|install|gtest" >&2; exit 1 ;;
esac
