#!/usr/bin/env bash
# Build and install an unmodified UCX 1.22.0 from the vendored source, into
# its own prefix: the UCX that ucx-gaudi's out-of-tree plugin build (issue
# 14) compiles against (the configured source tree: UCX's internal headers
# and config.h) and links with (the installed -luct -lucs).
#
# Nothing of ours is grafted into this tree and no core patch is applied.
# Upstream's own Gaudi module (src/uct/gaudi, component gaudi_gdr, which
# needs SCAL/Synapse) is configured out (--without-gaudi), so no
# libuct_gaudi.so is installed in this prefix.
#
# Two configurations of the same source, each in a tree and prefix of its
# own (UCX122_CONFIG):
#   debug    UCX's defaults (assertions and parameter checks on): the test
#            build, which catches our misuse of UCT/UCP
#   release  what contrib/configure-release-mt in UCX's tree gives and what
#            distributions and pip wheels (NIXL's) ship: no assertions, no
#            parameter checks, no trace logging, multi-threaded
#
# Idempotent like contrib/build-ucx.sh: the checksum is verified on every
# run (a few ms); unpacking, bootstrap + configure, build and install are
# each skipped when their result is already there and nothing changed.
#
#   UCX122_TARBALL  the UCX 1.22.0 source archive; unset: the vendored one
#                   (UCX122_VENDOR_DIR, default ../shared/vendor beside this
#                   repository) when it is there, else a download (below)
#   UCX122_SHA256   the archive's expected sha256 (default: the vendored
#                   archive's)
#   UCX122_GIT_URL  where the download comes from (default UCX's repository
#                   on GitHub): its tag v1.22.0 must be commit UCX122_COMMIT
#   UCX122_CONFIG   debug (default) or release
#   UCX122_SRC      where to unpack it (default build/src/ucx-1.22.0,
#                   release: build/src/ucx-1.22.0-release)
#   PREFIX          install prefix (default build/install-1.22,
#                   release: build/install-1.22-release)
#   BUILD_DIR       scratch directory for the logs (default build)
#   UCX_CONFIGURE_FLAGS  extra flags for UCX's configure
#   JOBS            make -j (default nproc)
#
# usage: build-ucx122.sh [source|build|install|gtest]   (default, and "all":
#        install, which builds first; source: find and verify the source
#        archive only, print its path)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
action=${1:-all}
version=1.22.0
BUILD_DIR=${BUILD_DIR:-$here/build}
UCX122_VENDOR_DIR=${UCX122_VENDOR_DIR:-$here/../shared/vendor}
UCX122_GIT_URL=${UCX122_GIT_URL:-https://github.com/openucx/ucx.git}
# the release's commit: what the vendored archive was made from
UCX122_COMMIT=${UCX122_COMMIT:-8a6b06fb880accbb933a79cda893883872c68d9d}
UCX122_CONFIG=${UCX122_CONFIG:-debug}
case "$UCX122_CONFIG" in
debug)   suffix="" ;;
release) suffix="-release" ;;
*)       echo "build-ucx122: UCX122_CONFIG=$UCX122_CONFIG: debug or release" >&2
         exit 2 ;;
esac
UCX122_SRC=${UCX122_SRC:-$BUILD_DIR/src/ucx-$version$suffix}
PREFIX=${PREFIX:-$BUILD_DIR/install-1.22$suffix}
logp=$BUILD_DIR/ucx122$suffix
UCX_CONFIGURE_FLAGS=${UCX_CONFIGURE_FLAGS:-}
jobs=${JOBS:-$(nproc)}
mkdir -p "$BUILD_DIR"

log() { echo "build-ucx122: $*"; }
die() { echo "build-ucx122: $*" >&2; exit 1; }

# no_source WHY: the plugin build cannot have its UCX; say what to do
no_source() {
    die "$*. UCX $version's source is needed for the plugin build: set" \
        "UCX122_TARBALL to UCX's v$version source archive (a release" \
        "tarball, or 'git archive --prefix=ucx-$version/ v$version' of UCX's" \
        "repository; its sha256 in UCX122_SHA256), or let this script" \
        "download it (UCX122_GIT_URL), or test the in-tree build only:" \
        "UCX_GAUDI_TEST_BUILDS=in-tree contrib/test.sh"
}

