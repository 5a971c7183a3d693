# Device assignment the way Habana's runtime does it, through UCP processes
# (gaudi_ucp_demo) on an 8-device emulated node: module ID = 7 - index,
# devices 0-3 on NUMA node 0 and 4-7 on node 1 (UCX_GAUDI_EMU_NUMA_NODES=2).
#  1. 8 processes started together with local ranks 0..7 each own the module
#     equal to their rank, in 4 runs (Open MPI's, torchrun's, MPICH's and
#     Slurm's local-rank variable); without any variable they own 8
#     different devices.
#  2. HABANA_VISIBLE_MODULES=5,4,7,6 with local ranks 0..3: modules 5,4,7,6.
#  3. HLS_MODULE_ID forces its module, before the local rank.
#  4. The NUMA rule: the process's NUMA node faked (UCX_GAUDI_EMU_PROC_NUMA),
#     two processes on node 1 own two devices of node 1.
#  5. Wrong input: one error naming the variable and its value, the process
#     runs without gaudi. A forced module that is busy: the same, and no other
#     device is taken.
#  6. ucx_info -d shows the module ID.
#  7. Two processes assigned by local rank move Gaudi memory over gaudi_ipc
#     (gaudi_ipc_ucp: tag, put, get, both directions, byte-exact).
# Environment: IPC_UCP (default: next to this script), PREFIX, DEMO.
. "$(dirname "$0")/common.bash"
IPC_UCP=${IPC_UCP:-$(dirname "$0")/gaudi_ipc_ucp}
[ -x "$IPC_UCP" ] || fail "no gaudi_ipc_ucp program at $IPC_UCP (set IPC_UCP)"
rank_vars="OMPI_COMM_WORLD_LOCAL_RANK LOCAL_RANK MPI_LOCALRANKID SLURM_LOCALID
           PMIX_LOCAL_RANK"
unset HLS_MODULE_ID HABANA_VISIBLE_MODULES UCX_GAUDI_EMU_PROC_NUMA $rank_vars
export UCX_GAUDI_EMU_DEVICES=8 UCX_GAUDI_EMU_NUMA_NODES=2 UCX_LOG_LEVEL=info
dir=$(mktemp -d /tmp/ucx-gaudi-assign.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"' EXIT

# from a process's output: the module ID, the device and the rule of the
# info line that reports the assignment; the device the demo owns
module_of() { sed -n 's/.* gaudi[0-9]* (module \([0-9]*\),.*chosen by.*/\1/p' "$1" | head -n 1; }
device_of() { sed -n 's/.* \(gaudi[0-9]*\) (module [0-9]*,.*chosen by.*/\1/p' "$1" | head -n 1; }
why_of()    { sed -n 's/.*): chosen by //p' "$1" | head -n 1; }
owned_of()  { sed -n 's/^pid [0-9]* owns \(gaudi[0-9]*\)$/\1/p' "$1" | head -n 1; }

# run_group NAME N VAR=FORMAT...: start N demo processes at once, process i
# with each VAR set to FORMAT where %i is i; wait for all of them
run_group() {
    local name=$1 n=$2 i pids=() envs
    shift 2
    for ((i = 0; i < n; i++)); do
        envs=("${@//%i/$i}")
        env "${envs[@]}" timeout 60 "$DEMO" hold 2 > "$dir/$name.$i" 2>&1 &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        wait "${pids[$i]}" ||
            fail "$name: process $i failed: $(tail -n 5 "$dir/$name.$i")"
    done
}

# expect_modules NAME M0 M1 ...: process i of group NAME owns module Mi, the
# device UCP reports is the one the info line names
expect_modules() {
    local name=$1 i=0 m got dev
    shift
    for m in "$@"; do
        got=$(module_of "$dir/$name.$i")
        dev=$(device_of "$dir/$name.$i")
        [ "$got" = "$m" ] ||
            fail "$name: process $i owns module '${got}', expected $m:" \
                 "$(grep -E 'chosen by|owns|ERROR|WARN' "$dir/$name.$i")"
        [ "$(owned_of "$dir/$name.$i")" = "$dev" ] ||
            fail "$name: process $i: UCP's device is not $dev"
        i=$((i + 1))
    done
}

# 1. module ID = local rank, 8 processes at once, 4 runs
for var in OMPI_COMM_WORLD_LOCAL_RANK LOCAL_RANK MPI_LOCALRANKID SLURM_LOCALID
do
    run_group "rank-$var" 8 "$var=%i"
    expect_modules "rank-$var" 0 1 2 3 4 5 6 7
    ok "$var=0..7, 8 processes at once: each owns the module of its rank" \
       "($(why_of "$dir/rank-$var.5"))"
done
run_group none 8 UCX_GAUDI_DEVICE=auto
devs=$(for i in 0 1 2 3 4 5 6 7; do owned_of "$dir/none.$i"; done | sort -u |
       wc -l)
[ "$devs" -eq 8 ] || fail "without rank variables: $devs devices for 8 processes"
ok "without the runtime's variables: 8 processes own 8 different devices" \
   "($(why_of "$dir/none.0"))"

# 2. the visible list at the local rank
run_group visible 4 HABANA_VISIBLE_MODULES=5,4,7,6 PMIX_LOCAL_RANK=%i
expect_modules visible 5 4 7 6
ok "HABANA_VISIBLE_MODULES=5,4,7,6 with PMIX_LOCAL_RANK=0..3: modules 5,4,7,6" \
   "($(why_of "$dir/visible.1"))"

# 3. HLS_MODULE_ID, before the local rank
run_group hls 1 HLS_MODULE_ID=6 LOCAL_RANK=1
expect_modules hls 6
ok "HLS_MODULE_ID=6 with LOCAL_RANK=1: module 6 ($(why_of "$dir/hls.0"))"

# 4. the NUMA rule (devices 4-7 on node 1 are modules 3..0)
run_group numa 2 UCX_GAUDI_EMU_PROC_NUMA=1
for i in 0 1; do
    why_of "$dir/numa.$i" | grep -q 'on NUMA node 1' ||
        fail "numa: process $i: $(why_of "$dir/numa.$i")"
    case $(module_of "$dir/numa.$i") in
        0|1|2|3) ;;
        *) fail "numa: process $i owns module $(module_of "$dir/numa.$i")," \
                "not on node 1" ;;
    esac
