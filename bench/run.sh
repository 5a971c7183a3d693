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
# and between two processes on a 2-device node (each owns its Gaudi):
#
#   gaudi_ipc D2D put_zcopy bandwidth at 4 MiB   / plain memcpy bandwidth
#   gaudi_ipc D2D put_zcopy bandwidth at 4 MiB   / cma host put_zcopy 4 MiB
#     (and, for information, the same with UCX_GAUDI_EMU_EXEC=inline: the
#     emulated DMA runs in the submitting thread, like cma's copy)
#   UCP ucp_put_bw, tag_bw -m gaudi,gaudi 4 MiB  / plain memcpy bandwidth
#     (UCX_TLS=gaudi_copy,gaudi_ipc,posix,self)
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
# as "avg_latency_usec bandwidth_MBps" (the "overall" columns: the
# "average" ones of the Final row cover only the last report interval)
perftest() {
    local tl=$1 dev=$2
    shift 2
    "$perftest" -l -x "$tl" -d "$dev" "$@" > "$work/out" 2>&1 ||
        { cat "$work/out" >&2; echo "bench: ucx_perftest $* failed" >&2;
          exit 1; }
    awk '$1 == "Final:" { print $5, $7 }' "$work/out" | tail -n 1
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

. "$top/contrib/wait-listen.bash"

# perftest2 ENV... -- ARGS...: ucx_perftest between two processes (a server
# and a client on localhost) on a 2-device emulated node; the client's
# "Final:" row as "avg_latency_usec bandwidth_MBps" (overall columns)
perftest2() {
    local envs=(UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_EMU_STATE_DIR="$work/emu2")
    local port=$((20000 + RANDOM % 20000)) srv
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout 300 "$perftest" "$@" -p "$port" \
        > "$work/out2.server" 2>&1 & srv=$!
    if ! wait_listen "$port" ||
       ! env "${envs[@]}" timeout 300 "$perftest" localhost "$@" -p "$port" \
             > "$work/out2.client" 2>&1 ||
       ! wait $srv; then
        kill $srv 2>/dev/null || true
        cat "$work/out2.server" "$work/out2.client" >&2
        echo "bench: ucx_perftest $* between two processes failed" >&2
        exit 1
    fi
    awk '$1 == "Final:" { print $5, $7 }' "$work/out2.client" | tail -n 1
}

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

# two processes: gaudi_ipc device -> device, and its references
ipc_dev=$(UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_EMU_STATE_DIR="$work/emu2" \
          "$PREFIX/bin/ucx_info" -d | awk '/Transport: gaudi_ipc$/ { f = 1 }
                                          f && /Device:/ { print $3; exit }')
[ -n "$ipc_dev" ] || { echo "bench: ucx_info -d lists no gaudi_ipc" >&2; exit 1; }
read -r _ ipc_bw < <(perftest2 -- -x gaudi_ipc -d "$ipc_dev" -t put_bw \
                     -D zcopy -m gaudi,gaudi -s "$size" -n "$iters")
read -r _ ipc_inl_bw < <(perftest2 UCX_GAUDI_EMU_EXEC=inline -- -x gaudi_ipc \
                         -d "$ipc_dev" -t put_bw -D zcopy -m gaudi,gaudi \
                         -s "$size" -n "$iters")
read -r _ cma_bw < <(perftest2 -- -x cma -d "${cma_dev:-memory}" -t put_bw \
                     -D zcopy -s "$size" -n "$iters")
# UCP's debug log lists each endpoint's lanes: did gaudi_ipc get one?
ipc_lane() {
    grep -q 'lane\[[0-9]*\]:.*gaudi_ipc/' "$work/out2.client" &&
        echo "gaudi_ipc lane" || echo "NO gaudi_ipc lane: staged"
}
ucp_env=("UCX_TLS=gaudi_copy,gaudi_ipc,posix,self" UCX_LOG_LEVEL=debug)
read -r _ ucp_put_bw < <(perftest2 "${ucp_env[@]}" -- -t ucp_put_bw \
                         -m gaudi,gaudi -s "$size" -n "$iters")
ucp_put_lane=$(ipc_lane)
read -r _ ucp_tag_bw < <(perftest2 "${ucp_env[@]}" -- -t tag_bw \
                         -m gaudi,gaudi -s "$size" -n "$iters")
ucp_tag_lane=$(ipc_lane)
# (a failing measurement exits its process substitution only)
for v in ipc_bw ipc_inl_bw cma_bw ucp_put_bw ucp_tag_bw; do
    [ -n "${!v:-}" ] || { echo "bench: no result for $v" >&2; exit 1; }
done

printf '%-52s %12s %12s %9s  %s\n' measure ours reference ratio target
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "H2D put_zcopy 4 MiB, MB/s (ref: memcpy)" "$h2d_bw" "$memcpy_bw" \
    "$(ratio "$h2d_bw" "$memcpy_bw")" ">= 0.9"
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "D2H get_zcopy 4 MiB, MB/s (ref: memcpy)" "$d2h_bw" "$memcpy_bw" \
    "$(ratio "$d2h_bw" "$memcpy_bw")" ">= 0.9"
printf '%-52s %12.3f %12.3f %9s  %s\n' \
    "put_short 8 B, usec (ref: cma put_zcopy 8 B)" "$short_lat" "$cma_lat" \
    "$(ratio "$short_lat" "$cma_lat")" "<= 1.0"
printf '%-52s %12.3f %12.3f %9s  %s\n' \
    "host reg 1 MiB, usec: rcache miss / hit" "$reg_miss" "$reg_hit" \
    "$(ratio "$reg_miss" "$reg_hit")" ">= 50"
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "2 procs: gaudi_ipc D2D put_zcopy 4 MiB (ref: memcpy)" "$ipc_bw" \
    "$memcpy_bw" "$(ratio "$ipc_bw" "$memcpy_bw")" ">= 0.9"
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "2 procs: gaudi_ipc D2D put_zcopy 4 MiB (ref: cma)" "$ipc_bw" \
    "$cma_bw" "$(ratio "$ipc_bw" "$cma_bw")" ">= 1.0"
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "  same, emulator DMA inline in the CS (ref: cma)" "$ipc_inl_bw" \
    "$cma_bw" "$(ratio "$ipc_inl_bw" "$cma_bw")" "(info)"
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "2 procs: UCP ucp_put_bw gaudi 4 MiB (ref: memcpy)" "$ucp_put_bw" \
    "$memcpy_bw" "$(ratio "$ucp_put_bw" "$memcpy_bw")" \
    ">= 0.8  ($ucp_put_lane)"
printf '%-52s %12.1f %12.1f %9s  %s\n' \
    "2 procs: UCP tag_bw gaudi 4 MiB (ref: memcpy)" "$ucp_tag_bw" \
    "$memcpy_bw" "$(ratio "$ucp_tag_bw" "$memcpy_bw")" \
    ">= 0.8  ($ucp_tag_lane)"
echo "(MB/s; 2 procs: server and client ucx_perftest on localhost, each owning"
echo " one Gaudi of a 2-device node; cma: -x cma -t put_bw -D zcopy, host memory)"
if [ "$(nproc)" -lt 4 ]; then
    echo "note: $(nproc) CPUs: in the 2-process UCT test both ucx_perftest processes"
    echo " poll and the emulated DMA engine (a thread of the initiator, by default)"
    echo " competes with them for a CPU, so its bandwidth is scheduler-bound here"
fi
