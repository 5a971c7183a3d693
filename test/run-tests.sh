#!/usr/bin/env bash
# Run every test suite of ucx-gaudi and print one summary line
# "N passed, M failed" counting every test that ran. Exits non-zero if any
# test failed or a suite could not run.
#
# Environment (set by the top-level Makefile, "make print-test-env"):
# UCX_SRC, PREFIX (UCX's install), UNIT_TEST, EMU_TEST, IPC_TEST,
# FUZZ_TEST, DEMO, IPC_UCP, MPI_XFER; for the plugin build also
# DMABUF_UCP and DBUFSINK_DIR (the DMA-BUF provider test, test/dmabuf),
# GAUDI_BUILD (plugin-<UCX version>; default in-tree-1.13.1),
# GAUDI_PLUGIN_PATH (where UCX finds the plugin: UCX_PLUGIN_PATH) and
# GAUDI_COPY_TL (the copy transport's name: gaudi_cpy there) and
# GAUDI_FEATURES_DIR (its ucx_gaudi_features.h).
# UCX_GAUDI_TEST_SKIP_UCX_GTEST=1: skip the suites of UCX's own gtest (shown
# as skips; contrib/sanitize.sh does not build it).
# UCX_GAUDI_TEST_E2E="NAME ...": run only these e2e scripts (test/e2e/NAME.sh),
# the others are shown as skips (contrib/sanitize.sh: those whose code paths
# the sanitizers add to; CI's 90 minutes hold every build).
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/report.bash"
: "${UCX_SRC:?}" "${PREFIX:?}" "${UNIT_TEST:?}" "${EMU_TEST:?}" "${IPC_TEST:?}"
: "${DEMO:?}"
ucx_gtest="$UCX_SRC/test/gtest/gtest"
ucx_tree=$UCX_SRC
skip_ucx_gtest=${UCX_GAUDI_TEST_SKIP_UCX_GTEST:-0}
# (names one space apart, whatever separated them: a list over several
# lines matched none of the names at its line ends)
e2e_only=$(echo ${UCX_GAUDI_TEST_E2E:-})
build=${GAUDI_BUILD:-in-tree-1.13.1}
copy_tl=${GAUDI_COPY_TL:-gaudi_copy}
# the plugin build's feature header (configure's checks on its UCX)
features_dir=${GAUDI_FEATURES_DIR:-}
# the plugin build: UCX loads our module from its plugin path
if [ -n "${GAUDI_PLUGIN_PATH:-}" ]; then
    export UCX_PLUGIN_PATH=$GAUDI_PLUGIN_PATH
fi
# UCX warns about any UCX_* variable it does not know
unset UCX_SRC UCX_GAUDI_TEST_SKIP_UCX_GTEST UCX_GAUDI_TEST_E2E GAUDI_BUILD GAUDI_PLUGIN_PATH \
      GAUDI_COPY_TL GAUDI_FEATURES_DIR
echo "test: the $build build${UCX_PLUGIN_PATH:+ (UCX_PLUGIN_PATH=$UCX_PLUGIN_PATH)}"
logdir=${TEST_LOG_DIR:-$(mktemp -d /tmp/ucx-gaudi-tests.XXXXXX)}
passed=0
failed=0
skipped=()
# "SECONDS NAME" per suite: the slowest are named at the end (CI's time
# budget is 90 min for every build: bench/results.md)
times=()

# skip NAME REASON...: a suite that cannot run here: neither passed nor
# failed
skip() {
    local name=$1
    shift
    echo "=== $name"
    echo "    SKIPPED, not counted as passed: $*"
    skipped+=("$name")
}

# run_gtest NAME ENV... -- BINARY ARGS...: count a gtest binary's results
# (report_gtest_counts)
run_gtest() {
    local name=$1 log="$logdir/$1.log" p f s envs=() args
    shift
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    if [ "$1" = "$ucx_gtest" ]; then
        if [ "$skip_ucx_gtest" = 1 ]; then
            skip "$name" "UCX's gtest (UCX_GAUDI_TEST_SKIP_UCX_GTEST=1)"
            return
        elif [ "$build" != in-tree-1.13.1 ]; then
            # README, "With your own UCX": UCX's gtest instantiates its
            # suites at compile time for UCX's own transports and memory
            # types; only our core patch of 1.13.1 adds ours
            skip "$name" "UCX's gtest has no suite for our transports" \
                 "or Gaudi memory unless patched (in-tree 1.13.1 only)"
            return
        fi
    fi
    echo "=== $name"
    local t0=$SECONDS
    env "${envs[@]}" "$@" > "$log" 2>&1
    local rc=$?
    times+=("$((SECONDS - t0)) $name")
    report_gtest_counts "$name" "$log" "$rc"
    if [ "$f" -gt 0 ]; then
        # how to run just those tests again
        report_gtest_args "$log" "$@"
        report_replay "${envs[@]}" -- "${args[@]}"
    fi
    echo "    $p passed, $f failed in $((SECONDS - t0)) s (log: $log)"
    passed=$((passed + p)); failed=$((failed + f))
}

