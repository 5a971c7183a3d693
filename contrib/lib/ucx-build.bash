# The shared part of contrib/build-ucx.sh: what building any UCX version
# takes. Sourced by it (set -euo pipefail, $here the repository) before
# the version's own file, contrib/ucx/<version>.bash, which sets
#   ucx_src         the UCX source tree
#   PREFIX          the install prefix
#   ucx_logs        the logs: $ucx_logs-configure.log, -build.log, ...
#   ucx_name        the build in messages ("UCX 1.13.1 + gaudi")
#   ucx_skip        UCX subdirectories none of our builds needs, besides
#                   test/gtest (the "gtest" action's) and test/apps
#   ucx_build_time, ucx_gtest_time   how long the builds take, for messages
# and defines ucx_flags (echoes UCX's configure flags) and ucx_main ACTION;
# it may redefine the hooks ucx_configured, ucx_check_configure and
# ucx_check_install (below). An unmodified upstream release from a verified
# source archive is the second half of this file: its version file names
# the archive's checksum and commit and calls ucx_archive_setup.
#
# Every step is skipped or cheap when its result is already there; UCX's
# own make rebuilds only what changed.

# shellcheck shell=bash disable=SC2034,SC2154,SC2120  # shared with the callers

# The UCX versions build-ucx.sh builds, each described by
# contrib/ucx/<version>.bash. A new version to build: a word here and its
# file (to test the plugin against it too: contrib/build-plugin.sh and
# contrib/test.sh, which name the 1.22 build; docs/design.md, "Where to
# add").
UCX_GAUDI_UCX_VERSIONS="1.13.1 1.22.0"

log() { echo "build-ucx: $*"; }
die() { echo "build-ucx: $*" >&2; exit 1; }

# Hooks, redefined by a version file that has something to check:
# ucx_configured: is the configured tree still up to date (besides its
# flags)?
ucx_configured() { return 0; }
# ucx_check_configure: after configure, did it enable what we need and
# nothing we must not have? (die if not)
ucx_check_configure() { :; }
# ucx_check_install: after make install (die if it installed a wrong thing)
ucx_check_install() { :; }

# Bootstrap and configure $ucx_src with ucx_flags's flags, unless the stamp
# says it is configured with exactly those and ucx_configured agrees
ucx_configure() {
    local flags stamp="$ucx_src/.ucx-gaudi-configured"
    local log="$ucx_logs-configure.log" t0=$SECONDS
    flags=$(ucx_flags)
    if [ -f "$ucx_src/Makefile" ] && [ -f "$stamp" ] &&
       [ "$(cat "$stamp")" = "$flags" ] && ucx_configured; then
        return 0
    fi
    log "bootstrapping and configuring $ucx_name (about 1-2 min; log: $log)"
    # shellcheck disable=SC2086  # one word per flag (see docs/sanitizers.md)
    (cd "$ucx_src" && ./autogen.sh && ./configure $flags) > "$log" 2>&1 ||
        { tail -n 30 "$log"; exit 1; }
    ucx_check_configure
    echo "$flags" > "$stamp"
    rm -f "$ucx_src/.ucx-gaudi-built"
    log "$ucx_name configured in $((SECONDS - t0)) s"
}

# UCX's top-level SUBDIRS less its tests: our builds need the libraries,
# the modules and the tools. UCX's gtest (several minutes more) is built by
# the "gtest" action, for the test command only; test/apps (UCX's own
# sample and regression programs, iodemo among them) is used by none.
ucx_subdirs() {
    # shellcheck disable=SC2016  # $(SUBDIRS) is make's
    make -s --no-print-directory -C "$ucx_src" -f Makefile -f - print-subdirs \
        <<< 'print-subdirs: ; @echo $(SUBDIRS)' | tr ' ' '\n' |
        grep -vxE "test/gtest|test/apps${ucx_skip:+|$ucx_skip}"
}

# run_make LOG WHAT ARGS...: make with output to LOG, the error lines on failure
run_make() {
    local log=$1 what=$2
    shift 2
    make "$@" >> "$log" 2>&1 ||
        { echo "build-ucx: $what failed; the errors (whole log: $log):" >&2
          grep -E 'error|Error' "$log" | tail -n 30 >&2; exit 1; }
}

ucx_build() {
    local log="$ucx_logs-build.log" dir t0=$SECONDS
    log "building $ucx_name ($ucx_build_time; log: $log)"
    : > "$log"
    for dir in $(ucx_subdirs); do
        run_make "$log" "make in $dir" -C "$ucx_src/$dir" -j"$jobs"
    done
    run_make "$log" "make of UCX's top level" -C "$ucx_src" -j"$jobs" all-am
    log "$ucx_name built in $((SECONDS - t0)) s"
}

ucx_install() {
    local log="$ucx_logs-install.log" dir t0=$SECONDS
    log "installing $ucx_name into $PREFIX (log: $log)"
    : > "$log"
    for dir in $(ucx_subdirs); do
        run_make "$log" "make install in $dir" -C "$ucx_src/$dir" install
    done
    run_make "$log" "make install of UCX's top level" -C "$ucx_src" \
        install-exec-am install-data-am
    ucx_check_install
    log "$ucx_name installed in $((SECONDS - t0)) s"
}

