#!/usr/bin/env bash
# The out-of-tree plugin build against UCX 1.22, beside the in-tree 1.13.1
# build of the same checkout (contrib/test.sh runs both):
#
#  1. UCX 1.22.0 from the vendored source into build/install-1.22
#     (contrib/build-ucx.sh 1.22.0; cached like the 1.13.1 build);
#  2. this source tree, configured --with-ucx=<that UCX tree>, in a build
#     directory of its own (build/plugin-1.22): configure refuses a source
#     directory that is already configured for another build (the in-tree
#     one), so the build directory holds a copy of the sources, kept in
#     step with the checkout (only changed files are copied, with their
#     times: make rebuilds what changed);
#  3. make install: the plugin's libraries into build/install-plugin-1.22/
#     lib/ucx, where UCX_PLUGIN_PATH finds them (UCX is not rebuilt);
#  4. "tests": our test programs, built against UCX 1.22 and the plugin;
#     "env": what test/run-tests.sh needs to run them.
#
# UCX122_CONFIG=release does all of it against the release configuration of
# UCX 1.22 (contrib/ucx/1.22.0.bash: what pip wheels and distributions ship),
# in directories of its own (build/plugin-1.22-release,
# build/install-plugin-1.22-release).
#
# Idempotent: a second run with nothing changed builds nothing.
#
#   UCX122_CONFIG  debug (default) or release
#   BUILD_DIR  scratch directory (default build)
#   JOBS       make -j (default nproc)
#
# usage: build-plugin.sh [build|tests|env]   (default: build)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
action=${1:-build}
BUILD_DIR=${BUILD_DIR:-$top/build}
export UCX122_CONFIG=${UCX122_CONFIG:-debug}
case "$UCX122_CONFIG" in
debug)   suffix="" ;;
release) suffix="-release" ;;
*)       echo "build-plugin: UCX122_CONFIG=$UCX122_CONFIG: debug or release" >&2
         exit 2 ;;
esac
ucx_src=$BUILD_DIR/src/ucx-1.22.0$suffix
ucx_prefix=$BUILD_DIR/install-1.22$suffix
dir=$BUILD_DIR/plugin-1.22$suffix
prefix=$BUILD_DIR/install-plugin-1.22$suffix
jobs=${JOBS:-$(nproc)}

log() { echo "build-plugin: $*" >&2; }
die() { echo "build-plugin: $*" >&2; exit 1; }

# the files of the checkout (tracked or new, not ignored); without git, the
# directories a build reads
sources() {
    if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
        git -C "$top" ls-files --cached --others --exclude-standard
    else
        (cd "$top" && find configure.ac Makefile.am autogen.sh config/m4 \
                           plugin src test contrib -type f) |
            grep -v -e '^plugin/ucx_gaudi_features.h$'
    fi
}

# Copy what changed since the last sync (compared by content, copied with
# its time stamp); remove what the checkout no longer has
sync_sources() {
    local list=$dir/.sources f n=0
    mkdir -p "$dir"
    sources | sort > "$list.new"
    while read -r f; do
        [ -f "$top/$f" ] || continue          # deleted, not yet committed
        if ! cmp -s "$top/$f" "$dir/$f"; then
            mkdir -p "$dir/$(dirname "$f")"
            cp -p "$top/$f" "$dir/$f"
            n=$((n + 1))
        fi
    done < "$list.new"
    if [ -f "$list" ]; then
        comm -23 "$list" "$list.new" | while read -r f; do
            rm -f "$dir/$f"
        done
    fi
    mv "$list.new" "$list"
    log "sources in $dir: $n file(s) updated"
}

build() {
    local t0=$SECONDS
    "$top/contrib/build-ucx.sh" 1.22.0 install >&2
    sync_sources
    cd "$dir"
    if [ ! -x configure ] || [ ! -f Makefile.in ]; then
        log "bootstrapping (autogen.sh)"
        ./autogen.sh > autogen.log 2>&1 || { cat autogen.log >&2; exit 1; }
    fi
    if [ ! -f Makefile ]; then
        log "configuring --with-ucx=$ucx_src (log: $dir/config.log)"
        ./configure --with-ucx="$ucx_src" --with-ucx-prefix="$ucx_prefix" \
            --prefix="$prefix" > configure.log 2>&1 ||
            { tail -n 20 configure.log >&2
              die "configure failed; see $dir/config.log"; }
    fi
    log "building the plugin against UCX 1.22 ($UCX122_CONFIG; log:" \
        "$dir/make.log)"
    make -j"$jobs" install > make.log 2>&1 ||
        { grep -E 'error|Error' make.log | tail -n 30 >&2
          die "the plugin build failed; see $dir/make.log"; }
    log "plugin built and installed into $prefix/lib/ucx in" \
        "$((SECONDS - t0)) s"
}

case "$action" in
build)
    build ;;
tests)
    build
    cd "$dir"
    log "building the test programs against UCX 1.22 ($UCX122_CONFIG; log:" \
        "$dir/tests.log)"
    t0=$SECONDS
    make -j"$jobs" build-tests > tests.log 2>&1 ||
        { grep -E 'error|Error' tests.log | tail -n 30 >&2
          die "building the test programs failed; see $dir/tests.log"; }
    log "test programs built in $((SECONDS - t0)) s" ;;
env)
    [ -f "$dir/Makefile" ] || die "not built yet: run $0 tests"
    make --no-print-directory -s -C "$dir" print-test-env ;;
*)
    die "usage: build-plugin.sh [build|tests|env]" ;;
esac