# download: UCX's tag v1.22.0 by git, accepted only if it is the release's
# commit (the commit id covers every file of the tree), packed as the
# vendored archive was; the archive's sha256 is recorded beside it, so that
# later runs check it as they check a given archive
download() {
    local archive="$BUILD_DIR/src/ucx-$version.git.tar" tmp commit
    if [ -f "$archive" ] && [ -f "$archive.sha256" ]; then
        UCX122_TARBALL=$archive UCX122_SHA256=$(cat "$archive.sha256")
        return 0
    fi
    log "no UCX $version source archive here: fetching tag v$version of" \
        "$UCX122_GIT_URL (git; a minute)"
    mkdir -p "$BUILD_DIR/src"
    tmp=$(mktemp -d "$BUILD_DIR/src/ucx-$version.git.XXXXXX")
    if ! git -c advice.detachedHead=false clone -q --depth 1 \
             --branch "v$version" "$UCX122_GIT_URL" "$tmp" \
             > "$logp-download.log" 2>&1; then
        rm -rf "$tmp"
        no_source "fetching tag v$version of $UCX122_GIT_URL failed" \
                  "($(tail -n 1 "$logp-download.log"))"
    fi
    commit=$(git -C "$tmp" rev-parse HEAD)
    if [ "$commit" != "$UCX122_COMMIT" ]; then
        rm -rf "$tmp"
        die "tag v$version of $UCX122_GIT_URL is commit $commit, not UCX" \
            "$version's $UCX122_COMMIT; not using it"
    fi
    git -C "$tmp" archive --prefix="ucx-$version/" -o "$archive.tmp" HEAD
    rm -rf "$tmp"
    sha256sum "$archive.tmp" | cut -d' ' -f1 > "$archive.sha256"
    mv "$archive.tmp" "$archive"
    log "UCX $version downloaded: commit $commit verified ($archive)"
    UCX122_TARBALL=$archive UCX122_SHA256=$(cat "$archive.sha256")
}

# Where the source comes from: UCX122_TARBALL when set, else the vendored
# archive when there, else a download. The archive is verified on every
# run, also when the tree is already unpacked: the stamp records which
# archive the tree came from.
verify() {
    local vendored="$UCX122_VENDOR_DIR/ucx-$version.tar.xz" sum
    if [ -n "${UCX122_TARBALL:-}" ]; then
        [ -f "$UCX122_TARBALL" ] ||
            no_source "UCX122_TARBALL=$UCX122_TARBALL: no such file"
    elif [ -f "$vendored" ]; then
        UCX122_TARBALL=$vendored
    else
        download
    fi
    UCX122_SHA256=${UCX122_SHA256:-dbdeddc772a2747c06b9a9d9247a9e573dbcdd8554b7b2d7adfeae8b080e003a}
    sum=$(sha256sum "$UCX122_TARBALL" | cut -d' ' -f1)
    [ "$sum" = "$UCX122_SHA256" ] ||
        die "$UCX122_TARBALL: sha256 $sum, expected $UCX122_SHA256; not using it"
    log "$(basename "$UCX122_TARBALL"): sha256 verified"
}

unpack() {
    local stamp="$UCX122_SRC/.ucx-gaudi-unpacked"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$UCX122_SHA256" ]; then
        return 0
    fi
    [ ! -e "$UCX122_SRC" ] ||
        die "$UCX122_SRC exists but was not unpacked from this tarball; remove it"
    log "unpacking into $UCX122_SRC"
    mkdir -p "$UCX122_SRC"
    tar -xf "$UCX122_TARBALL" -C "$UCX122_SRC" --strip-components=1
    grep -q '^define(\[ucx_ver_minor\], 22)' "$UCX122_SRC/configure.ac" ||
        die "$UCX122_SRC is not a UCX 1.22 source tree"
    echo "$UCX122_SHA256" > "$stamp"
}

# Equivalent to contrib/build-ucx.sh's 1.13.1 flags, less our --with-gaudi
# (1.13.1's grafted module) and plus what 1.22 added: upstream's gaudi_gdr
# module (--without-gaudi), Level Zero (--without-ze), the transports that
# need verbs or CUDA (efa, gdrcopy, mad), uGNI.
# release: contrib/configure-release-mt's flags (UCX's gtest is not built
# for it)
configure_flags() {
    local config="--enable-gtest"
    [ "$UCX122_CONFIG" = debug ] ||
        config="--disable-logging --disable-debug --disable-assertions
                --disable-params-check"
    echo --prefix="$PREFIX" --without-verbs --without-rdmacm \
         --without-cuda --without-rocm --without-knem --without-xpmem \
         --without-ze --without-gaudi --without-efa --without-gdrcopy \
         --without-mad --without-ugni \
         --without-java --without-go --disable-doxygen-doc --enable-mt \
         $config $UCX_CONFIGURE_FLAGS
}

configure_ucx() {
    local flags stamp="$UCX122_SRC/.ucx-gaudi-configured" t0=$SECONDS
    flags=$(configure_flags)
    if [ -f "$UCX122_SRC/Makefile" ] && [ -f "$stamp" ] &&
       [ "$(cat "$stamp")" = "$flags" ]; then
        return 0
    fi
    log "bootstrapping and configuring UCX $version ($UCX122_CONFIG; about 1-2 min;" \
        "log: $logp-configure.log)"
    # autogen.sh's "git submodule update" fails outside a git checkout and
    # says so; the submodule (external/gpunetio) is for GPU-initiated
    # networking over mlx5 + CUDA only, configured out here.
    (cd "$UCX122_SRC" && ./autogen.sh && ./configure $flags) \
        > "$logp-configure.log" 2>&1 ||
        { tail -n 30 "$logp-configure.log"; exit 1; }
    # Upstream's gaudi module must not be built, whatever configure found
    grep -q '^#define HAVE_GAUDI 1' "$UCX122_SRC/config.h" &&
        die "UCX's configure enabled its own gaudi module; see the configure log"
    echo "$flags" > "$stamp"
    rm -f "$UCX122_SRC/.ucx-gaudi-built"
    log "UCX $version configured in $((SECONDS - t0)) s"
}