# ucx_gtest [MAKE ARGS...]: UCX's own gtest (test/gtest/gtest in its tree)
ucx_gtest() {
    local log="$ucx_logs-gtest-build.log" t0=$SECONDS
    [ -x "$ucx_src/test/gtest/gtest" ] ||
        log "building UCX $ucx_version's gtest ($ucx_gtest_time; log: $log)"
    : > "$log"
    run_make "$log" "make of UCX's gtest" -C "$ucx_src/test/gtest" -j"$jobs" "$@"
    log "UCX $ucx_version's gtest built in $((SECONDS - t0)) s"
}

# ---- an unmodified upstream release from a verified source archive ----
#
# Nothing of ours is grafted into its tree and no core patch is applied.
# The version file sets ucx_env (the prefix of the version's settings:
# UCX122 for 1.22.0), ucx_release_sha256 (the vendored archive's sha256)
# and ucx_release_commit (the release's commit, what that archive was made
# from), then calls ucx_archive_setup. Settings, ${ucx_env}_NAME:
#   _TARBALL     the source archive; unset: the vendored one (_VENDOR_DIR,
#                default ../shared/vendor beside this repository) when it
#                is there, else a download (ucx_download)
#   _SHA256      the archive's expected sha256 (default: the vendored one's)
#   _GIT_URL     where the download comes from (default UCX's repository on
#                GitHub): its tag v<version> must be commit _COMMIT
#   _CONFIG      debug (default) or release
#   _SRC         where to unpack it (default build/src/ucx-<version>,
#                release: build/src/ucx-<version>-release)
# and PREFIX (default build/install-<major.minor>, release:
# build/install-<major.minor>-release), BUILD_DIR (default build).
# The checksum is verified on every run (a few ms); unpacking, bootstrap +
# configure, build and install are each skipped when their result is
# already there and nothing changed.

# ucx_setting NAME [DEFAULT]: the version's setting ${ucx_env}_NAME, or DEFAULT
ucx_setting() {
    local var=${ucx_env}_$1
    printf '%s\n' "${!var:-${2:-}}"
}

ucx_archive_setup() {
    local suffix
    BUILD_DIR=${BUILD_DIR:-$here/build}
    ucx_config=$(ucx_setting CONFIG debug)
    case "$ucx_config" in
    debug)   suffix="" ;;
    release) suffix="-release" ;;
    *)       echo "build-ucx: ${ucx_env}_CONFIG=$ucx_config: debug or release" >&2
             exit 2 ;;
    esac
    ucx_src=$(ucx_setting SRC "$BUILD_DIR/src/ucx-$ucx_version$suffix")
    PREFIX=${PREFIX:-$BUILD_DIR/install-${ucx_version%.*}$suffix}
    ucx_logs=$BUILD_DIR/${ucx_env,,}$suffix
    ucx_name="UCX $ucx_version $ucx_config"
    ucx_tarball=$(ucx_setting TARBALL)
    ucx_sha256=$(ucx_setting SHA256)
    ucx_vendor_dir=$(ucx_setting VENDOR_DIR "$here/../shared/vendor")
    ucx_git_url=$(ucx_setting GIT_URL https://github.com/openucx/ucx.git)
    ucx_commit=$(ucx_setting COMMIT "$ucx_release_commit")
}

# ucx_no_source WHY: the build cannot have its UCX; say what to do
ucx_no_source() {
    local v=$ucx_version
    die "$*. UCX $v's source is needed for the plugin build: set" \
        "${ucx_env}_TARBALL to UCX's v$v source archive (a release" \
        "tarball, or 'git archive --prefix=ucx-$v/ v$v' of UCX's" \
        "repository; its sha256 in ${ucx_env}_SHA256), or let this script" \
        "download it (${ucx_env}_GIT_URL), or test the in-tree build only:" \
        "UCX_GAUDI_TEST_BUILDS=in-tree contrib/test.sh"
}

