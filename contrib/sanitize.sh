#!/usr/bin/env bash
# Build UCX + gaudi + the emulator + our test programs with AddressSanitizer
# and UndefinedBehaviorSanitizer in a tree of their own (build/asan/), then
# run our suites under the sanitizers with test/run-tests.sh. The last line
# is "N passed, M failed"; the exit status is non-zero if anything failed.
# docs/sanitizers.md: what it covers, the settings and why, the cost.
#
#   build/asan/src            a copy of this repository's files (git ls-files:
#                             committed and untracked, not ignored), configured
#   build/asan/ucx-1.13.1     a fresh UCX tree, from the Debian source package
#                             already in build/src/dl (fetched if missing)
#   build/asan/install        the instrumented UCX + gaudi
#   build/asan/*.log          the logs
#
# The normal build (build/src, build/install, the configured source tree) is
# never touched. Idempotent: a second run rebuilds only what changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
asan="$top/build/asan"
src="$asan/src"
ucx="$asan/ucx-1.13.1"
prefix="$asan/install"
jobs=${JOBS:-2}
san="-fsanitize=address,undefined"
cflags="$san -fno-omit-frame-pointer -g -O1"

log() { echo "sanitize: $*"; }
mkdir -p "$asan"
cd "$top"

# Our configure refuses a VPATH build while the source tree is configured:
# build a copy. tar keeps the time stamps, so make rebuilds only what changed.
command -v git > /dev/null && git -C "$top" rev-parse --git-dir > /dev/null 2>&1 ||
    { echo "sanitize: needs git and a git checkout (to list the files to copy)" >&2
      exit 1; }
log "copying the repository's files into $src"
mkdir -p "$src"
git -C "$top" ls-files -z --cached --others --exclude-standard |
    grep -zv '^build/' |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -

# A fresh UCX tree of our own, unpacked from the source package the normal
# build downloaded (dpkg-source checks every file against the .dsc)
if [ ! -f "$ucx/.ucx-gaudi-fetched" ]; then
    dsc=$(ls "$top"/build/src/dl/ucx_*.dsc 2> /dev/null | head -n 1 || true)
    if [ -n "$dsc" ]; then
        log "unpacking UCX from $dsc into $ucx"
        rm -rf "$ucx"
        dpkg-source --no-copy -x "$dsc" "$ucx" > "$asan/ucx-unpack.log" 2>&1 ||
            { cat "$asan/ucx-unpack.log"; exit 1; }
        touch "$ucx/.ucx-gaudi-fetched"
    else
        "$top/contrib/fetch-ucx.sh" "$asan"
    fi
fi

# The flags go to UCX's configure through a gcc response file: build-ucx.sh
# splits UCX's configure flags on blanks (one word each), and CFLAGS comes
# last on UCX's compile lines, after its -O3 and -Werror. -Wno-error: gcc 12
# warns wrongly under -fsanitize (e.g. "null format string" in UCS's
# string_set.c) and UCX builds with -Werror; the warnings are still printed
flagfile="$asan/sanitize.flags"
echo "$cflags -Wno-error" > "$flagfile.new"
cmp -s "$flagfile.new" "$flagfile" && rm -f "$flagfile.new" ||
    mv -f "$flagfile.new" "$flagfile"
# Without verbs and rdmacm: no suite here runs over them (no RDMA device),
# and they cost minutes of this build's configure and compile
ucx_flags="CFLAGS=@$flagfile CXXFLAGS=@$flagfile LDFLAGS=$san
           --without-verbs --without-rdmacm"
ucx_flags=$(echo $ucx_flags)
conf_args=(--prefix="$prefix" --with-ucx-src="$ucx"
           --with-ucx-configure-flags="$ucx_flags"
           CFLAGS="$cflags -Wno-error" CXXFLAGS="$cflags -Wno-error"
           LDFLAGS="$san")
stamp="$src/.sanitize-configured"

# configure's test programs, UCX's included, must not fail on a leak
export ASAN_OPTIONS=detect_leaks=0
cd "$src"
if [ ! -x configure ] || [ configure.ac -nt configure ] ||
   [ Makefile.am -nt configure ]; then
    log "bootstrapping the copy (autogen.sh)"
    ./autogen.sh > "$asan/autogen.log" 2>&1 ||
        { cat "$asan/autogen.log"; exit 1; }
