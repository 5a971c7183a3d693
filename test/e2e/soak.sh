# Soak (docs/faults.md): two processes move seeded random traffic -- tag,
# put, get and rendezvous AM of 1 B to 16 MiB between host and Gaudi
# buffers at either end, in either direction, every byte verified -- while
# about one operation in five has a random emulator fault armed in one of
# them. After an error both processes start UCP over (the faulted device
# completes its reset when its context closes) and must have leaked
# nothing; at the end too. Error mode none over posix, then peer over tcp.
#
# Environment: SOAK_SECONDS (default 60, split 2:1 between the modes; the
# "longer mode": e.g. SOAK_SECONDS=3600), SOAK_SEED (default: random,
# printed, so that a failure can be replayed), FAULT_UCP, PREFIX, DEMO.
. "$(dirname "$0")/common.bash"
# recovery from the faults it injects relies on our core patch's UCP
# (docs/faults.md), as the fault matrix does
needs_core_patch "the soak's recovery from injected faults"
FAULT_UCP=${FAULT_UCP:-$(dirname "$0")/gaudi_fault_ucp}
[ -x "$FAULT_UCP" ] || fail "no gaudi_fault_ucp program at $FAULT_UCP"
seconds=${SOAK_SECONDS:-60}
seed=${SOAK_SEED:-$((RANDOM * 32768 + RANDOM))}
export UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_DMA_TIMEOUT=1s
bad=0
for mode in none peer; do
    if [ "$mode" = none ]; then
        tls=$GAUDI_COPY_TL,gaudi_ipc,posix,self t=$((seconds * 2 / 3))
    else
        tls=$GAUDI_COPY_TL,gaudi_ipc,tcp,self t=$((seconds - seconds * 2 / 3))
    fi
    [ "$t" -gt 0 ] || continue
    echo "soak: error mode $mode, $t s, seed $seed (replay: SOAK_SEED=$seed)"
    out=$(UCX_TLS=$tls timeout -k 5 $((t + 120)) "$FAULT_UCP" -r "$seed" \
              -d "$t" -e "$mode" -t 40 2>&1) || true
    line=$(grep -m1 '^SOAK' <<< "$out" || true)
    echo "${line:-no SOAK line}"
    if [[ $line != *outcome=ok* ]]; then
        bad=$((bad + 1))
        grep -vE 'UCX +(INFO|DIAG)' <<< "$out" | tail -n 15 | sed 's/^/    /'
    fi
done
[ "$bad" -eq 0 ] || fail "soak failed (seed $seed)"
ok "soak: random traffic with random faults, every byte verified, no leak"
