#!/usr/bin/env bash
#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# gaudi_copy on a modelled Gaudi2 (UCX_GAUDI_EMU_PROFILE=gaudi2,
# docs/emulator.md §8b): host <-> device bandwidth in the emulator's model
# time, as a fraction of the modelled PCIe link (25 GB/s per direction),
# for each submission latency L in $LATENCIES and each size in $SIZES:
#
#   uct put/get   gaudi_copy zcopy, as many in flight as it takes
#                 (bench/model_bw.c); with the emulator's copy slowed down
#                 4 times too, which must not move them (the model does not
#                 count the emulator's copying; the wall clock does)
#   ucp put/get/tag   the same through UCP, in one process over an endpoint
#                 to its own worker (bench/ucp_model_bw.c): ucp_put_nbx /
#                 ucp_get_nbx between host and Gaudi memory, tag messages
#                 from host memory into Gaudi memory; all posted at once
#
# REPS runs of each (min / median / max). Measurements, not tests: nothing
# passes or fails here.
#
# Environment: BENCH_BUILD, PREFIX, GAUDI_LIBDIR (bench/build.bash); REPS
# (default 5); LATENCIES (default "2 8 20", microseconds); SIZES (default
# "65536 262144 4194304"); BENCH_RESULTS=FILE: the report also replaces
# this build's profile section of FILE (e.g. bench/results.md).
# usage: bench/profile.sh [MIB]   (MiB moved per run, default 256)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/build.bash"
work=$(mktemp -d /tmp/ucx-gaudi-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
reps=${REPS:-5}
mib=${1:-256}
link=25e9   # the profile's PCIe link, bytes/s per direction

export UCX_GAUDI_EMU_DEVICES=1
export UCX_GAUDI_EMU_STATE_DIR="$work/emu"
export UCX_GAUDI_EMU_PROFILE=gaudi2

copy_tl=$(copy_tl_name)
[ -n "$copy_tl" ] || { echo "bench: ucx_info -d lists no gaudi_cpy" >&2; exit 1; }
cc -O2 -Wall -Werror -I"$PREFIX/include" -I"$top/src" -o "$work/model_bw" \
    "$top/bench/model_bw.c" -L"$PREFIX/lib" -luct -lucs -ldl \
    -Wl,-rpath,"$PREFIX/lib"
cc -O2 -Wall -Werror -I"$PREFIX/include" -I"$top/src" \
    -o "$work/ucp_model_bw" "$top/bench/ucp_model_bw.c" \
    "$top/test/e2e/ucp/ucp_app.c" -L"$PREFIX/lib" -lucp -lucs -ldl \
    -Wl,-rpath,"$PREFIX/lib"


# figure L SLOWDOWN LAYER OP SIZE: "min median max" of the model GB/s over
# $reps runs, then the median wall GB/s and the median CSs in flight
figure() {
    local lat=$1 slow=$2 layer=$3 op=$4 size=$5 i
    local count=$(( (mib << 20) / size ))
    for ((i = 0; i < reps; ++i)); do
        if [ "$layer" = uct ]; then
            UCX_GAUDI_EMU_PROFILE_LATENCY="${lat}us" \
            UCX_GAUDI_EMU_COPY_SLOWDOWN="$slow" \
                "$work/model_bw" "$copy_tl" "$op" "$size" "$count"
        else
            UCX_GAUDI_EMU_PROFILE_LATENCY="${lat}us" \
            UCX_GAUDI_EMU_COPY_SLOWDOWN="$slow" \
            UCX_TLS="$copy_tl,self,posix" UCX_WARN_UNUSED_ENV_VARS=n \
                "$work/ucp_model_bw" "$op" "$size" "$count"
        fi || { echo "bench: $layer $op $size failed" >&2; exit 1; }
    done > "$work/runs"
    sort -g -k1 "$work/runs" |
        awk '{ m[NR] = $1 } END { printf "%s %s %s", m[1], m[int((NR + 1) / 2)], m[NR] }'
    for c in 2 3; do
        printf ' %s' "$(sort -g -k$c "$work/runs" |
                        awk -v c=$c -v n="$reps" 'NR == int((n + 1) / 2) { print $c }')"
    done
    echo
}

# human SIZE: 64 KiB, 4 MiB
human() {
    awk -v s="$1" 'BEGIN { if (s >= 1048576) printf "%d MiB", s / 1048576;
                           else printf "%d KiB", s / 1024 }'
}

report_begin
echo "build: ${BENCH_BUILD:-in-tree}, copy transport $copy_tl, profile gaudi2" \
     "(link 25 GB/s per direction, gap 1 us), $reps runs of $mib MiB each"
printf '%-6s %-4s %-4s %-4s %-8s %-4s %22s %7s %9s %6s\n' L via op dir size \
    copy "model GB/s min/med/max" "/ link" "wall GB/s" depth
# row L SLOWDOWN LAYER OP SIZE
row() {
    local min med max wall depth
    read -r min med max wall depth < <(figure "$@")
    printf '%-6s %-4s %-4s %-4s %-8s %-4s %6.2f %6.2f %6.2f %7s %9.2f %6.1f\n' \
        "${1}us" "$3" "$4" "$([ "$4" = get ] && echo D2H || echo H2D)" \
        "$(human "$5")" "x$2" "$min" "$med" "$max" \
        "$(ratio "$med" "${link%e9}")" "$wall" "$depth"
}
for lat in ${LATENCIES:-2 8 20}; do
    for size in ${SIZES:-65536 262144 4194304}; do
        for op in put get; do
            row "$lat" 1 uct "$op" "$size"
            # the slowed-down copy is shown at the middle latency only
            [ "$lat" != 8 ] || row "$lat" 4 uct "$op" "$size"
        done
        for op in put get tag; do
            row "$lat" 1 ucp "$op" "$size"
        done
    done
done
echo "(model GB/s: bytes / (wall time - the emulator's copying); / link: the"
echo " median over 25 GB/s; depth: CSs of the context in flight at each"
echo " submission, median run's average; copy x4: each emulated copy took 4"
echo " times as long, which moves the wall figure and must not move the model"
echo " one; ucp: one process, an endpoint to its own worker,"
echo " UCX_TLS=$copy_tl,self,posix)"
report_end profile.sh
