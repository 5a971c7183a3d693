#!/usr/bin/env bash
# The main job, on an emulated 2-device Gaudi node: show the Gaudi part of
# `ucx_info -d`, then a UCP application allocates Gaudi memory, UCP detects
# it by address, and a pattern goes host -> Gaudi -> host intact.
# Run by contrib/quickstart.sh after the build; may be run again by itself.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make --no-print-directory -s build-tests
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
        awk '$1 == "Final:" { print $4, $6 }' | tail -n 1
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
