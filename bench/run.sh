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
#   8-byte put_short latency                     / the bare emulated CS +
#     WAIT_CS round trip (bench/cs_rtt.c): what the transport adds
#   host registration, rcache miss (1 MiB)       / rcache hit
#
# and between two processes on a 2-device node (each owns its Gaudi), each
# run REPS times (min / median / max printed; ratios of the medians):
#
#   gaudi_ipc D2D put_zcopy bandwidth at 4 MiB   / plain memcpy bandwidth
#   gaudi_ipc D2D put_zcopy bandwidth at 4 MiB   / cma host put_zcopy 4 MiB
#     (and, for information, the same with UCX_GAUDI_EMU_EXEC=inline: the
#     emulated DMA runs in the submitting thread, like cma's copy)
#   UCP ucp_put_bw, tag_bw -m gaudi,gaudi 4 MiB  / plain memcpy bandwidth
#   UCP tag_lat -m gaudi,gaudi 8 B               / host tag_lat 8 B (posix)
#     (and, for information, the same with the copy transport's latency
#     estimate set to the measured CS round trip: UCX 1.22's protocol
#     choice for small Gaudi messages follows that estimate)
#     (UCX_TLS=gaudi_copy,gaudi_ipc,posix,self; host: UCX_TLS=posix,self;
#     gaudi_cpy for gaudi_copy in the plugin build of UCX 1.22)
#
# and, as root, between two emulated nodes in two network namespaces
# joined by a veth pair (bench/netns.bash; skipped with a message if that
# cannot be set up), UCX_TLS=gaudi_copy,gaudi_ipc,tcp,self:
#
#   UCP tag_bw -m gaudi,gaudi 4 MiB              / host tag_bw 4 MiB
#
# Environment: BENCH_BUILD (in-tree or plugin), PREFIX and GAUDI_LIBDIR,
# the build to measure (bench/build.bash); REPS (runs
# of each two-process figure, default 5); BENCH_RESULTS=FILE (e.g.
# bench/results.md): the report also replaces this build's section of FILE,
# with the date and the machine (the figures live in one place, and are
# regenerated, never copied by hand).
# usage: bench/run.sh [ITERATIONS]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/build.bash"
iters=${1:-200}
reps=${REPS:-5}
size=$((4 << 20))
perftest="$PREFIX/bin/ucx_perftest"
work=$(mktemp -d /tmp/ucx-gaudi-bench.XXXXXX)
. "$top/bench/netns.bash"
trap 'netns_down; rm -rf "$work"' EXIT

export UCX_GAUDI_EMU_DEVICES=1
export UCX_GAUDI_EMU_STATE_DIR="$work/emu"
copy_tl=$(copy_tl_name)
[ -n "$copy_tl" ] || { echo "bench: ucx_info -d lists no gaudi_cpy" >&2; exit 1; }

# helpers, built here from bench/ (no binaries in the tree)
cc -O2 -Wall -Werror -o "$work/memcpy_bw" "$top/bench/memcpy_bw.c"
cc -O2 -Wall -Werror -I"$PREFIX/include" -o "$work/reg_cost" \
    "$top/bench/reg_cost.c" -L"$PREFIX/lib" -luct -lucs \
    -Wl,-rpath,"$PREFIX/lib"
cc -O2 -Wall -Werror -I"$top/src" -o "$work/cs_rtt" "$top/bench/cs_rtt.c" \
    -L"$GAUDI_LIBDIR" -l:libgaudi_emu.so.0 -Wl,-rpath,"$GAUDI_LIBDIR"

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


. "$top/contrib/wait-listen.bash"

# perftest2 ENV... -- ARGS...: ucx_perftest between two processes (a server
# and a client on localhost) on a 2-device emulated node; the client's
# "Final:" row as "avg_latency_usec bandwidth_MBps" (overall columns)
perftest2() {
    local envs=(UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_EMU_STATE_DIR="$work/emu2")
    local port=$((20000 + RANDOM % 12000)) srv
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

# stats2 COLUMN ENV... -- ARGS...: perftest2 (or $pair) $reps times;
# "min median max" of COLUMN (1: avg_latency_usec, 2: bandwidth_MBps)
stats2() {
    local col=$1 i v vals=()
    shift
    for ((i = 0; i < reps; ++i)); do
        v=$("${pair:-perftest2}" "$@" | awk -v c="$col" '{ print $c }')
        [ -n "$v" ] || exit 1
        vals+=("$v")
    done
    printf '%s\n' "${vals[@]}" | sort -g |
        awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)], v[NR] }'
}

memcpy_bw=$("$work/memcpy_bw" "$size" "$iters")
[ -n "$memcpy_bw" ] || exit 1
read -r _ h2d_bw < <(perftest "$copy_tl" gaudi0 -t put_bw -D zcopy \
                     -m host,gaudi -s "$size" -n "$iters")
read -r _ d2h_bw < <(perftest "$copy_tl" gaudi0 -t get -D zcopy \
                     -m host,gaudi -s "$size" -n "$iters")
