#!/usr/bin/env bash
# Run the multi-process gaudi_ipc tests and UCX's gtest subsets for our
# transports under valgrind memcheck. The last line is "N passed, M failed";
# the exit status is non-zero if anything failed. A process whose valgrind
# log reports an error (a definite leak included) counts as one failure more,
# whatever its test said. docs/sanitizers.md: what runs, why so, the cost.
#
#   build/valgrind/ucx-1.13.1   a UCX tree of its own (from the Debian source
#                               package in build/src/dl), grafted as usual,
#                               configured --with-valgrind
#   build/valgrind/install      that UCX + gaudi + the emulator
#   build/valgrind/*.log        their build logs
#
# The test programs and UCX's gtest are the normal build's (contrib/test.sh
# builds them; run alone, this script does) and run against the libraries
# of build/valgrind/install: LD_LIBRARY_PATH comes before their RUNPATH.
#
# Environment: VALGRIND_EXTRA_ARGS (more valgrind options, e.g.
# --track-origins=yes), UCX_GAUDI_EMU_HBM_SIZE (default 4G),
# UCX_GAUDI_VALGRIND_IPC_FILTER (default: the whole suite).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
vg="$top/build/valgrind"
ucx="$vg/ucx-1.13.1"
prefix="$vg/install"
log() { echo "valgrind: $*"; }

"$top/contrib/install-deps.sh" valgrind
cd "$top"
if [ -z "${IPC_TEST:-}" ] || [ -z "${UCX_SRC:-}" ]; then
    # run alone: the normal build and its test programs first
    "$top/contrib/setup.sh"
    "$top/contrib/install-deps.sh" test
    log "building our test programs and UCX's gtest (normal build)"
    make --no-print-directory -s build-tests
    eval "$(make --no-print-directory -s print-test-env)"
fi
ucx_gtest="$UCX_SRC/test/gtest/gtest"

# A fresh UCX tree of our own, unpacked from the source package the normal
# build downloaded (dpkg-source checks every file against the .dsc)
mkdir -p "$vg"
if [ ! -f "$ucx/.ucx-gaudi-fetched" ]; then
    dsc=$(ls "$top"/build/src/dl/ucx_*.dsc 2> /dev/null | head -n 1 || true)
    [ -n "$dsc" ] ||
        { echo "valgrind: no UCX source package in build/src/dl" >&2; exit 1; }
    log "unpacking UCX from $dsc into $ucx"
    rm -rf "$ucx"
    dpkg-source --no-copy -x "$dsc" "$ucx" > "$vg/ucx-unpack.log" 2>&1 ||
        { cat "$vg/ucx-unpack.log"; exit 1; }
    touch "$ucx/.ucx-gaudi-fetched"
fi

# UCX --with-valgrind: without it (the normal build) UCX's config.h defines
# NVALGRIND and UCX cannot tell that it runs under valgrind. Then UCM's
# malloc hooks never give foreign blocks back to valgrind and its bistro
# mmap hooks patch code valgrind has already translated, UCS's memory pools
# hand out their elements unannotated (no use-after-put is seen), the
# emulator's process_vm_writev() on itself leaves the bytes it wrote
# "undefined", and memcheck's leak search reads the emulator's whole HBM
# backing at every exit (docs/sanitizers.md). The annotations cost nothing
# natively, but a build of the normal tree must not need valgrind's headers.
# --disable-static: nothing links UCX statically here, and libtool would
# compile every file twice; no verbs and rdmacm: nothing here runs over them
# (no RDMA device), and they cost minutes of configure and compile
t0=$SECONDS
log "building UCX + gaudi --with-valgrind into $prefix (about 3 min on 2" \
    "cores the first time; logs: $vg/ucx-*.log)"
(
    export UCX_SRC="$ucx" UCX_ORIGIN=dir PREFIX="$prefix" BUILD_DIR="$vg" \
           UCX_CONFIGURE_FLAGS="--with-valgrind --disable-static
                                --without-verbs --without-rdmacm"
    "$top/contrib/build-ucx.sh" 1.13.1 build
    "$top/contrib/build-ucx.sh" 1.13.1 install
) | sed 's/^/    /'
log "built in $((SECONDS - t0)) s"

vg_libs="$prefix/lib:$prefix/lib/ucx"
export LD_LIBRARY_PATH="$vg_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The programs must load that UCX, not the one of their RUNPATH
# (outputs captured first: grep -q would end the pipe early, pipefail)
build_config=$("$prefix/bin/ucx_info" -b)
[[ $build_config != *NVALGRIND* ]] ||
    { echo "valgrind: $prefix was built without valgrind support" >&2; exit 1; }
for prog in "$IPC_TEST" "$ucx_gtest"; do
    libs=$(ldd "$prog")
    for lib in libucs.so.0 libuct_gaudi.so.0; do
        [[ $libs == *"$lib => $prefix/lib/"* ]] ||
            { echo "valgrind: $prog does not load $lib from $prefix" >&2
              exit 1; }
    done