fi
if [ ! -f Makefile ] || [ ! -f "$stamp" ] ||
   [ "$(cat "$stamp")" != "${conf_args[*]}" ] || [ configure -nt Makefile ]; then
    log "configuring the copy (log: $src/config.log)"
    ./configure "${conf_args[@]}" > /dev/null ||
        { echo "sanitize: configure failed; see $src/config.log" >&2; exit 1; }
    echo "${conf_args[*]}" > "$stamp"
fi

t0=$SECONDS
log "building and installing UCX + gaudi with ASan + UBSan (about 7 min on" \
    "2 cores the first time; logs: $src/build/ucx-*.log)"
JOBS=$jobs make --no-print-directory -s install
log "building our test programs with ASan + UBSan (log: $asan/tests-build.log)"
# not build-tests: that target builds UCX's gtest, which this mode skips.
# The MPI program is compiled by mpicc: instrumented too, so that the ASan
# runtime comes first in its library list when mpirun starts it
# Leaks are not checked in the MPI rank program: Open MPI 4.1 leaks at exit,
# much of it from components it has dlclose()d, whose stacks LeakSanitizer
# cannot name (so no suppression can match them). ASan's compiled-in default
# options turn LSan off for that program only (ASAN_OPTIONS below does not
# set detect_leaks, so it does not override them).
cat > "$asan/no_leak_check.c" <<'EOF_C'
const char *__asan_default_options(void) { return "detect_leaks=0"; }
EOF_C
progs="test/unit/gaudi_unit test/unit/emu_unit test/ipc/gaudi_ipc_mp_test
       test/fuzz/gaudi_fuzz test/e2e/gaudi_ucp_demo test/e2e/gaudi_ipc_ucp
       test/e2e/gaudi_fault_ucp test/e2e/gaudi_app_ucp"
command -v mpicc > /dev/null && progs="$progs test/mpi/gaudi_mpi_xfer"
make --no-print-directory -j"$jobs" \
    MPICC="mpicc $cflags $asan/no_leak_check.c" $progs \
    > "$asan/tests-build.log" 2>&1 ||
    { tail -n 30 "$asan/tests-build.log"; exit 1; }
log "built in $((SECONDS - t0)) s"

eval "$(make --no-print-directory -s print-test-env)"
# build-ucx.sh logs to $src/build; run-tests.sh needs no UCX gtest
export UCX_GAUDI_TEST_SKIP_UCX_GTEST=1
# The e2e scripts whose code paths the sanitizers add to: our transports
# under UCP with faults, revocations and failures (the fault matrix in
# full). Not run here (the normal build runs them): the static checks
# (abi_header, layering, stats_build, rdma_build, plugin_names,
# wheel_layout), configuration and device assignment walks (knob_walk,
# assign, ucx_info), the namespaces' plumbing (containers, netns_tcp),
# throughput and the random soak (ucp_perftest, soak): together they
# doubled this run's time (CI holds every build in 90 minutes).
export UCX_GAUDI_TEST_E2E=${UCX_GAUDI_TEST_E2E:-"fault_matrix ipc_ucp
    ipc_perftest loopback staging_notice perftest_failure roundtrip mpi
    ownership dmabuf app_memory"}

# The sanitizers' settings, and UCX's that let them work (docs/sanitizers.md)
#  - UCM's malloc hooks replace malloc/free with UCM's own allocator: ASan's
#    allocator must see every allocation and free
#  - UCM's mmap hooks patch the relocations (or the code) of mmap, munmap,
#    mremap, brk, shmat..., which ASan intercepts itself
#  - memory events stay on (UCX_MEM_EVENTS=no would turn UCS's memtype cache
#    off, which the module needs): the module dispatches its own
#  - UCS's error handler off: ASan's own SIGSEGV/SIGBUS handler reports the
#    fault with its stack
#  - allocator_may_return_null: a too large allocation fails (NULL) as with
#    glibc's malloc, rather than ending the process (the fuzz targets and
#    UCX's own size checks rely on it)
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export UCX_HANDLE_ERRORS=none
# (LeakSanitizer is on by default: detect_leaks is left out on purpose)
export ASAN_OPTIONS="halt_on_error=1:allocator_may_return_null=1"
# contrib/sanitize.supp holds both kinds of suppressions; each sanitizer
# refuses a file with the other's kinds in it
grep -E '^leak:' "$top/contrib/sanitize.supp" > "$asan/lsan.supp" || true
grep -vE '^(leak:|#|[[:space:]]*$)' "$top/contrib/sanitize.supp" \
    > "$asan/ubsan.supp" || true
export LSAN_OPTIONS="suppressions=$asan/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$asan/ubsan.supp"
log "running the suites under ASan + UBSan"
exec "$src/test/run-tests.sh"
