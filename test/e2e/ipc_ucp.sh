# UCP between two processes on a 2-device emulated node (each owns its
# Gaudi), Gaudi memory at both ends: tag send/recv, RMA put/get into the
# peer's mapped buffer and AM with rendezvous data received into Gaudi
# memory, 8 B .. 16 MiB, both directions, byte-exact (gaudi_ipc_ucp).
#  1. UCX_TLS=gaudi_copy,gaudi_ipc,posix,self: passes; both endpoints have a
#     gaudi_ipc lane (ucp_ep_print_info and the "ep_cfg" info lines) and the
#     emulator accounts imports of the peer's DMA-BUF in both processes.
#  2. The same with the remote-mapping cache off (UCX_GAUDI_IPC_CACHE=n).
#  3. DMA-BUF import unsupported (UCX_GAUDI_EMU_OOT_IMPORT=n): passes by
#     staging through host memory; gaudi_ipc has no lane and imports nothing.
#  4. gaudi_ipc carried the data (gaudi_ipc_ucp -P): the side that does not
#     move the data stops progressing UCP meanwhile, which only a one-sided
#     transport survives (UCP's fallbacks need both sides):
#     tag and AM rendezvous (64 KiB..16 MiB): the receiver gets the data
#     while the sender idles; RMA put/get: complete (and flush) while the
#     target idles. Control: without DMA-BUF import (staging) the same check
#     must fail, or it would prove nothing.
#  5. Buffers the application allocated itself (gaudi_ipc_ucp -A: ALLOC + MAP
#     ioctls on its compute fd, then ucp_mem_map): gaudi_ipc cannot export
#     them; every operation still completes byte-exact (staged).
#  5b. The same by raw ioctl() calls, as a runtime at work after UCX
#     started makes them (gaudi_ipc_ucp -R): UCX's hook of ioctl() learns the
#     allocation, gaudi_ipc exports it (lanes and imports as in 1), and
#     nothing is left imported or exported after the UNMAP; also with
#     UCX_MEMTYPE_CACHE=n.
#  6. Wake-up (gaudi_ipc_ucp -W): the side that moves the data (the
#     initiator of put/get, the receiver of tag/AM rendezvous) sleeps in
#     ucp_worker_wait while gaudi_ipc's DMA runs; it must be woken.
# Environment: IPC_UCP (the gaudi_ipc_ucp binary; default: next to this
# script), PREFIX, DEMO (common.bash).
. "$(dirname "$0")/common.bash"
IPC_UCP=${IPC_UCP:-$(dirname "$0")/gaudi_ipc_ucp}
[ -x "$IPC_UCP" ] || fail "no gaudi_ipc_ucp program at $IPC_UCP (set IPC_UCP)"
export UCX_GAUDI_EMU_DEVICES=2 UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,posix,self
dir=$(mktemp -d /tmp/ucx-gaudi-ipc-ucp.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"' EXIT
all_ops=tag,put,get,am,am_auto
all_sizes=8,65536,4194304,16777216

# run_pair NAME EXPECTED_PASSES ENV... -- ARGS...: the program as a server
# and a client (two separate processes, a fresh emulated node, a random
# port); the client's report is $dir/NAME.client. Fails unless both exit 0
# with EXPECTED_PASSES "PASS" lines (ipc_ucp_verdict, common.bash).
run_pair() {
    local name=$1 expect=$2 envs=() port srv rc=0
    shift 2
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    # below Linux's ephemeral ports (32768 and up), which any process's
    # outgoing connection may hold (seen: the server's bind, EADDRINUSE)
    port=$((20000 + RANDOM % 12000))
    rm -rf "$dir/emu"; mkdir "$dir/emu"
    env "${envs[@]}" UCX_GAUDI_EMU_STATE_DIR="$dir/emu" UCX_LOG_LEVEL=info \
        timeout 200 "$IPC_UCP" -t 180 -p "$port" "$@" server \
        > "$dir/$name.server" 2>&1 & srv=$!
    env "${envs[@]}" UCX_GAUDI_EMU_STATE_DIR="$dir/emu" UCX_LOG_LEVEL=info \
        timeout 200 "$IPC_UCP" -t 180 -p "$port" "$@" client localhost \
        > "$dir/$name.client" 2>&1 || rc=$?
    wait $srv || rc=$((rc ? rc : 100 + $?))
    echo "--- $name: gaudi_ipc_ucp $* (client report):"
    grep -vE '^\[[0-9.]+\] \[' "$dir/$name.client" || true
    echo "--- $name: ep_cfg (UCX info) of client and server:"
    grep -hE "$EP_CFG_RE" "$dir/$name.client" "$dir/$name.server" |
        sed 's/.*INFO *//' | sort | uniq -c || true
    ipc_ucp_verdict "$name" "$rc" "$expect"
}

# run NAME did not use gaudi_ipc (the opposite, check_ipc_lanes, and field
# are in common.bash: containers.sh checks alike)
check_ipc_unused() {
    local name=$1 c s
    c=$(field "$name" 'gaudi_ipc lanes:' client)
    s=$(field "$name" 'gaudi_ipc lanes:' server)
    [ "$c" = 0 ] && [ "$s" = 0 ] ||
        fail "$name: gaudi_ipc lanes without import (client=$c server=$s)"
    # (the endpoint to self, the one with a self/memory lane, may use
    # gaudi_ipc: a process reads its own export without the DMA-BUF
    # importer, issue 20.1; only the endpoints to the peer count)
    if grep -hE "$EP_CFG_RE" "$dir/$name.client" "$dir/$name.server" |
       grep -v 'self/memory' | grep 'gaudi_ipc/'; then
        fail "$name: ep_cfg lines of the peer endpoints show gaudi_ipc"
    fi
    if ! grep -q '^gaudi_emu import_maps max: unavailable' "$dir/$name.client"
    then
        c=$(field "$name" 'gaudi_emu import_maps max:' client)
        s=$(field "$name" 'gaudi_emu import_maps max:' server)
        [ "$c" = 0 ] && [ "$s" = 0 ] ||
            fail "$name: imports happened (client=$c server=$s)"
    fi
    ok "$name: gaudi_ipc not used (no lane, no import): UCP staged through host"
}

# what the emulator still accounts once the endpoints, rkeys and buffers are
# released (before ucp_cleanup): no import or export may be left
check_released() {
    local name=$1 side line
    for side in client server; do
        line=$(grep -h "^gaudi_emu after cleanup $side:" "$dir/$name.client")
        grep -q 'import_maps=0 .*exports=0' <<< "$line" ||
            fail "$name: imports/exports left after cleanup: $line"
    done
    ok "$name: no import or export left in either process after cleanup"
}

run_pair ipc 40 -- -o "$all_ops" -s "$all_sizes"
ok "ipc: 40 UCP operations (tag, put, get, am, am_auto x 8 B..16 MiB x" \
   "both directions) byte-exact between two processes"
check_ipc_lanes ipc
check_released ipc

run_pair ipc-nocache 40 UCX_GAUDI_IPC_CACHE=n -- -o "$all_ops" -s "$all_sizes"
ok "ipc-nocache: 40 UCP operations byte-exact"
check_ipc_lanes ipc-nocache
check_released ipc-nocache

run_pair no-import 40 UCX_GAUDI_EMU_OOT_IMPORT=n -- -o "$all_ops" -s "$all_sizes"
ok "no-import: 40 UCP operations byte-exact without DMA-BUF import"
check_ipc_unused no-import
check_released no-import

# memory the application allocated itself (ALLOC + MAP ioctls, not UCX) at
# both ends: gaudi_ipc cannot export it, every transfer still completes
run_pair app-memory 40 -- -A -o "$all_ops" -s "$all_sizes"
ok "app-memory: 40 UCP operations byte-exact on buffers the application" \
   "allocated through the driver itself (staged: not exportable)"
check_released app-memory

# the same by raw ioctl(), which UCX's hook sees: exported, no staging
run_pair app-runtime 40 -- -R -o "$all_ops" -s "$all_sizes"
ok "app-runtime: 40 UCP operations byte-exact on buffers the application's" \
   "runtime allocated by raw ioctl() (learned by UCX's hook)"
check_ipc_lanes app-runtime
check_released app-runtime
# and with UCP's memory-type cache off (detection by the MDs' query)
run_pair app-runtime-nocache 40 UCX_MEMTYPE_CACHE=n -- -R -o "$all_ops" \
    -s "$all_sizes"
ok "app-runtime-nocache: 40 UCP operations byte-exact with" \
   "UCX_MEMTYPE_CACHE=n"
check_ipc_lanes app-runtime-nocache
check_released app-runtime-nocache

run_pair onesided-rndv 18 -- -P -o tag,am,am_auto -s 65536,4194304,16777216
ok "onesided-rndv: tag and AM rendezvous of 64 KiB..16 MiB (both directions)" \
   "received while the sender did not progress: gaudi_ipc carried the data"

run_pair onesided-rma 12 -- -P -o put,get -s 8,4194304,16777216
ok "onesided-rma: ucp_put_nbx/ucp_get_nbx of 8 B..16 MiB (both directions)" \
   "completed while the target did not progress: gaudi_ipc carried the data"

# workers that sleep in ucp_worker_wait while gaudi_ipc's DMA runs: only
# the ifaces' event fds can wake them (the side that does not move the
# data does not progress, nothing else has traffic): the initiator of
# put/get, the receiver of tag and AM rendezvous (a get by gaudi_ipc).
# A modelled 20 ms per command keeps the DMA in flight when they sleep.
run_pair wakeup 8 UCX_GAUDI_EMU_LATENCY=20ms -- -W -P -1 -o tag,am,put,get \
    -s 4194304,16777216
c=$(field wakeup 'wakeup sleeps' client)
s=$(field wakeup 'wakeup sleeps' server)
[ "${c:-0}" -gt 0 ] && [ "${s:-0}" -gt 0 ] ||
    fail "wakeup: a side never slept (client=$c server=$s)"
check_ipc_lanes wakeup
ok "wakeup: tag, AM, put and get of 4 and 16 MiB over gaudi_ipc completed" \
   "while the side moving the data slept in ucp_worker_wait (client $c," \
   "server $s times): the event fds woke them"

# control: the one-sided check fails when UCP stages (no import)
port=$((20000 + RANDOM % 12000))
rm -rf "$dir/emu"; mkdir "$dir/emu"
ctl=(-t 60 -p "$port" -P -1 -o "tag,put" -s 65536)
UCX_GAUDI_EMU_OOT_IMPORT=n UCX_GAUDI_EMU_STATE_DIR="$dir/emu" \
    timeout 90 "$IPC_UCP" "${ctl[@]}" server > "$dir/control.server" 2>&1 &
srv=$!
UCX_GAUDI_EMU_OOT_IMPORT=n UCX_GAUDI_EMU_STATE_DIR="$dir/emu" \
    timeout 90 "$IPC_UCP" "${ctl[@]}" client localhost \
    > "$dir/control.client" 2>&1 && fail "control: passed while staging"
wait $srv || true
echo "--- control (UCX_GAUDI_EMU_OOT_IMPORT=n, -P), failures expected:"
grep -E '^(PASS|FAIL) [a-z]' "$dir/control.client" | sed 's/^/    expected: /' ||
    true
for op in tag put; do
    grep -q "^FAIL $op 65536 .*not .*one-sided" "$dir/control.client" ||
        fail "control: $op was not caught by the one-sided check while staging"
done
ok "control: with staging (no import) the one-sided check fails, as it must"