# UCX's top-level SUBDIRS less its tests (as in contrib/build-ucx.sh):
# gtest is the "gtest" action's; test/apps and test/mpi are used by nobody.
ucx_subdirs() {
    make -s --no-print-directory -C "$UCX122_SRC" -f Makefile -f - print-subdirs \
        <<< 'print-subdirs: ; @echo $(SUBDIRS)' | tr ' ' '\n' |
        grep -vxE 'test/gtest|test/apps|test/mpi'
}

# run_make LOG WHAT ARGS...: make with output to LOG, the error lines on failure
run_make() {
    local log=$1 what=$2
    shift 2
    make "$@" >> "$log" 2>&1 ||
        { echo "build-ucx122: $what failed; the errors (whole log: $log):" >&2
          grep -E 'error|Error' "$log" | tail -n 30 >&2; exit 1; }
}

# newer_than STAMP: is any file of the tree (sources or outputs) newer than
# STAMP? Nobody edits the vendored tree, so after a build nothing is.
newer_than() {
    [ -n "$(find "$UCX122_SRC/src" "$UCX122_SRC/config.h" -newer "$1" \
                 -type f -print -quit)" ]
}

build_ucx() {
    local log="$logp-build.log" stamp="$UCX122_SRC/.ucx-gaudi-built"
    local dir t0=$SECONDS
    if [ -f "$stamp" ] && ! newer_than "$stamp"; then
        log "reusing the UCX $version build in $UCX122_SRC"
        return 0
    fi
    log "building UCX $version ($UCX122_CONFIG; about 6 min on 2 idle cores;" \
        "log: $log)"
    : > "$log"
    for dir in $(ucx_subdirs); do
        run_make "$log" "make in $dir" -C "$UCX122_SRC/$dir" -j"$jobs"
    done
    run_make "$log" "make of UCX's top level" -C "$UCX122_SRC" -j"$jobs" all-am
    touch "$stamp"
    log "UCX $version built in $((SECONDS - t0)) s"
}

install_ucx() {
    local log="$logp-install.log" dir t0=$SECONDS
    local stamp="$PREFIX/.ucx-gaudi-installed"
    if [ -f "$stamp" ] && [ -x "$PREFIX/bin/ucx_info" ] &&
       [ "$(cat "$stamp")" = "$UCX122_SRC" ] && ! newer_than "$stamp"; then
        log "reusing the UCX $version install in $PREFIX"
        return 0
    fi
    log "installing UCX $version into $PREFIX (log: $log)"
    : > "$log"
    for dir in $(ucx_subdirs); do
        run_make "$log" "make install in $dir" -C "$UCX122_SRC/$dir" install
    done
    run_make "$log" "make install of UCX's top level" -C "$UCX122_SRC" \
        install-exec-am install-data-am
    [ ! -e "$PREFIX/lib/ucx/libuct_gaudi.so.0" ] ||
        die "upstream's libuct_gaudi.so.0 was installed into $PREFIX/lib/ucx"
    echo "$UCX122_SRC" > "$stamp"
    # libtool relinks the modules into .libs while installing: the build
    # is still up to date
    touch "$UCX122_SRC/.ucx-gaudi-built"
    log "UCX $version installed in $((SECONDS - t0)) s"
}

build_gtest() {
    local log="$logp-gtest-build.log" t0=$SECONDS
    [ -x "$UCX122_SRC/test/gtest/gtest" ] ||
        log "building UCX $version's gtest (10+ min on 2 cores; log: $log)"
    : > "$log"
    run_make "$log" "make of UCX's gtest" -C "$UCX122_SRC/test/gtest" -j"$jobs"
    log "UCX $version's gtest built in $((SECONDS - t0)) s"
}

t_all=$SECONDS
case "$action" in
source)  verify; echo "$UCX122_TARBALL"; exit 0 ;;
build)   verify; unpack; configure_ucx; build_ucx ;;
install|all)
         verify; unpack; configure_ucx; build_ucx; install_ucx ;;
gtest)   verify; unpack; configure_ucx; build_ucx; build_gtest ;;
*)       die "usage: build-ucx122.sh [source|build|install|gtest|all]" ;;
esac
log "done in $((SECONDS - t_all)) s ($UCX122_CONFIG: source $UCX122_SRC," \
    "prefix $PREFIX)"
