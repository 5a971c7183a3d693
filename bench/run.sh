#!/usr/bin/env bash
#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# gaudi_copy benchmark on an emulated node: every number is measured in this
# one run and printed as a ratio to a reference measured beside it. These are
# measurements, not tests: nothing here passes or fails on a number.
#
#   H2D / D2H put/get zcopy bandwidth at 4 MiB   / plain memcpy bandwidth
#   8-byte put_short latency                     / cma 8-byte put_zcopy latency
#   host registration, rcache miss (1 MiB)       / rcache hit
#
# Environment: PREFIX (UCX + gaudi install, default build/install).
# usage: bench/run.sh [ITERATIONS]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-$top/build/install}
iters=${1:-200}
size=$((4 << 20))
perftest="$PREFIX/bin/ucx_perftest"
work=$(mktemp -d /tmp/ucx-gaudi-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

export UCX_GAUDI_EMU_DEVICES=1
export UCX_GAUDI_EMU_STATE_DIR="$work/emu"

# helpers, built here from bench/ (no binaries in the tree)
cc -O2 -Wall -Werror -o "$work/memcpy_bw" "$top/bench/memcpy_bw.c"
cc -O2 -Wall -Werror -I"$PREFIX/include" -o "$work/reg_cost" \
    "$top/bench/reg_cost.c" -L"$PREFIX/lib" -luct -lucs \
    -Wl,-rpath,"$PREFIX/lib"

# perftest TEST DEVICE ARGS...: the "Final:" row of a loopback UCT test,
# as "avg_latency_usec bandwidth_MBps"
perftest() {
    local tl=$1 dev=$2
    shift 2
    "$perftest" -l -x "$tl" -d "$dev" "$@" > "$work/out" 2>&1 ||
        { cat "$work/out" >&2; echo "bench: ucx_perftest $* failed" >&2;
          exit 1; }
    awk '$1 == "Final:" { print $4, $6 }' "$work/out" | tail -n 1
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

memcpy_bw=$("$work/memcpy_bw" "$size" "$iters")
[ -n "$memcpy_bw" ] || exit 1
read -r _ h2d_bw < <(perftest gaudi_copy gaudi0 -t put_bw -D zcopy \
                     -m host,gaudi -s "$size" -n "$iters")
read -r _ d2h_bw < <(perftest gaudi_copy gaudi0 -t get -D zcopy \
                     -m host,gaudi -s "$size" -n "$iters")
read -r short_lat _ < <(perftest gaudi_copy gaudi0 -t put_bw -D short \
                        -m host,gaudi -s 8 -n 10000)
cma_dev=$("$PREFIX/bin/ucx_info" -d | awk '/Transport: cma/ { f = 1 }
                                          f && /Device:/ { print $3; exit }')
read -r cma_lat _ < <(perftest cma "${cma_dev:-memory}" -t put_bw -D zcopy \
                      -s 8 -n 10000)
reg=$(UCX_GAUDI_COPY_RCACHE=y "$work/reg_cost" $((1 << 20)) 64)
read -r reg_miss reg_hit <<< "$reg"

printf '%-46s %12s %12s %9s  %s\n' measure ours reference ratio target
printf '%-46s %12.1f %12.1f %9s  %s\n' \
    "H2D put_zcopy 4 MiB, MB/s (ref: memcpy)" "$h2d_bw" "$memcpy_bw" \
    "$(ratio "$h2d_bw" "$memcpy_bw")" ">= 0.9"
printf '%-46s %12.1f %12.1f %9s  %s\n' \
    "D2H get_zcopy 4 MiB, MB/s (ref: memcpy)" "$d2h_bw" "$memcpy_bw" \
    "$(ratio "$d2h_bw" "$memcpy_bw")" ">= 0.9"
printf '%-46s %12.3f %12.3f %9s  %s\n' \
    "put_short 8 B, usec (ref: cma put_zcopy 8 B)" "$short_lat" "$cma_lat" \
    "$(ratio "$short_lat" "$cma_lat")" "<= 1.0"
printf '%-46s %12.3f %12.3f %9s  %s\n' \
    "host reg 1 MiB, usec: rcache miss / hit" "$reg_miss" "$reg_hit" \
    "$(ratio "$reg_miss" "$reg_hit")" ">= 50"
