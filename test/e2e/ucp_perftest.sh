# UCP ucx_perftest between two processes on a 2-device emulated node, on
# Gaudi memory at both ends, staged through host memory by gaudi_copy
# (UCX_TLS=gaudi_copy,posix,cma,self): each completes and reports bandwidth.
# (ucp_put_bw/ucp_get go through UCP's RMA over active messages, which the
# core patch makes memory-type aware; gaudi_ipc will give them real lanes.)
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=2 UCX_TLS=$GAUDI_COPY_TL,posix,cma,self
perftest="$PREFIX/bin/ucx_perftest"
dir=$(mktemp -d)
port=$((20000 + RANDOM % 12000))

for test in tag_bw ucp_am_bw ucp_put_bw ucp_get; do
    for size in 8 65536 4194304; do
        args=(-t "$test" -m gaudi,gaudi -s "$size" -n 20 -p "$port")
        timeout 120 "$perftest" "${args[@]}" > "$dir/server" 2>&1 & srv=$!
        sleep 1
        timeout 120 "$perftest" localhost "${args[@]}" > "$dir/client" 2>&1 ||
            fail "$test $size: client failed: $(tail -n 5 "$dir/client")"
        wait $srv || fail "$test $size: server failed: $(tail -n 5 "$dir/server")"
        bw=$(awk '$1 == "Final:" { print $7 }' "$dir/client")
        [ -n "$bw" ] || fail "$test $size: no result: $(cat "$dir/client")"
        ok "$test $size bytes gaudi->gaudi between two processes: $bw MB/s"
        port=$((port + 1))
    done
done
rm -rf "$dir"
