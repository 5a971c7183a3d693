# Loopback through both transports (issue 20.1): ucx_perftest -l runs the
# initiator and the target in one process, which is what UCP's self
# endpoints do too. gaudi_copy reaches itself: every UCT operation it offers,
# on Gaudi and host memory, must end with a result and exit status 0.
# gaudi_ipc does not reach its own process: the loopback must fail cleanly
# (before the fix: a segfault in uct_gaudi_ipc_rkey_release after
# "Destination is unreachable", then a double free of the key's mapping).
# Then UCP over self endpoints, gaudi_ipc in UCX_TLS.
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=1
perftest="$PREFIX/bin/ucx_perftest"
out=$(mktemp)
trap 'rm -rf "$out" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

# run WHAT ARGS...: one loopback perftest; it must exit 0 with a Final line
run() {
    local what=$1 rc=0
    shift
    timeout 120 "$perftest" -l -n 50 "$@" > "$out" 2>&1 || rc=$?
    [ $rc -eq 0 ] ||
        fail "$what: exit status $rc: $(grep -v '^[|+]' "$out" | tail -n 15)"
    grep -q '^Final:' "$out" || fail "$what: no result: $(tail -n 15 "$out")"
    ! grep -E 'UCX +(ERROR|WARN)' "$out" ||
        fail "$what: errors or warnings were logged"
    ok "$what: $(awk '$1 == "Final:" { print $7 " MB/s" }' "$out")"
}

# gaudi_ipc does not reach its own process, as UCX's cuda_ipc (UCP's
# memory-type endpoints to self must not take it: gaudi_ipc_iface.c): the
# loopback ends with UCX's "Destination is unreachable" and a non-zero exit
# status, on every memory pair, never a signal or a hang
for mem in gaudi,gaudi host,gaudi; do
    rc=0
    timeout 120 "$perftest" -l -n 50 -t put_bw -x gaudi_ipc -d gaudi_ipc \
        -D zcopy -m "$mem" -s 65536 > "$out" 2>&1 || rc=$?
    { [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
      { [ $rc -lt 128 ] || [ $rc -eq 255 ]; } &&
      grep -qE 'Destination is unreachable|Unsupported memory type host' \
          "$out"; } ||
        fail "gaudi_ipc loopback $mem: exit $rc: $(tail -n 15 "$out")"
    ok "gaudi_ipc loopback $mem: refused cleanly, exit $rc" \
       "($(grep -m1 -oE 'Destination is unreachable|Unsupported.*' "$out"))"
done
for mem in gaudi,gaudi host,gaudi gaudi,host; do
    run "$GAUDI_COPY_TL put_bw zcopy $mem" -t put_bw -x "$GAUDI_COPY_TL" \
        -d gaudi0 -D zcopy -m "$mem" -s 65536
    run "$GAUDI_COPY_TL put_bw short $mem" -t put_bw -x "$GAUDI_COPY_TL" \
        -d gaudi0 -D short -m "$mem" -s 4096
    run "$GAUDI_COPY_TL get zcopy $mem" -t get -x "$GAUDI_COPY_TL" \
        -d gaudi0 -D zcopy -m "$mem" -s 65536
done

# UCP through self endpoints, gaudi_ipc in the list
export UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,self,posix
for t in ucp_put_bw ucp_get tag_bw ucp_am_bw; do
    for size in 8 65536 4194304; do
        run "UCP $t $size gaudi,gaudi" -t "$t" -m gaudi,gaudi -s "$size"
    done
done
