#!/usr/bin/env bash
#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# The application's own Gaudi memory (issue 27) on an emulated node of two
# devices: what UCX's hook of ioctl() costs, and whether the memory it
# learns moves as fast as UCX's own. Every figure is REPS runs (min /
# median / max), each in a fresh emulator state directory; what is
# compared is measured in the same run. Measurements, not tests: nothing
# here passes or fails on a number.
#
#  1. In one process that owns a Gaudi (through ucp_init, and through
#     uct_md_open of gaudi_cpy), bench/app_hook.c: ns per ALLOC, MAP, UNMAP
#     and FREE of device memory made (a) by raw ioctl() on the compute fd,
#     which the hook learns, and (b) the same requests through the driver
#     seam, which it does not see; (a) - (b), taken in each run, is the
#     hook's cost. Then the pass-through: ioctl(pipe, FIONREAD) through the
#     patched PLT against syscall(SYS_ioctl) (what every other ioctl of the
#     process pays; also with no hook, UCX_GAUDI_APP_MEMORY=n), a memory
#     request code flagged as UCX's own (how UCX's driver calls pass); and
#     two parts of the hook's cost alone: its copy of a request's argument
#     in and back out (process_vm_readv and process_vm_writev), and its
#     look-up of an emulator's fd (fd_path: under the emulator only).
#  2. Two processes (test/e2e/gaudi_ipc_ucp pair, UCX_TLS=<copy>,
#     gaudi_ipc,posix,self): the client's UCP put and tag bandwidth of
#     4 MiB of its Gaudi buffer into the server's, each operation waited
#     for, on buffers the application's runtime allocated by raw ioctl()
#     (-R, learned by the hook, exported by gaudi_ipc) against buffers UCX
#     allocated (the goal: >= 0.9), and on the runtime's memory the hook
#     did not see (-A: staged) for contrast.
#
# Environment: BENCH_BUILD (in-tree or plugin), PREFIX and GAUDI_LIBDIR,
# the build to measure (bench/build.bash); REPS (default 5); ROUNDS,
# BATCH, PASSES (bench/app_hook.c's, default 40, 16, 20000);
# BENCH_RESULTS=FILE (e.g. bench/results.md): the report also replaces
# this build's section of FILE, with the date and the machine.
# usage: bench/app_memory.sh [ITERATIONS]   (bandwidth operations per run,
#                                            default 1000)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/build.bash"
iters=${1:-1000}
reps=${REPS:-5}
size=$((4 << 20))
work=$(mktemp -d /tmp/ucx-gaudi-app-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT

export UCX_GAUDI_EMU_DEVICES=2 UCX_WARN_UNUSED_ENV_VARS=n
copy_tl=$(UCX_GAUDI_EMU_STATE_DIR="$work/emu-info" copy_tl_name)
[ -n "$copy_tl" ] || { echo "bench: ucx_info -d lists no gaudi_cpy" >&2; exit 1; }
export UCX_TLS=$copy_tl,gaudi_ipc,posix,self
# the Gaudi module's file, which gaudi_ipc_ucp finds its symbols in
module=$(ls "$GAUDI_LIBDIR" | sed -n 's/^\(libuct_[a-z]*gaudi\.so\).*/\1/p' |
         head -n 1)
[ -n "$module" ] || { echo "bench: no Gaudi module in $GAUDI_LIBDIR" >&2; exit 1; }

# the programs, built here against the build measured (no binaries in the
# tree)
cc -O2 -Wall -Werror -I"$PREFIX/include" -I"$top/src" -o "$work/app_hook" \
    "$top/bench/app_hook.c" "$top/test/e2e/ucp/ucp_app.c" \
    -L"$PREFIX/lib" -lucp -luct -lucs -ldl -Wl,-rpath,"$PREFIX/lib"
cc -O2 -Wall -Werror -I"$PREFIX/include" -I"$top/src" \
    -DGAUDI_UCT_MODULE_FILE="\"$module\"" -o "$work/gaudi_ipc_ucp" \
    "$top/test/e2e/gaudi_ipc_ucp.c" "$top/test/e2e/ucp/ucp_app.c" \
    "$top/test/e2e/ucp/ucp_ctl.c" "$top/test/e2e/ucp/ucp_gaudi.c" \
    -L"$PREFIX/lib" -lucp -lucs -ldl -Wl,-rpath,"$PREFIX/lib"

# each run on a fresh emulated node: a new emulator state directory
state=$work/emu

# hook OWNER [ENV...]: one run of app_hook, its line appended to
# $work/hook.OWNER (or the file named by HOOK_OUT)
hook() {
    local owner=$1 out=${HOOK_OUT:-$work/hook.$1}
    shift
    rm -rf "$state"
    env "$@" UCX_GAUDI_EMU_STATE_DIR="$state" timeout 300 "$work/app_hook" \
        "$owner" "${ROUNDS:-40}" "${BATCH:-16}" "${PASSES:-20000}" \
        >> "$out" 2> "$work/hook.err" ||
        { cat "$work/hook.err" >&2; echo "bench: app_hook $owner failed" >&2;
          exit 1; }
    rm -rf "$state"
}

# pair MODE: one gaudi_ipc_ucp pair (MODE: ucx, raw or staged); its
# "put tag imports" appended to $work/bw.MODE
pair() {
    local mode=$1 flag=() put tag imp
    case $mode in
    raw)    flag=(-R) ;;
    staged) flag=(-A) ;;
    esac
    rm -rf "$state"
    UCX_GAUDI_EMU_STATE_DIR="$state" timeout 300 "$work/gaudi_ipc_ucp" \
        -t 240 "${flag[@]}" -o put -s "$size" -1 -B "$size,$iters" \
        -b put,tag pair > "$work/pair.out" 2>&1 ||
        { cat "$work/pair.out" >&2;
          echo "bench: gaudi_ipc_ucp ${flag[*]} pair failed" >&2; exit 1; }
    rm -rf "$state"
    put=$(sed -n "s/^bandwidth put $size: \([0-9.]*\) MB\/s.*/\1/p" \
          "$work/pair.out")
    tag=$(sed -n "s/^bandwidth tag $size: \([0-9.]*\) MB\/s.*/\1/p" \
          "$work/pair.out")
    imp=$(awk '/^gaudi_emu import_maps max: client=/ {
                   sub(/client=/, "", $4); sub(/server=/, "", $5)
                   print $4 "/" $5 }' "$work/pair.out")
    [ -n "$put" ] && [ -n "$tag" ] ||
        { cat "$work/pair.out" >&2;
          echo "bench: gaudi_ipc_ucp ${flag[*]} printed no bandwidth" >&2
          exit 1; }
    echo "$put $tag ${imp:--}" >> "$work/bw.$mode"
}