done
[ "$(module_of "$dir/numa.0")" != "$(module_of "$dir/numa.1")" ] ||
    fail "numa: both processes own the same module"
ok "CPUs on NUMA node 1: two processes own modules" \
   "$(module_of "$dir/numa.0") and $(module_of "$dir/numa.1") of node 1" \
   "($(why_of "$dir/numa.0"))"

# 5. wrong input: error naming the variable and its value, no gaudi
# expect_error NAME TEXT VAR=VALUE...
expect_error() {
    local name=$1 text=$2 out="$dir/err-$1"
    shift 2
    env "$@" timeout 60 "$DEMO" hold 0 > "$out" 2>&1 ||
        fail "$name: the process failed instead of running without gaudi:" \
             "$(tail -n 5 "$out")"
    grep -q 'owns no Gaudi device' "$out" || fail "$name: a device was taken"
    grep -q 'INFO .*chosen by' "$out" &&
        fail "$name: $(grep 'INFO .*chosen by' "$out")"
    grep 'ERROR' "$out" | grep -F "$text" |
        grep -q 'UCX continues without the Gaudi transports' ||
        fail "$name: no error '$text': $(grep -E 'ERROR|WARN' "$out")"
    [ "$(grep -cE 'UCX +ERROR ' "$out")" -eq 1 ] ||
        fail "$name: not said once: $(grep 'ERROR' "$out")"
    ok "$*: $(grep -m1 -F "$text" "$out" | sed 's/.*ERROR *//')"
}
expect_error hls-range "HLS_MODULE_ID=9: no Gaudi device has module ID 9" \
    HLS_MODULE_ID=9
expect_error hls-malformed "HLS_MODULE_ID=x is not a module ID" HLS_MODULE_ID=x
expect_error visible-twice \
    "HABANA_VISIBLE_MODULES=5,4,5: module ID 5 is listed twice" \
    HABANA_VISIBLE_MODULES=5,4,5 LOCAL_RANK=0
expect_error visible-range \
    "HABANA_VISIBLE_MODULES=5,12: no Gaudi device has module ID 12" \
    HABANA_VISIBLE_MODULES=5,12 LOCAL_RANK=0
