# Whatever makes Gaudi<->Gaudi traffic between processes fall back from
# gaudi_ipc to staging through host memory is said once per process and
# reason at UCX_LOG_LEVEL=info, and the count of real imports is printed at
# cleanup (issue 20.3): the lane alone proves nothing. One case per reason,
# each against the plain case, where the count shows imports and nothing
# is staged. Without the reasons' lines the transfers all pass (staged),
# so only these lines tell a user why Gaudi<->Gaudi was 15x slower.
. "$(dirname "$0")/common.bash"
: "${IPC_UCP:?IPC_UCP (the gaudi_ipc_ucp program) is not set}"
export UCX_GAUDI_EMU_DEVICES=2
tls=$GAUDI_COPY_TL,gaudi_ipc,posix,self
out=$(mktemp)
trap 'rm -rf "$out" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

# pair ENV... -- ARGS...: a client/server pair of gaudi_ipc_ucp, its output
# (both processes) in $out; every transfer must pass
pair() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    rm -rf "$UCX_GAUDI_EMU_STATE_DIR"/*
    env UCX_LOG_LEVEL=info "${envs[@]}" timeout -k 5 120 \
        "$IPC_UCP" -t 100 -s 4194304 -o tag,put "$@" pair > "$out" 2>&1 ||
        fail "gaudi_ipc_ucp $* (${envs[*]}): $(grep -E 'FAIL|ERROR' "$out" |
                                              head -n 5)"
}

# the count line of each process: "<imports> <failed> <unreachable>"
counts() {
    sed -n "s/.*gaudi_ipc: \([0-9]*\) imports of peers' Gaudi memory ([0-9]* more uses found it imported); \([0-9]*\) imports failed and \([0-9]*\) remote keys were unreachable.*/\1 \2 \3/p" "$out"
}

# 1. the plain case: both processes imported, nothing staged, no reason
pair UCX_TLS=$tls --
[ "$(counts | wc -l)" -eq 2 ] || fail "not one count line per process: $(counts)"
counts | while read -r imports failed unreachable; do
    [ "$imports" -gt 0 ] && [ "$failed" -eq 0 ] && [ "$unreachable" -eq 0 ] ||
        fail "plain case: $imports imports, $failed failed, $unreachable unreachable"
done
! grep -q 'staged through host memory' "$out" ||
    fail "plain case says it stages: $(grep 'staged' "$out" | head -n 2)"
ok "plain case: $(counts | awk '{print $1}' | paste -sd/) imports, nothing staged"

# 2. memory the application's runtime allocated (never exported): said once
pair UCX_TLS=$tls -- -A
n=$(grep -c 'is not reachable (memory not exported (allocated outside UCX))' "$out")
[ "$n" -eq 2 ] ||
    fail "application memory: $n reason lines, not one per process"
counts | while read -r imports failed unreachable; do
    [ "$imports" -eq 0 ] && [ "$unreachable" -gt 0 ] ||
        fail "application memory: $imports imports, $unreachable unreachable"
done
ok "application memory: one line per process, counts $(counts | paste -sd/)"

# 3. a driver that cannot import DMA-BUFs (the kernel's own driver): once
# at info level, a warning where UCX_TLS asks for gaudi_ipc, nothing at the
# default level otherwise; ucx_info -d says it in gaudi_ipc's section
pair UCX_TLS=$tls UCX_GAUDI_EMU_OOT_IMPORT=n --
n=$(grep -c 'cannot import other processes. Gaudi memory' "$out")
[ "$n" -eq 2 ] || fail "no import: $n reason lines, not one per process"
grep 'cannot import other processes' "$out" | grep -q 'UCX  WARN' ||
    fail "no import, gaudi_ipc in UCX_TLS: not a warning"
rm -rf "$UCX_GAUDI_EMU_STATE_DIR"/*
env -u UCX_TLS UCX_GAUDI_EMU_OOT_IMPORT=n timeout -k 5 120 "$IPC_UCP" -t 100 \
    -s 65536 -o put pair > "$out" 2>&1 || fail "no import, UCX_TLS unset"
! grep -q 'cannot import other processes' "$out" ||
    fail "no import, UCX_TLS unset: a line at the default log level"
info=$(UCX_GAUDI_EMU_OOT_IMPORT=n "$UCX_INFO" -d 2>&1)
grep -A8 'Transport: gaudi_ipc' <<< "$info" |
    grep -q 'peer memory import: no' ||
    fail "ucx_info -d does not say gaudi_ipc cannot import"
grep -A8 'Transport: gaudi_ipc' <<< "$("$UCX_INFO" -d 2>&1)" |
    grep -q 'peer memory import: yes' ||
    fail "ucx_info -d does not say gaudi_ipc can import"
ok "no import: once per process (a warning where asked for), and ucx_info says it"

# 4. imports that fail (every DMA-BUF import the driver is asked for after
# the probe at the interface's open: the emulator's "import" fault): once
# per process at info level, the driver's reason once as a warning (not an
# error per import), the count of failed imports at cleanup, and every
# transfer still right (staged)
pair UCX_TLS=$tls "UCX_GAUDI_EMU_FAULTS=fail:import:2+:EINVAL" --
n=$(grep -c 'gaudi_ipc: importing Gaudi memory of pid [0-9]* failed' "$out" ||
    true)
[ "$n" -eq 2 ] || fail "failed imports: $n reason lines, not one per process"
n=$(grep 'REG_DMABUF_FD' "$out" | grep -c 'UCX  WARN' || true)
[ "$n" -eq 2 ] || fail "failed imports: $n driver warnings, not one per process"
! grep -q 'UCX  ERROR' "$out" ||
    fail "failed imports: errors logged: $(grep 'UCX  ERROR' "$out" | head -n 3)"
counts | while read -r imports failed unreachable; do
    [ "$imports" -eq 0 ] && [ "$failed" -gt 0 ] ||
        fail "failed imports: $imports imports, $failed failed"
done
ok "failed imports: one line per process, counts $(counts | paste -sd/)"