# run_script NAME SCRIPT: a shell test whose exit status is its verdict;
# 77 means it could not run here (a skip: neither passed nor failed)
run_script() {
    local name=$1 log="$logdir/$1.log" rc=0 t0=$SECONDS
    shift
    echo "=== $name"
    "$@" > "$log" 2>&1 || rc=$?
    times+=("$((SECONDS - t0)) $name")
    if [ "$rc" -eq 0 ]; then
        echo "    passed in $((SECONDS - t0)) s"; passed=$((passed + 1))
    elif [ "$rc" -eq 77 ]; then
        echo "    SKIPPED, not counted as passed: $(grep -m1 '^SKIP' "$log")"
        skipped+=("$name")
    else
        echo "    FAILED (exit status $rc; log: $log)"
        report_script "$log"
        report_replay -- "$@"
        failed=$((failed + 1))
    fi
}

emu_env() {  # fresh emulated node of N devices
    echo "UCX_GAUDI_EMU_DEVICES=$1"
    echo "UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d /tmp/ucx-gaudi-emu.XXXXXX)"
}

run_gtest unit-emu -- "$EMU_TEST"
run_gtest unit-base UCX_LOG_LEVEL=warn -- "$UNIT_TEST"
# gaudi_ipc between two real processes (each test starts its own pair)
run_gtest ipc-multiprocess -- "$IPC_TEST"
# every input from outside the process, in seeded mutation loops of
# GAUDI_FUZZ_SECONDS per target (docs/fuzzing.md: longer runs, replays)
run_gtest fuzz GAUDI_FUZZ_SECONDS="${GAUDI_FUZZ_SECONDS:-10}" -- \
    "${FUZZ_TEST:?FUZZ_TEST is not set (make print-test-env sets it)}"

# UCX's own suites over our transports
run_gtest ucx-test_md $(emu_env 2) UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter='gaudi_cpy/test_md.*:gaudi_cpy/test_md_fork.*'
run_gtest ucx-test_md-no-rcache $(emu_env 2) UCX_GAUDI_COPY_RCACHE=n \
    UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter='gaudi_cpy/test_md.*'
run_gtest ucx-test_md-gaudi1 $(emu_env 2) UCX_GAUDI_EMU_ASIC=gaudi1 \
    UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter='gaudi_cpy/test_md.*'
run_gtest ucx-test_md-gaudi_ipc $(emu_env 2) UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter='gaudi_ipc/test_md.*'
run_gtest ucx-test_ucp_mem_type $(emu_env 2) UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter='*test_ucp_mem_type*'

# UCT suites instantiated for gaudi_copy (test_uct_perf itself needs two
# ifaces that reach each other; gaudi_copy, like cuda_copy, reaches only
# itself, so its perf suite is the loopback one)
uct_suites="uct_p2p_rma_test test_p2p_rma_madvise uct_flush_test
            test_uct_progress test_zcopy_comp test_uct_loopback_gaudi
            test_uct_query uct_fence_test"
run_gtest ucx-uct-gaudi_copy $(emu_env 1) UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter="$(for s in $uct_suites; do
                                       printf 'gaudi_copy/%s.*:' "$s"; done)"

# GPU-aware UCP suites: their memory-type variants include gaudi
ucp_suites="test_ucp_rma test_ucp_mmap test_ucp_tag_mem_type
            test_ucp_am_nbx_eager_memtype test_ucp_am_nbx_rndv_memtype
            test_ucp_am_nbx_rndv_memtype_disable_zcopy"
run_gtest ucx-ucp-gaudi $(emu_env 1) UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter="$(for s in $ucp_suites; do
                                       printf 'shm_ib/%s.*:' "$s"; done)"

# UCX's own suites of its InfiniBand transports (in-tree UCX is built with
# verbs and rdmacm: README, "On a cluster") on a machine without an RDMA
# device: those that need one have no instance, the device-free ones (the
# ib utilities) pass
ib_suites="rc_mlx5 rc_verbs dc_mlx5 ud_verbs ud_mlx5 rdmacm ib"
run_gtest ucx-ib-nodevice UCX_HANDLE_ERRORS=none -- \
    "$ucx_gtest" --gtest_filter="$(for s in $ib_suites; do
                                       printf '%s/*:' "$s"; done
                                   )test_uct_ib_utils.*:test_uct_ib_sl_utils.*"

for t in "$here"/test/e2e/*.sh; do
    [ -f "$t" ] || continue
    if [ -n "$e2e_only" ] && [[ " $e2e_only " != *" $(basename "$t" .sh) "* ]]
    then
        skip "e2e-$(basename "$t" .sh)" "not among this run's e2e scripts" \
             "(UCX_GAUDI_TEST_E2E)"
        continue
    fi
    run_script "e2e-$(basename "$t" .sh)" env PREFIX="$PREFIX" DEMO="$DEMO" \
        GAUDI_UCX_TREE="$ucx_tree" GAUDI_BUILD="$build" \
        GAUDI_COPY_TL="$copy_tl" GAUDI_FEATURES_DIR="$features_dir" \
        IPC_UCP="${IPC_UCP:-}" FAULT_UCP="${FAULT_UCP:-}" \
        MPI_XFER="${MPI_XFER:-}" DMABUF_UCP="${DMABUF_UCP:-}" \
        DBUFSINK_DIR="${DBUFSINK_DIR:-}" bash "$t"
done

echo "the slowest suites: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 6 |
                           awk '{ printf "%s%s %d s", (NR > 1) ? ", " : "", $2, $1 }')"
[ "${#skipped[@]}" -eq 0 ] ||
    echo "${#skipped[@]} skipped (not run here): ${skipped[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
