#!/usr/bin/env bash
#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# gaudi_copy on a modelled Gaudi2 (UCX_GAUDI_EMU_PROFILE=gaudi2,
# docs/emulator.md §8b): host <-> device zcopy bandwidth in the emulator's
# model time (bench/model_bw.c), as a fraction of the modelled PCIe link
# (25 GB/s per direction), for each submission latency L in $LATENCIES and
# each size in $SIZES; then the same figures with the emulator's copy
# slowed down 4 times, which must not move them (the model does not count
# the emulator's copying; the wall clock does). REPS runs of each (min /
# median / max). Measurements, not tests: nothing passes or fails here.
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


# figure L SLOWDOWN DIR SIZE: "min median max" of the model GB/s over $reps
# runs, then the median wall GB/s and the median CSs in flight
figure() {
    local lat=$1 slow=$2 dir=$3 size=$4 i
    for ((i = 0; i < reps; ++i)); do
        UCX_GAUDI_EMU_PROFILE_LATENCY="${lat}us" \
        UCX_GAUDI_EMU_COPY_SLOWDOWN="$slow" \
            "$work/model_bw" "$copy_tl" "$dir" "$size" \
                $(( (mib << 20) / size )) ||
            { echo "bench: model_bw $dir $size failed" >&2; exit 1; }
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
printf '%-6s %-4s %-8s %-8s %22s %7s %9s %6s\n' L dir size slowdown \
    "model GB/s min/med/max" "/ link" "wall GB/s" depth
for lat in ${LATENCIES:-2 8 20}; do
    for size in ${SIZES:-65536 262144 4194304}; do
        for dir in put get; do
            for slow in 1 4; do
                # the slowed-down copy is shown at the middle latency only
                [ "$slow" = 1 ] || [ "$lat" = 8 ] || continue
                read -r min med max wall depth < <(figure "$lat" "$slow" \
                                                          "$dir" "$size")
                printf '%-6s %-4s %-8s %-8s %6.2f %6.2f %6.2f %7s %9.2f %6.1f\n' \
                    "${lat}us" "$([ "$dir" = put ] && echo H2D || echo D2H)" \
                    "$(human "$size")" "x$slow" "$min" "$med" "$max" \
                    "$(ratio "$med" "${link%e9}")" "$wall" "$depth"
            done
        done
    done
done
echo "(model GB/s: bytes / (wall time - the emulator's copying); / link: the"
echo " median over 25 GB/s; depth: CSs of the context in flight at each"
echo " submission, median run's average; x4: each emulated copy took 4 times"
echo " as long, which moves the wall figure and must not move the model one)"
report_end profile.sh