# stats FILE EXPR: "min median max" over FILE's lines of awk's EXPR of
# their columns (e.g. $1 - $2: a difference taken within each run)
stats() {
    awk "{ print $2 }" "$1" | sort -g |
        awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)], v[NR] }'
}

# mmm FMT FILE EXPR: stats as "min / median / max", each as FMT
mmm() {
    local fmt=$1
    shift
    stats "$@" | awk -v f="$fmt" '{ printf f " / " f " / " f, $1, $2, $3 }'
}

# in turns, so that the machine's load falls on every figure alike
for ((i = 0; i < reps; ++i)); do
    hook ucp
    hook uct
    HOOK_OUT=$work/hook.nohook hook ucp UCX_GAUDI_APP_MEMORY=n
    for mode in ucx raw staged; do
        pair "$mode"
    done
done
# the hook served the raw requests (without it, app_hook prints "-")
for owner in ucp uct; do
    ! grep -q -- '^-' "$work/hook.$owner" ||
        { echo "bench: app_hook $owner: no hook served raw requests" >&2;
          exit 1; }
done

report_begin
echo "build: ${BENCH_BUILD:-in-tree}, UCX $("$PREFIX/bin/ucx_info" -v |
    sed -n 's/.*[Vv]ersion[=: ]*\([0-9][0-9.]*\).*/\1/p' | head -n 1)," \
     "UCX_TLS=$UCX_TLS, $reps runs of each"
echo
echo "1. the hook's cost per memory request, ns (min / median / max)"
printf '%-6s %-5s %-22s %-22s %s\n' op owner "(a) raw, learned" \
    "(b) seam, not seen" "(a) - (b) in each run"
ops=(ALLOC MAP UNMAP FREE)
for k in 0 1 2 3; do
    a=\$$((2 * k + 1)) b=\$$((2 * k + 2))
    for owner in ucp uct; do
        printf '%-6s %-5s %-22s %-22s %s\n' "${ops[$k]}" "$owner" \
            "$(mmm %5.0f "$work/hook.$owner" "$a")" \
            "$(mmm %5.0f "$work/hook.$owner" "$b")" \
            "$(mmm %5.0f "$work/hook.$owner" "$a - $b")"
    done