# put_short 8 B and the same two ioctls with nothing around them (same
# emulator settings), interleaved $reps times: the best of each (both are
# one process on one CPU; other load on the machine only adds to them)
best() { sort -g | head -n 1; }
for ((i = 0; i < reps; ++i)); do
    perftest "$copy_tl" gaudi0 -t put_bw -D short -m host,gaudi -s 8 \
        -n 20000 | awk '{ print $1 }' >> "$work/short_lat"
    "$work/cs_rtt" "$work/emu_rtt" 20000 >> "$work/cs_rtt.out"
done
short_lat=$(best < "$work/short_lat")
cs_rtt=$(best < "$work/cs_rtt.out")
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
read -r ipc_min ipc_bw ipc_max < <(stats2 2 -- -x gaudi_ipc -d "$ipc_dev" \
    -t put_bw -D zcopy -m gaudi,gaudi -s "$size" -n "$iters")
read -r ipc_inl_min ipc_inl_bw ipc_inl_max < <(stats2 2 \
    UCX_GAUDI_EMU_EXEC=inline -- -x gaudi_ipc -d "$ipc_dev" -t put_bw \
    -D zcopy -m gaudi,gaudi -s "$size" -n "$iters")
read -r cma_min cma_bw cma_max < <(stats2 2 -- -x cma \
    -d "${cma_dev:-memory}" -t put_bw -D zcopy -s "$size" -n "$iters")
# Did gaudi_ipc get a lane? UCP 1.13.1's debug log lists each endpoint's
# lanes; newer UCX's info line of an endpoint configuration does ("cfg#N
# tag(...) rma(...)"), and its debug log deadlocks on emulated devices
# (test/e2e/ipc_perftest.sh)
if [ "${BENCH_BUILD:-in-tree}" = in-tree ]; then
    lane_log=debug lane_re='lane\[[0-9]*\]:.*gaudi_ipc/'
else
    lane_log=info lane_re='cfg#[0-9]+ .*gaudi_ipc/'
fi
ipc_lane() {
    grep -qE "$lane_re" "$work/out2.client" &&
        echo "gaudi_ipc lane" || echo "NO gaudi_ipc lane: staged"
}
ucp_tls=UCX_TLS=$copy_tl,gaudi_ipc,posix,self
ucp_env=("$ucp_tls" UCX_LOG_LEVEL=$lane_log)
read -r put_min ucp_put_bw put_max < <(stats2 2 "${ucp_env[@]}" -- \
    -t ucp_put_bw -m gaudi,gaudi -s "$size" -n "$iters")
ucp_put_lane=$(ipc_lane)
read -r tag_min ucp_tag_bw tag_max < <(stats2 2 "${ucp_env[@]}" -- \
    -t tag_bw -m gaudi,gaudi -s "$size" -n "$iters")
ucp_tag_lane=$(ipc_lane)
read -r lat_min tag_lat lat_max < <(stats2 1 \
    "$ucp_tls" -- -t tag_lat -m gaudi,gaudi -s 8 -n 10000)
# the same with the copy transport's latency estimate (LAT=auto: 8 us, a
# guess for a real Gaudi's DMA round trip) set to the emulated device's
# round trip measured above: UCX 1.22's protocols choose between eager and
# a rendezvous pipeline for small Gaudi messages by that estimate, 1.13.1's
# do not
# (the knob is UCX_GAUDI_COPY_LAT whatever the transport's name)
read -r clat_min cal_lat clat_max < <(stats2 1 "$ucp_tls" \
    UCX_GAUDI_COPY_LAT="${cs_rtt}us" -- \
    -t tag_lat -m gaudi,gaudi -s 8 -n 10000)
read -r hlat_min host_lat hlat_max < <(stats2 1 UCX_TLS=posix,self -- \
    -t tag_lat -s 8 -n 10000)
ns_tls=UCX_TLS=$copy_tl,gaudi_ipc,tcp,self
if netns_up "$work/netns"; then
    read -r nsg_min ns_gaudi nsg_max < <(pair=perftest_ns stats2 2 \
        "$ns_tls" -- -t tag_bw -m gaudi,gaudi -s "$size" -n "$iters")
    read -r nsh_min ns_host nsh_max < <(pair=perftest_ns stats2 2 \
        "$ns_tls" -- -t tag_bw -s "$size" -n "$iters")
    netns_down
    [ -n "${ns_gaudi:-}" ] && [ -n "${ns_host:-}" ] ||
        { echo "bench: no result between the namespaces" >&2; exit 1; }
fi
# (a failing measurement exits its process substitution only)
for v in ipc_bw ipc_inl_bw cma_bw ucp_put_bw ucp_tag_bw tag_lat cal_lat \
         host_lat short_lat cs_rtt; do
    [ -n "${!v:-}" ] || { echo "bench: no result for $v" >&2; exit 1; }
done

