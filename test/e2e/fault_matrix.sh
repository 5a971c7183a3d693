# The fault matrix through UCP (docs/faults.md): two processes, Gaudi
# memory at both ends, tag / put / get / rendezvous AM, eager and
# rendezvous sizes, each emulator fault injected mid-traffic in the
# initiator or in the target, with UCP's error handling mode none and peer.
# Each cell (gaudi_fault_ucp) must end with the data right, or with an error
# status after which both processes go on (new endpoints, the operation
# again, host memory over UCP) and release everything at ucp_cleanup: never
# a hang, a crash, silent corruption or a leak.
#
#   fault_matrix.sh [--table]     --table: also print docs/faults.md's table
#
# Environment: FAULT_UCP (the gaudi_fault_ucp binary; default next to this
# script), FAULT_MATRIX_FAULTS / _OPS / _SIZES to run a part, PREFIX, DEMO
# (common.bash).
. "$(dirname "$0")/common.bash"
# the outcomes expected per cell are those of UCP with our core patch
# (docs/faults.md): a failed memory-type copy fails the receive, a failed
# rendezvous get acknowledges its status; unpatched UCP aborts or hangs there
needs_core_patch "the fault matrix's expected outcomes"
FAULT_UCP=${FAULT_UCP:-$(dirname "$0")/gaudi_fault_ucp}
[ -x "$FAULT_UCP" ] || fail "no gaudi_fault_ucp program at $FAULT_UCP"
# A DMA timeout of 1 s (default 30 s) keeps the cells that exhaust it short.
# Error mode peer needs transports that detect a peer's failure: tcp, not
# posix
export UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_DMA_TIMEOUT=1s
tls_none=$GAUDI_COPY_TL,gaudi_ipc,posix,self
tls_peer=$GAUDI_COPY_TL,gaudi_ipc,tcp,self
table=0
[ "${1:-}" = --table ] && table=1

# Realistic errnos per kind (habanalabs: open EAGAIN while a reset or the
# previous owner's release runs; CS EAGAIN when the queue is full; WAIT_CS
# EINTR on a signal, EIO for an aborted CS; INFO EBUSY while not
# operational); N = 1 once, 1+ from the first call on
faults=${FAULT_MATRIX_FAULTS:-"fail:open:1+:EAGAIN fail:mmap:1+:ENOMEM
    fail:info:1+:EBUSY fail:cb:1+:ENOMEM fail:cs:1:EAGAIN fail:cs:1+:EAGAIN
    fail:cs:1+:EIO fail:wait_cs:1:EINTR fail:wait_cs:1+:EIO
    fail:memory:1+:ENOMEM fail:debug:1+:EPERM fail:any:1:EFAULT
    cs_timeout:1 cs_abort:1 reset:1"}
ops=${FAULT_MATRIX_OPS:-"tag put get am"}
sizes=${FAULT_MATRIX_SIZES:-"8 4194304"}
dir=$(mktemp -d /tmp/ucx-gaudi-faults.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"' EXIT

# report_cell WHAT CELL-LINE HOW: a failed cell for the end of the output
# (the test command prints it; CI keeps nothing else): the cell, the end of
# its programs' output, and the commands that run it again (the first five
# failures in full)
report_cell() {
    echo "FAIL: $1: $2 ($3)"
    # (a program that crashed printed no DIE or CELL line: grep finds
    # nothing, which must not end the matrix under pipefail, as it did)
    if [ "$bad" -le 5 ]; then
        { grep -E '^(DIE|CELL)' "$out" || true; } | sed 's/^/    > /'
        echo "    the last lines of its output (UCX's INFO and DIAG left out):"
        { grep -vE 'UCX +(INFO|DIAG)' "$out" || true; } | tail -n 25 |
            sed 's/^/    | /'
    fi
    echo "    replay the cell: UCX_GAUDI_EMU_DEVICES=2" \
         "UCX_GAUDI_DMA_TIMEOUT=1s UCX_GAUDI_EMU_STATE_DIR=\$(mktemp -d)" \
         "UCX_TLS=${!tls} $FAULT_UCP -o $op -s $size -f $fault -w $side" \
         "-e $mode -t 40"
    echo "    or with its three neighbours (both sides and error modes):" \
         "FAULT_MATRIX_FAULTS=$fault FAULT_MATRIX_OPS=$op" \
         "FAULT_MATRIX_SIZES=$size bash $0 (in the environment of" \
         "make print-test-env)"
}

cells=0 bad=0 start=$SECONDS
for fault in none $faults; do
    for side in initiator target; do
        [ "$fault" = none ] && [ "$side" = target ] && continue
        for mode in none peer; do
            for op in $ops; do
                for size in $sizes; do
                    cells=$((cells + 1))
                    out="$dir/cell.$cells"
                    tls=tls_$mode
                    # a fresh emulated node per cell; -t bounds the cell,
                    # timeout(1) backs it up
                    rm -rf "$dir/emu"; mkdir "$dir/emu"
                    t0=$SECONDS rc=0
                    UCX_GAUDI_EMU_STATE_DIR="$dir/emu" UCX_TLS=${!tls} \
                        timeout -k 5 60 "$FAULT_UCP" -o "$op" -s "$size" \
                        -f "$fault" -w "$side" -e "$mode" -t 40 \
                        > "$out" 2>&1 || rc=$?
                    line=$(grep -m1 '^CELL' "$out" || true)
                    case "$line" in
                    *outcome=ok*|*outcome=error*)
                        echo "$line" >> "$dir/cells" ;;
                    *)
                        bad=$((bad + 1))
                        what="fault=$fault side=$side mode=$mode op=$op"
                        what="$what size=$size"
                        echo "FAIL: cell $cells ($what), details below"
                        report_cell "$what" "${line:-no CELL line}" \
                            "exit status $rc after $((SECONDS - t0)) s" \
                            >> "$dir/failures"
                        echo "CELL op=$op size=$size side=$side mode=$mode" \
                             "fault=$fault fired=? a=- b=- outcome=FAIL" \
                             >> "$dir/cells" ;;
                    esac
                done
            done
        done
    done