done

# An emulated Gaudi2 maps its HBM (80 GiB by default, sparse) per device,
# more than valgrind's address space: 4 GiB, still 6 DRAM pages of 640 MiB
export UCX_GAUDI_EMU_HBM_SIZE=${UCX_GAUDI_EMU_HBM_SIZE:-4G}
# UCM must not replace malloc (by relocations: glibc 2.36 has no malloc
# hooks). Under valgrind its allocator deadlocks on itself in UCX 1.13.1
# (dlmalloc's lock held -> sbrk -> UCM's sbrk hook -> dlsym() fails ->
# glibc's dlerror mallocs -> dlmalloc's lock), at the first registration
# cache. Without it, every allocation goes through valgrind's allocator
# (with red zones), and UCM cannot report unmapped memory: the registration
# caches (UCP's, gaudi_cpy's) are not created (docs/sanitizers.md)
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MALLOC_RELOC=no
# UCS's SIGSEGV handler would freeze the process; memcheck reports the fault
export UCX_HANDLE_ERRORS=none
# A DMA runs 20-50 times slower under memcheck (the emulator's copy is a
# memmove in the process): 30 s would declare a device failed that is not
export UCX_GAUDI_DMA_TIMEOUT=600s

# Exit code of a process memcheck found errors in: seen as such by the
# harness of the multi-process tests in its children's exit status
vg_rc=99
vg_args=(--tool=memcheck --error-exitcode=$vg_rc
         --leak-check=full --show-leak-kinds=definite
         --errors-for-leak-kinds=definite
         --num-callers=30 --fair-sched=try
         --child-silent-after-fork=yes
         --trace-children-skip='/bin/*,/sbin/*,/usr/bin/*,/usr/sbin/*'
         --suppressions="$UCX_SRC/contrib/valgrind.supp"
         --suppressions="$top/contrib/valgrind.supp"
         ${VALGRIND_EXTRA_ARGS:-})

# from here on a failure is counted, not fatal (as in test/run-tests.sh),
# and explained as there
set +e
. "$top/test/report.bash"
logdir=$(mktemp -d /tmp/ucx-gaudi-valgrind.XXXXXX)
passed=0
failed=0
skipped=()

# run_vg NAME CHILDREN ENV... -- BINARY ARGS...: a gtest binary under
# memcheck (CHILDREN=yes: and the programs it execs), counted as
# test/run-tests.sh counts, plus one failure per process log with errors
run_vg() {
    local name=$1 trace=$2 out="$logdir/$1.log" dir="$logdir/$1"
    local p f s rc=0 bad=0 logs=0 envs=() t0=$SECONDS vglog args
    shift 2
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    echo "=== $name"
    mkdir -p "$dir"
    env "${envs[@]}" valgrind "${vg_args[@]}" --trace-children="$trace" \
        --log-file="$dir/vg.%p.log" "$@" > "$out" 2>&1 || rc=$?
    report_gtest_counts "$name" "$out" "$rc" "$vg_rc"

    # memcheck's verdict, process by process (a process SIGKILLed on
    # purpose leaves a log without a summary: nothing to judge)
    for vglog in "$dir"/vg.*.log; do
        [ -s "$vglog" ] || continue
        logs=$((logs + 1))
        if grep -qE '^==[0-9]+== ERROR SUMMARY: [1-9]' "$vglog"; then
            bad=$((bad + 1))
            echo "    memcheck errors in $(sed -n 's/^==[0-9]*== Command: //p' \
                                           "$vglog" | head -n 1):"
            sed -n '/^==[0-9]*== [A-Z]/,$p' "$vglog" | head -n 40 |
                sed 's/^/    | /'
        fi
    done
    if [ "$logs" -eq 0 ]; then
        echo "    no valgrind log: counted as 1 failure"
        bad=1
    fi
    # each test of the multi-process suite runs two children, which must
    # have run under memcheck too
    if [ "$trace" = yes ] &&
       [ "$(grep -l -e '^==[0-9]*== Command: .* --role ' "$dir"/vg.*.log |
            wc -l)" -lt $((2 * p)) ]; then
        echo "    fewer children under memcheck than 2 per test: counted as" \
             "1 failure"
        bad=$((bad + 1))
    fi
    f=$((f + bad))
    if [ "$f" -gt 0 ]; then
        # the failed tests; the whole suite when only memcheck complained
        report_gtest_args "$out" "$@"
        report_replay "${envs[@]}" -- valgrind "${vg_args[@]}" \
            --trace-children="$trace" "${args[@]}"
    fi
    echo "    $p passed, $f failed ($bad of $logs processes with memcheck" \
         "errors; $((SECONDS - t0)) s; log: $out, valgrind's: $dir)"
    passed=$((passed + p)); failed=$((failed + f))
    # the emulated node's state (emu_env): its HBM files hold what the
    # tests wrote
    for s in "${envs[@]}"; do
        [[ $s != UCX_GAUDI_EMU_STATE_DIR=* ]] || rm -rf "${s#*=}"
    done
}