done
echo
echo "   pass-through, ns per request (min / median / max)"
printf '%-26s %-23s %-23s %s\n' request "ioctl(), the PLT" \
    "syscall(SYS_ioctl)" "difference in each run"
pass() {  # NAME FILE IOCTL SYSCALL: columns of FILE
    printf '%-26s %-23s %-23s %s\n' "$1" "$(mmm %5.1f "$2" "\$$3")" \
        "$(mmm %5.1f "$2" "\$$4")" "$(mmm %4.1f "$2" "\$$3 - \$$4")"
}
pass "FIONREAD, hook in (ucp)" "$work/hook.ucp" 9 10
pass "FIONREAD, hook in (uct)" "$work/hook.uct" 9 10
pass "FIONREAD, no hook (ucp)" "$work/hook.nohook" 9 10
# (without uct_gaudi_hook_own_begin in the module, app_hook prints "-")
if awk '$11 == "-" { exit 1 }' "$work/hook.ucp"; then
    pass "MEMORY, UCX's own (ucp)" "$work/hook.ucp" 11 12
fi
printf '%-26s %s\n' "argument copy (ucp)" \
    "$(mmm %5.1f "$work/hook.ucp" '$13')"
printf '%-26s %s\n' "emulator fd look-up (ucp)" \
    "$(mmm %5.1f "$work/hook.ucp" '$14')"
echo "(ucp: UCX owns the device through ucp_init, uct: through uct_md_open;"
echo " batches of ${BATCH:-16} allocations of 2 MiB, ${ROUNDS:-40} rounds;" \
     "${PASSES:-20000} x ${ROUNDS:-40} requests of"
echo " each pass-through; (a) and (b), and ioctl() and syscall(), alternate"
echo " in each run; no hook: UCX_GAUDI_APP_MEMORY=n; MEMORY, UCX's own: the"
echo " memory request code on the pipe, flagged as UCX flags its own driver"
echo " calls; argument copy: process_vm_readv and process_vm_writev of a"
echo " request's argument, each with getpid(), as the hook copies it in and"
echo " back out for each memory request; emulator fd look-up: the seam's"
echo " fd_path, which the hook makes for each memory request on an"
echo " emulator's fd, and a driver's fd does not need)"
echo
echo "2. two processes, UCP 4 MiB from the client's Gaudi buffer into the" \
     "server's, MB/s"
printf '%-52s %12s %12s %9s  %s\n' measure ours reference ratio target
row2() {  # NAME MODE COLUMN TARGET: MODE's figure against ucx's
    local min med max ref
    read -r min med max < <(stats "$work/bw.$2" "\$$3")
    read -r _ ref _ < <(stats "$work/bw.ucx" "\$$3")
    printf '%-52s %12.1f %12.1f %9s  %s\n' "$1" "$med" "$ref" \
        "$(ratio "$med" "$ref")" "$4"
    printf '%-52s %.1f / %.1f / %.1f\n' "    min / median / max of $reps" \
        "$min" "$med" "$max"
}
for col in 1 2; do
    op=$([ $col = 1 ] && echo "put" || echo "tag")
    row2 "$op, the runtime's raw ioctl memory (ref: UCX's)" raw $col ">= 0.9"
    row2 "$op, UCX-allocated memory" ucx $col "(ref)"
    row2 "$op, runtime memory the hook did not see (-A)" staged $col \
        "(info: staged)"
done
for mode in ucx raw staged; do
    echo "imports client/server ($mode), each run: $(awk '{ print $3 }' \
        "$work/bw.$mode" | paste -sd' ')"
done
echo "(gaudi_ipc_ucp pair -o put -s $size -1 -B $size,$iters -b put,tag:"
echo " $iters operations, each waited for before the next; MB = 10^6 bytes;"
echo " a tag rendezvous completes once the server has the data; ucx: no"
echo " -A/-R; imports: the most live imports of the peer's DMA-BUF)"
if [ "$(nproc)" -lt 4 ]; then
    echo "note: $(nproc) CPUs: both processes poll, so any other load on the"
    echo " machine shows in the two-process figures (see min / max)"
fi
report_end app_memory.sh