done

# one line per fault and side: the outcome of each op/size, mode none | peer
#   ok       the data arrived right
#   E>ok     an error status; then the operation again on new endpoints: ok
#   E>E      an error status, and the next operation failed cleanly too (the
#            faulted process's device is out until ucp_cleanup); host memory
#            over UCP still works
#   n/r      the fault was not reached during the operation (data right)
#   FAIL     a hang, crash, corruption or leak
summarize() {
    awk -v ops="$ops" -v sizes="$sizes" '
    function code(a, b, o, fired) {
        if (o == "FAIL") return "FAIL"
        if (o == "ok") return (fired == "0" && f["fault"] != "none") ? "n/r" : "ok"
        return (b == "Success") ? "E>ok" : "E>E"
    }
    {
        for (i = 1; i <= NF; ++i) {
            split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2)
        }
        # statuses hold spaces ("Input/output error"): a=... b=... outcome=
        match($0, / a=.* b=/); a = substr($0, RSTART + 3, RLENGTH - 6)
        match($0, / b=.* outcome=/); b = substr($0, RSTART + 3, RLENGTH - 12)
        key = f["fault"] SUBSEP f["side"]
        if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        res[key, f["op"], f["size"], f["mode"]] = code(a, b, f["outcome"],
                                                        f["fired"])
    }
    END {
        no = split(ops, O, " "); ns = split(sizes, S, " ")
        printf "| fault | faulted |"
        for (i = 1; i <= no; ++i) for (j = 1; j <= ns; ++j)
            printf " %s %s |", O[i], (S[j] >= 1048576) ? S[j] / 1048576 "M" : S[j]
        printf "\n|---|---|"
        for (i = 1; i <= no * ns; ++i) printf "---|"
        printf "\n"
        for (k = 1; k <= n; ++k) {
            split(order[k], kf, SUBSEP)
            printf "| `%s` | %s |", kf[1], (kf[1] == "none") ? "-" : kf[2]
            for (i = 1; i <= no; ++i) for (j = 1; j <= ns; ++j)
                printf " %s \\| %s |", res[order[k], O[i], S[j], "none"],
                       res[order[k], O[i], S[j], "peer"]
            printf "\n"
        }
    }' "$dir/cells"
}

echo "fault matrix: $cells cells in $((SECONDS - start)) s, $bad failed"
if [ "$table" = 1 ] || [ "$bad" -gt 0 ]; then
    summarize
fi
[ "$bad" -eq 0 ] || { cat "$dir/failures"; fail "$bad of $cells cells failed"; }
ok "fault matrix: every one of $cells cells ended with the data right or" \
   "a clean error; both processes went on and released everything"