expect_error visible-rank \
    "local rank 2 (LOCAL_RANK=2) is beyond HABANA_VISIBLE_MODULES=5,4" \
    HABANA_VISIBLE_MODULES=5,4 LOCAL_RANK=2
expect_error rank-range \
    "local rank 8 (OMPI_COMM_WORLD_LOCAL_RANK=8): no Gaudi device has module ID 8" \
    OMPI_COMM_WORLD_LOCAL_RANK=8
expect_error rank-malformed "SLURM_LOCALID=-1 is not a local rank" \
    SLURM_LOCALID=-1

# ... and a forced module that another process holds
HLS_MODULE_ID=3 timeout 60 "$DEMO" hold 8 > "$dir/holder" 2>&1 & holder=$!
for _ in $(seq 100); do
    grep -q '^pid .* owns' "$dir/holder" && break
    sleep 0.2
done
[ "$(module_of "$dir/holder")" = 3 ] || fail "holder: $(cat "$dir/holder")"
expect_error busy "(module 3, bus 0000:37:00.0) chosen by module ID = local rank 3 (OMPI_COMM_WORLD_LOCAL_RANK=3) is busy (owned by another process)" \
    OMPI_COMM_WORLD_LOCAL_RANK=3
wait $holder || fail "holder failed: $(tail -n 5 "$dir/holder")"

# 6. ucx_info -d: the module ID in the System device of the transports
out=$(OMPI_COMM_WORLD_LOCAL_RANK=3 UCX_LOG_LEVEL=warn "$UCX_INFO" -d 2>&1)
grep -A3 "Transport: $GAUDI_COPY_TL" <<< "$out" |
    grep -q 'System device: GAUDI_4 module 3 (' ||
    fail "ucx_info -d: $(echo "$out" | grep -A3 'Transport: gaudi')"
ok "ucx_info -d: $(echo "$out" | grep -A3 "Transport: $GAUDI_COPY_TL" |
                   grep 'System device' | sed 's/^# *//')"

# 7. gaudi_ipc between two processes assigned by their local ranks
port=$((20000 + RANDOM % 12000))
ipc=(-t 120 -p "$port" -o tag,put,get -s 65536,4194304)
OMPI_COMM_WORLD_LOCAL_RANK=0 timeout 150 "$IPC_UCP" "${ipc[@]}" server \
    > "$dir/ipc.server" 2>&1 & srv=$!
OMPI_COMM_WORLD_LOCAL_RANK=1 timeout 150 "$IPC_UCP" "${ipc[@]}" client \
    localhost > "$dir/ipc.client" 2>&1 || rc=$?
wait $srv || fail "ipc server failed: $(grep -vE 'INFO' "$dir/ipc.server" |
                                        tail -n 10)"
[ "${rc:-0}" -eq 0 ] && grep -q '^PASS: 0 operation(s) failed' "$dir/ipc.client" ||
    fail "ipc client: $(grep -vE 'INFO' "$dir/ipc.client" | tail -n 10)"
n=$(grep -c '^PASS [a-z_]* [0-9]' "$dir/ipc.client" || true)
[ "$n" -eq 12 ] || fail "ipc: $n operations passed, expected 12"
[ "$(module_of "$dir/ipc.server")" = 0 ] && [ "$(module_of "$dir/ipc.client")" = 1 ] ||
    fail "ipc: server module $(module_of "$dir/ipc.server"), client module" \
         "$(module_of "$dir/ipc.client")"
lanes=$(sed -n 's/^gaudi_ipc lanes:.*client=\([0-9]*\).*/\1/p' "$dir/ipc.client")
[ "${lanes:-0}" -gt 0 ] ||
    fail "ipc: no gaudi_ipc lane ($(grep '^gaudi_ipc lanes' "$dir/ipc.client"));" \
         "errors: $(grep -hE 'ERROR|WARN' "$dir/ipc.client" "$dir/ipc.server")"
imports=$(sed -n 's/^gaudi_emu import_maps max:.*client=\([0-9]*\).*/\1/p' "$dir/ipc.client")
[ "${imports:-0}" -gt 0 ] || fail "ipc: no DMA-BUF import in the client"
ok "ranks 0 and 1 (modules 0 and 1): 12 UCP operations on Gaudi memory" \
   "byte-exact over gaudi_ipc ($lanes gaudi_ipc lane(s), $imports import(s))"