# Download: UCX's tag v<version> by git, accepted only if it is the
# release's commit (the commit id covers every file of the tree), packed as
# the vendored archive was; the archive's sha256 is recorded beside it, so
# that later runs check it as they check a given archive
ucx_download() {
    local v=$ucx_version archive="$BUILD_DIR/src/ucx-$ucx_version.git.tar"
    local tmp commit
    if [ -f "$archive" ] && [ -f "$archive.sha256" ]; then
        ucx_tarball=$archive ucx_sha256=$(cat "$archive.sha256")
        return 0
    fi
    log "no UCX $v source archive here: fetching tag v$v of" \
        "$ucx_git_url (git; a minute)"
    mkdir -p "$BUILD_DIR/src"
    tmp=$(mktemp -d "$BUILD_DIR/src/ucx-$v.git.XXXXXX")
    if ! git -c advice.detachedHead=false clone -q --depth 1 \
             --branch "v$v" "$ucx_git_url" "$tmp" \
             > "$ucx_logs-download.log" 2>&1; then
        rm -rf "$tmp"
        ucx_no_source "fetching tag v$v of $ucx_git_url failed" \
                      "($(tail -n 1 "$ucx_logs-download.log"))"
    fi
    commit=$(git -C "$tmp" rev-parse HEAD)
    if [ "$commit" != "$ucx_commit" ]; then
        rm -rf "$tmp"
        die "tag v$v of $ucx_git_url is commit $commit, not UCX" \
            "$v's $ucx_commit; not using it"
    fi
    git -C "$tmp" archive --prefix="ucx-$v/" -o "$archive.tmp" HEAD
    rm -rf "$tmp"
    sha256sum "$archive.tmp" | cut -d' ' -f1 > "$archive.sha256"
    mv "$archive.tmp" "$archive"
    log "UCX $v downloaded: commit $commit verified ($archive)"
    ucx_tarball=$archive ucx_sha256=$(cat "$archive.sha256")
}

# Where the source comes from: ${ucx_env}_TARBALL when set, else the
# vendored archive when there, else a download. The archive is verified on
# every run, also when the tree is already unpacked: the stamp records which
# archive the tree came from.
ucx_verify() {
    local vendored="$ucx_vendor_dir/ucx-$ucx_version.tar.xz" sum
    if [ -n "$ucx_tarball" ]; then
        [ -f "$ucx_tarball" ] ||
            ucx_no_source "${ucx_env}_TARBALL=$ucx_tarball: no such file"
    elif [ -f "$vendored" ]; then
        ucx_tarball=$vendored
    else
        ucx_download
    fi
    ucx_sha256=${ucx_sha256:-$ucx_release_sha256}
    sum=$(sha256sum "$ucx_tarball" | cut -d' ' -f1)
    [ "$sum" = "$ucx_sha256" ] ||
        die "$ucx_tarball: sha256 $sum, expected $ucx_sha256; not using it"
    log "$(basename "$ucx_tarball"): sha256 verified"
}

ucx_unpack() {
    local stamp="$ucx_src/.ucx-gaudi-unpacked" minor=${ucx_version#*.}
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ucx_sha256" ]; then
        return 0
    fi
    [ ! -e "$ucx_src" ] ||
        die "$ucx_src exists but was not unpacked from this tarball; remove it"
    log "unpacking into $ucx_src"
    mkdir -p "$ucx_src"
    tar -xf "$ucx_tarball" -C "$ucx_src" --strip-components=1
    grep -q "^define(\[ucx_ver_minor\], ${minor%%.*})" "$ucx_src/configure.ac" ||
        die "$ucx_src is not a UCX ${ucx_version%.*} source tree"
    echo "$ucx_sha256" > "$stamp"
}

# ucx_newer_than STAMP: is any file of the tree (sources or outputs) newer
# than STAMP? Nobody edits an unpacked release, so after a build nothing is.
ucx_newer_than() {
    [ -n "$(find "$ucx_src/src" "$ucx_src/config.h" -newer "$1" \
                 -type f -print -quit)" ]
}

ucx_build_once() {
    local stamp="$ucx_src/.ucx-gaudi-built"
    if [ -f "$stamp" ] && ! ucx_newer_than "$stamp"; then
        log "reusing the $ucx_name build in $ucx_src"
        return 0
    fi
    ucx_build
    touch "$stamp"
}

ucx_install_once() {
    local stamp="$PREFIX/.ucx-gaudi-installed"
    if [ -f "$stamp" ] && [ -x "$PREFIX/bin/ucx_info" ] &&
       [ "$(cat "$stamp")" = "$ucx_src" ] && ! ucx_newer_than "$stamp"; then
        log "reusing the $ucx_name install in $PREFIX"
        return 0
    fi
    ucx_install
    echo "$ucx_src" > "$stamp"
    # libtool relinks the modules into .libs while installing: the build
    # is still up to date
    touch "$ucx_src/.ucx-gaudi-built"
}

# ucx_archive_main [source|build|install|gtest|all]: "all" (the default) is
# install, which builds first; source: find and verify the source archive
# only, print its path
ucx_archive_main() {
    local t0=$SECONDS
    case "${1:-all}" in
    source)  ucx_verify; echo "$ucx_tarball"; return 0 ;;
    build)   ucx_verify; ucx_unpack; ucx_configure; ucx_build_once ;;
    install|all)
             ucx_verify; ucx_unpack; ucx_configure; ucx_build_once
             ucx_install_once ;;
    gtest)   ucx_verify; ucx_unpack; ucx_configure; ucx_build_once
             # shellcheck disable=SC2119  # no make arguments
             ucx_gtest ;;
    *)       die "usage: build-ucx.sh $ucx_version [source|build|install|gtest|all]" ;;
    esac
    log "done in $((SECONDS - t0)) s ($ucx_config: source $ucx_src," \
        "prefix $PREFIX)"
}
