# UCX 1.13.1 with the gaudi module grafted in: the in-tree build. Called by
# the top-level Makefile with the environment below (build-ucx.sh 1.13.1
# build|install|gtest); "build" fetches, grafts, configures and builds,
# "install" and "gtest" work on the tree "build" left.
#
#   UCX_SRC       UCX source tree (fetched/unpacked here unless UCX_ORIGIN=dir)
#   UCX_ORIGIN    debian | tarball | dir
#   UCX_TARBALL   the tarball, for UCX_ORIGIN=tarball
#   PREFIX        install prefix
#   BUILD_DIR     scratch directory (fetched sources, logs)
#   UCX_CONFIGURE_FLAGS  extra flags for UCX's configure

# shellcheck shell=bash disable=SC2034,SC2154  # shared with build-ucx.sh
: "${UCX_SRC:?}" "${UCX_ORIGIN:?}" "${PREFIX:?}" "${BUILD_DIR:?}"
ucx_src=$UCX_SRC
ucx_logs=$BUILD_DIR/ucx
ucx_name="UCX $ucx_version + gaudi"
ucx_skip=""
ucx_build_time="2-4 min on 2 cores"
ucx_gtest_time="about 8 min on 2 cores"

ucx_fetch() {
    [ -f "$ucx_src/configure.ac" ] && return 0
    case "$UCX_ORIGIN" in
    debian)
        "$here/contrib/fetch-ucx.sh" "$(dirname "$ucx_src")" ;;
    tarball)
        mkdir -p "$ucx_src"
        tar -xf "$UCX_TARBALL" -C "$ucx_src" --strip-components=1
        # upstream's orig tarball keeps debian/*.in under debian.upstream/
        if [ ! -d "$ucx_src/debian" ] && [ -d "$ucx_src/debian.upstream" ]; then
            cp -r "$ucx_src/debian.upstream" "$ucx_src/debian"
        fi ;;
    dir)
        die "$ucx_src is not a UCX source tree" ;;
    esac
}

# verbs and rdmacm as Debian's libucx0 has them (rdma-core): on a node with
# an RDMA NIC, UCP gets rc/ud/dc (and mlx5's accelerated variants) between
# nodes, and Gaudi memory is staged through host memory over them; without
# a device the ib module loads and finds nothing
ucx_flags() {
    # shellcheck disable=SC2086  # one word per flag
    echo --prefix="$PREFIX" --with-verbs --with-rdmacm \
         --without-cuda --without-rocm --without-knem --without-xpmem \
         --without-java --without-go --disable-doxygen-doc --enable-mt \
         --enable-gtest --with-gaudi=yes $UCX_CONFIGURE_FLAGS
}

# UCX's Makefiles do not regenerate themselves: a change of the patch or of
# any of our automake/m4 files means bootstrapping again
ucx_configured() {
    [ -f "$ucx_src/src/uct/gaudi/Makefile" ] &&
    [ -f "$ucx_src/src/tools/perf/gaudi/Makefile" ] &&
    [ "$ucx_src/config.status" -nt "$here/contrib/ucx-1.13.1-gaudi.patch" ] &&
    [ -z "$(find "$here/src" \( -name '*.am' -o -name '*.m4' \) \
                 -newer "$ucx_src/config.status")" ]
}

# UCX's configure drops a transport it cannot build without failing: an
# explicit --without-verbs or --without-rdmacm in UCX_CONFIGURE_FLAGS is
# honoured, anything else that ends without them is an error
ucx_check_configure() {
    local mod mods="" extra
    # shellcheck disable=SC2086,SC2116  # the flags one space apart
    extra=" $(echo $UCX_CONFIGURE_FLAGS) "
    [[ $extra == *" --without-verbs "* ]] || mods=ib
    [[ $extra == *" --without-rdmacm "* ]] || mods="$mods rdmacm"
    for mod in $mods; do
        grep -q "^#define uct_MODULES .*:${mod}[:\"]" "$ucx_src/config.h" ||
            die "UCX's configure did not enable its $mod module" \
                "(rdma-core's libibverbs-dev and librdmacm-dev installed?" \
                "see $ucx_logs-configure.log)"
    done
}

ucx_main() {
    case "${1:-}" in
    build)
        ucx_fetch
        "$here/contrib/graft-ucx.sh" "$ucx_src"
        ucx_configure
        ucx_build ;;
    install)
        ucx_install ;;
    gtest)
        # UCX's configure empties CXXFLAGS, and gcc 12 flags use-after-free
        # and maybe-uninitialized in 1.13.1's own gtest sources
        # (ucm/malloc_hook.cc): test/gtest keeps those two as warnings.
        # Never override CXXFLAGS for the whole tree: src/tools/perf/lib
        # appends its own flags to it.
        local flags="-g -O2 -Wno-error=use-after-free"
        flags+=" -Wno-error=maybe-uninitialized"
        ucx_gtest CXXFLAGS="$flags" ;;
    *)
        die "usage: build-ucx.sh $ucx_version build|install|gtest" ;;
    esac
}
