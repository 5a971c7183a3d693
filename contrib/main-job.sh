#!/usr/bin/env bash
# The main job, on an emulated 2-device Gaudi node: show the Gaudi part of
# `ucx_info -d`, then a UCP application allocates Gaudi memory, UCP detects
# it by address, and a pattern goes host -> Gaudi -> host intact; gaudi_copy's
# bandwidth and latency; and Gaudi -> Gaudi bandwidth between two processes
# (each owning one device) over gaudi_ipc.
# Run by contrib/quickstart.sh after the build; may be run again by itself.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make --no-print-directory -s build-main
eval "$(make --no-print-directory -s print-test-env)"
unset UCX_SRC  # UCX warns about UCX_* variables it does not know

export UCX_GAUDI_EMU_DEVICES=2
export UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d /tmp/ucx-gaudi-main.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

echo "== ucx_info -d on an emulated node of $UCX_GAUDI_EMU_DEVICES Gaudi2 (the Gaudi part)"
"$PREFIX/bin/ucx_info" -d |
    awk '/^# Memory domain:/ { show = ($0 ~ /gaudi/) }
         /^# Connection manager:/ { show = 0 }
         show'

echo
echo "== UCP allocation, detection and round trip through the Gaudi DMA engine"
for size in 8 65536 4194304; do
    "$DEMO" roundtrip "$size"
done

echo
echo "== gaudi_copy through ucx_perftest on gaudi0 (emulated DMA engine; 4 MiB zcopy, 8 B short)"
perftest() {  # ARGS...: "avg_latency_usec bandwidth_MBps" of the Final row
    "$PREFIX/bin/ucx_perftest" -l -x gaudi_copy -d gaudi0 "$@" 2>&1 |
        awk '$1 == "Final:" { print $5, $7 }' | tail -n 1
}
printf '%-34s %14s %14s\n' "operation" "latency (us)" "bandwidth (MB/s)"
while read -r name args; do
    read -r lat bw < <(perftest $args)
    printf '%-34s %14.2f %14.1f\n' "$name" "${lat:-nan}" "${bw:-nan}"
done <<'TABLE'
H2D_put_zcopy_4MiB   -t put_bw -D zcopy -m host,gaudi -s 4194304 -n 100
D2H_get_zcopy_4MiB   -t get -D zcopy -m host,gaudi -s 4194304 -n 100
D2D_put_zcopy_4MiB   -t put_bw -D zcopy -m gaudi,gaudi -s 4194304 -n 100
H2D_put_short_8B     -t put_bw -D short -m host,gaudi -s 8 -n 10000
D2H_get_short_8B     -t get -D short -m host,gaudi -s 8 -n 10000
TABLE

echo
echo "== gaudi_ipc: Gaudi -> Gaudi between two processes, each owning one of the 2 devices"
echo "   (ucx_perftest server + client on localhost, 4 MiB, -m gaudi,gaudi; the client"
echo "   writes/reads the server's Gaudi memory through the DMA-BUF it exported; UCP's"
echo "   ucp_put and tag_bw's rendezvous go the same way)"
# (awk reads all of ucx_info's output: one that stopped at the first match
# could kill ucx_info with SIGPIPE)
ipc_dev=$("$PREFIX/bin/ucx_info" -d |
          awk '/Transport: gaudi_ipc$/ { f = 1 }
               f && /Device:/ && !d { d = $3 } END { print d }')
if [ -z "$ipc_dev" ]; then
    echo "ucx_info -d lists no gaudi_ipc transport" >&2
    exit 1
fi
ipc_out=$(mktemp -d /tmp/ucx-gaudi-main-ipc.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$ipc_out"' EXIT
listening() {  # PORT: something listens on TCP PORT (waits up to 10 s)
    local hex
    hex=$(printf ':%04X ' "$1")
    for _ in $(seq 100); do
        awk -v p="$hex" '$4 == "0A" && index($2 " ", p) { f = 1 } END { exit !f }' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
perftest2() {  # TLS ARGS...: "avg_latency_usec bandwidth_MBps" of the client's Final
               # row (its "overall" columns: "average" is the last interval's)
    local tls=$1 port=$((20000 + RANDOM % 12000)) srv
    shift
    UCX_TLS=$tls timeout 120 "$PREFIX/bin/ucx_perftest" "$@" -p "$port" \
        > "$ipc_out/server" 2>&1 & srv=$!
    if ! listening "$port" ||
       ! UCX_TLS=$tls timeout 120 "$PREFIX/bin/ucx_perftest" localhost "$@" -p "$port" \
             > "$ipc_out/client" 2>&1 ||
       ! wait $srv; then
        kill $srv 2>/dev/null || true
        tail -n 5 "$ipc_out/server" "$ipc_out/client" >&2
        return 1
    fi
    awk '$1 == "Final:" { print $5, $7 }' "$ipc_out/client" | tail -n 1
}
printf '%-34s %14s %14s\n' "operation" "latency (us)" "bandwidth (MB/s)"
while read -r name tls args; do
    res=$(perftest2 "$tls" $args) ||
        { echo "$name failed between two processes" >&2; exit 1; }
    read -r lat bw <<< "$res"
    printf '%-34s %14.2f %14.1f\n' "$name" "${lat:-nan}" "${bw:-nan}"
done <<TABLE
D2D_put_zcopy_4MiB_gaudi_ipc   all  -x gaudi_ipc -d $ipc_dev -t put_bw -D zcopy -m gaudi,gaudi -s 4194304 -n 100
D2D_get_zcopy_4MiB_gaudi_ipc   all  -x gaudi_ipc -d $ipc_dev -t get -D zcopy -m gaudi,gaudi -s 4194304 -n 100
UCP_ucp_put_bw_4MiB_gaudi      gaudi_copy,gaudi_ipc,posix,self  -t ucp_put_bw -m gaudi,gaudi -s 4194304 -n 100
UCP_tag_bw_4MiB_gaudi          gaudi_copy,gaudi_ipc,posix,self  -t tag_bw -m gaudi,gaudi -s 4194304 -n 100
TABLE

echo
echo "== when a Gaudi fails in the middle of UCP traffic: see docs/faults.md"
echo "   (the fault matrix: each driver fault in either process, tag/put/get/AM,"
echo "   error modes none and peer; and the soak; both run by contrib/test.sh)"
