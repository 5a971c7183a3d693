# A device that fails in the middle of ucx_perftest (issue 20.3): the
# failure is logged once (it was logged again by every later call: 16,513
# lines for 100 iterations), and ucx_perftest, which prints its figures
# whatever its transfers returned, exits non-zero through our perftest
# module, with the reason. The same run without the fault exits 0.
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=1 UCX_GAUDI_DMA_TIMEOUT=1s
perftest="$PREFIX/bin/ucx_perftest"
out=$(mktemp)
trap 'rm -rf "$out" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT
args=(-l -t put_bw -x "$GAUDI_COPY_TL" -d gaudi0 -m host,gaudi -D zcopy
      -s 65536 -n 100)

rc=0
timeout -k 5 120 "$perftest" "${args[@]}" > "$out" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "without a fault: exit $rc: $(tail -n 10 "$out")"
ok "without a fault: exit 0"

for fault in cs_abort:20 fail:wait_cs:30+:EIO reset:40; do
    rm -rf "$UCX_GAUDI_EMU_STATE_DIR"/*
    rc=0
    UCX_GAUDI_EMU_FAULTS=$fault timeout -k 5 120 "$perftest" "${args[@]}" \
        > "$out" 2>&1 || rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -lt 128 ] ||
        fail "$fault: exit status $rc: $(grep -v '^[|+]' "$out" | tail -n 5)"
    grep -q 'Gaudi operations of this process failed, the results are not valid' \
        "$out" || fail "$fault: no line says the results are not valid"
    n=$(grep -c 'UCX  ERROR device gaudi0 failed' "$out" || true)
    [ "$n" -eq 1 ] || fail "$fault: the device failure logged $n times"
    n=$(grep -c 'gaudi.*UCX  ERROR' "$out" || true)
    [ "$n" -le 3 ] ||
        fail "$fault: $n error lines of ours: $(grep 'UCX  ERROR' "$out" |
                                               sort | uniq -c | head -n 5)"
    ok "$fault: exit $rc, the failure logged once, $n error lines of ours"
done