# The check itself: a program with an invalid read and a definite leak must
# come out as an error of memcheck's, in its exit status and in its log, with
# these options and suppressions; else a run that sees nothing proves nothing
selftest() {
    local dir="$logdir/selftest" rc=0
    echo "=== selftest"
    mkdir -p "$dir"
    cat > "$dir/bad.c" <<'EOF_C'
#include <stdlib.h>
int main(void)
{
    volatile char *p = malloc(8);
    int v = p[8];                      /* out of bounds */
    free((void*)p);
    p = malloc(16);                    /* never freed: definitely lost */
    p = NULL;
    return v & 0;
}
EOF_C
    gcc -g -O0 -o "$dir/bad" "$dir/bad.c" > "$dir/build.log" 2>&1 ||
        { echo "    FAILED: cannot build it"; cat "$dir/build.log"
          failed=$((failed + 1)); return; }
    valgrind "${vg_args[@]}" --log-file="$dir/vg.log" "$dir/bad" || rc=$?
    if [ "$rc" -eq "$vg_rc" ] &&
       grep -q 'Invalid read of size 1' "$dir/vg.log" &&
       grep -q 'definitely lost in loss record' "$dir/vg.log" &&
       grep -qE '^==[0-9]+== ERROR SUMMARY: 2 errors' "$dir/vg.log"; then
        echo "    passed: an invalid read and a definite leak are errors"
        passed=$((passed + 1))
    else
        echo "    FAILED: memcheck did not report them as expected (exit" \
             "$rc; log: $dir/vg.log)"
        failed=$((failed + 1))
    fi
}

emu_env() {  # fresh emulated node of N devices
    echo "UCX_GAUDI_EMU_DEVICES=$1"
    echo "UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d /tmp/ucx-gaudi-emu.XXXXXX)"
}

t0=$SECONDS
log "running the suites under memcheck (logs: $logdir)"
selftest

# gaudi_ipc between two real processes: each test forks and execs its pair
run_vg ipc-multiprocess yes -- "$IPC_TEST" \
    --gtest_filter="${UCX_GAUDI_VALGRIND_IPC_FILTER:-*}"

# UCX's own suites over our transports: the filters of test/run-tests.sh,
# less what takes minutes here. Our UCX gtest is built without valgrind's
# headers, so it does not see memcheck and keeps its native sizes and counts
# (UCX's gtest built --with-valgrind shrinks them): uct_p2p_rma_test's
# short and zcopy cases move up to 1.5 GB per transfer (2-2.5 min each
# here; its bcopy cases do not apply to gaudi_copy), test_uct_loopback_gaudi
# runs its perf loops' full iteration counts
run_vg ucx-test_md no $(emu_env 2) -- \
    "$ucx_gtest" --gtest_filter='gaudi_cpy/test_md.*:gaudi_cpy/test_md_fork.*'
run_vg ucx-test_md-gaudi1 no $(emu_env 2) UCX_GAUDI_EMU_ASIC=gaudi1 -- \
    "$ucx_gtest" --gtest_filter='gaudi_cpy/test_md.*'
run_vg ucx-test_md-gaudi_ipc no $(emu_env 2) -- \
    "$ucx_gtest" --gtest_filter='gaudi_ipc/test_md.*'
uct_suites="test_p2p_rma_madvise uct_flush_test test_uct_progress
            test_zcopy_comp test_uct_query uct_fence_test"
run_vg ucx-uct-gaudi_copy no $(emu_env 1) -- \
    "$ucx_gtest" --gtest_filter="$(for s in $uct_suites; do
                                       printf 'gaudi_copy/%s.*:' "$s"; done)"
run_vg ucx-test_ucp_mem_type no $(emu_env 2) -- \
    "$ucx_gtest" --gtest_filter='*test_ucp_mem_type*'
# UCP on Gaudi memory: memory mapping, and RMA to and from it, in some of
# their variants (test_ucp_mmap's 28 and test_ucp_rma's 21 cases took 8.5
# min here, the proto variants of RMA 1-1.5 min each; the tag and AM suites
# of run-tests.sh, 128 cases more, are left out): mmap's default and
# non-blocking map, RMA with worker flush
ucp_filter="shm_ib/test_ucp_mmap.*/0:shm_ib/test_ucp_mmap.*/1"
ucp_filter="$ucp_filter:shm_ib/test_ucp_rma.*/0"
run_vg ucx-ucp-gaudi no $(emu_env 1) -- \
    "$ucx_gtest" --gtest_filter="$ucp_filter"

log "suites took $((SECONDS - t0)) s"
[ "${#skipped[@]}" -eq 0 ] ||
    echo "${#skipped[@]} skipped (not run here): ${skipped[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