row() {  # NAME FMT OURS REFERENCE TARGET
    printf "%-52s $2 $2 %9s  %s\n" "$1" "$3" "$4" "$(ratio "$3" "$4")" "$5"
}
row2() {  # NAME FMT MIN MEDIAN MAX REFERENCE TARGET: a two-process figure
    printf "%-52s $2 $2 %9s  %s\n" "$1" "$4" "$6" "$(ratio "$4" "$6")" "$7"
    printf "%-52s %s\n" "    min / median / max of $reps" \
        "$(printf "$2 / $2 / $2" "$3" "$4" "$5")"
}

# the report, also kept for BENCH_RESULTS
report_begin
echo "build: ${BENCH_BUILD:-in-tree}, UCX $("$PREFIX/bin/ucx_info" -v |
    sed -n 's/.*[Vv]ersion[=: ]*\([0-9][0-9.]*\).*/\1/p' | head -n 1)," \
     "copy transport $copy_tl"
printf '%-52s %12s %12s %9s  %s\n' measure ours reference ratio target
row "H2D put_zcopy 4 MiB, MB/s (ref: memcpy)" %12.1f "$h2d_bw" "$memcpy_bw" \
    ">= 0.9"
row "D2H get_zcopy 4 MiB, MB/s (ref: memcpy)" %12.1f "$d2h_bw" "$memcpy_bw" \
    ">= 0.9"
row "put_short 8 B, usec (ref: cma put_zcopy 8 B)" %12.3f "$short_lat" \
    "$cma_lat" "<= 1.0"
row "put_short 8 B, usec, best of $reps (ref: CS+WAIT_CS)" %12.3f \
    "$short_lat" "$cs_rtt" "<= 1.3"
row "host reg 1 MiB, usec: rcache miss / hit" %12.3f "$reg_miss" "$reg_hit" \
    ">= 50"
row2 "2 procs: gaudi_ipc D2D put_zcopy 4 MiB (ref: memcpy)" %12.1f \
    "$ipc_min" "$ipc_bw" "$ipc_max" "$memcpy_bw" ">= 0.9"
row "2 procs: gaudi_ipc D2D put_zcopy 4 MiB (ref: cma)" %12.1f "$ipc_bw" \
    "$cma_bw" ">= 1.0"
row "2 procs: gaudi_ipc put_zcopy min / median" %12.1f "$ipc_min" "$ipc_bw" \
    ">= 0.7"
row2 "  same, emulator DMA inline in the CS (ref: cma)" %12.1f \
    "$ipc_inl_min" "$ipc_inl_bw" "$ipc_inl_max" "$cma_bw" "(info)"
row2 "2 procs: cma host put_zcopy 4 MiB (ref: memcpy)" %12.1f \
    "$cma_min" "$cma_bw" "$cma_max" "$memcpy_bw" "(info)"
row2 "2 procs: UCP ucp_put_bw gaudi 4 MiB (ref: memcpy)" %12.1f \
    "$put_min" "$ucp_put_bw" "$put_max" "$memcpy_bw" \
    ">= 0.8  ($ucp_put_lane)"
row2 "2 procs: UCP tag_bw gaudi 4 MiB (ref: memcpy)" %12.1f \
    "$tag_min" "$ucp_tag_bw" "$tag_max" "$memcpy_bw" \
    ">= 0.8  ($ucp_tag_lane)"
row2 "2 procs: UCP tag_lat gaudi 8 B, usec (ref: host)" %12.3f \
    "$lat_min" "$tag_lat" "$lat_max" "$host_lat" "<= 5"
row2 "  same, copy LAT = the CS round trip (ref: host)" %12.3f \
    "$clat_min" "$cal_lat" "$clat_max" "$host_lat" "(info)"
row2 "2 procs: UCP tag_lat host 8 B, usec (posix)" %12.3f \
    "$hlat_min" "$host_lat" "$hlat_max" "$host_lat" "(ref)"
if [ -n "${ns_gaudi:-}" ]; then
    row2 "2 nodes over tcp: UCP tag_bw gaudi 4 MiB (ref: host)" %12.1f \
        "$nsg_min" "$ns_gaudi" "$nsg_max" "$ns_host" ">= 0.8"
    row2 "2 nodes over tcp: UCP tag_bw host 4 MiB" %12.1f \
        "$nsh_min" "$ns_host" "$nsh_max" "$ns_host" "(ref)"
else
    echo "2 nodes over tcp: skipped: $netns_why"
fi
echo "(MB/s; 2 procs: server and client ucx_perftest on localhost, each"
echo " owning one Gaudi of a 2-device node; cma: -x cma -t put_bw -D zcopy,"
echo " host memory; two-process ratios compare medians of $reps runs; tag_lat"
echo " is half the round trip; the emulated DMA runs in the thread that polls"
echo " for its completion)"
if [ "$(nproc)" -lt 4 ]; then
    echo "note: $(nproc) CPUs: both processes of a two-process test poll, so"
    echo " any other load on the machine shows in the two-process figures"
    echo " (see min / max)"
fi

report_end run.sh
