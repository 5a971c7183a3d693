# Every UCX_GAUDI_* knob (as ucx_info -c -f lists them: a knob added later
# is walked without a change here) with junk, negative, zero, huge, "inf"
# and empty values, through ucx_info -d on an emulated node, which reads
# every table, opens both MDs and both interfaces (issue 20.4). Each run
# must end (no hang, no crash) either with a clear error that names the
# knob, or with both Gaudi transports listed: a value the parser accepts
# must be one the transports can work with. Then the emulator's knobs with
# the emulator off: however wrong, they must not be read, nor cost a line.
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=1
# ucx_info -d opens and closes the device more than once, and an emulated
# Gaudi2 resets for 0.5 s after every release (issue 21): 0.68 s a run
# against 0.09 s. What is walked here is the configuration, not the reset:
# 10 ms (walking UCX_GAUDI_EMU_RELEASE_RESET itself replaces it)
export UCX_GAUDI_EMU_RELEASE_RESET=0.01
out=$(mktemp)
trap 'rm -rf "$out" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

mapfile -t knobs < <("$UCX_INFO" -c -f 2>/dev/null |
                     sed -n 's/^\(UCX_GAUDI_[A-Z0-9_]*\)=.*/\1/p' | sort -u)
[ "${#knobs[@]}" -ge 30 ] ||
    fail "ucx_info -c -f lists only ${#knobs[@]} UCX_GAUDI_* knobs"
values=("x%!" "-1" "0" "99999999999999999999999" "inf" "-inf" "")

runs=0 bad=()
# bad KNOB VALUE WHY...: a failure, reported with the others at the end
bad() { bad+=("$1='$2': ${*:3}"); }
for knob in "${knobs[@]}"; do
    case $knob in
    # the node itself: a count, and where it lives (the sandbox's own)
    UCX_GAUDI_EMU_DEVICES|UCX_GAUDI_EMU_STATE_DIR) continue ;;
    esac
    for value in "${values[@]}"; do
        runs=$((runs + 1))
        rm -rf "$UCX_GAUDI_EMU_STATE_DIR"/*
        rc=0
        env "$knob=$value" timeout -k 5 30 "$UCX_INFO" -d > "$out" 2>&1 ||
            rc=$?
        if [ $rc -eq 124 ]; then
            bad "$knob" "$value" "ucx_info -d hangs"; continue
        elif [ $rc -gt 128 ]; then
            bad "$knob" "$value" "ucx_info -d died of signal $((rc - 128))"
            continue
        fi
        short=${knob#UCX_}
        # UCS's parser names the knob without UCX_ and its table's prefix
        # ("Invalid value for MAX_INFLIGHT"); ours name it whole
        if grep -E 'UCX +(ERROR|WARN)' "$out" |
               grep -qE "($knob|${short#GAUDI_}|${short#GAUDI_*_})"; then
            continue
        elif grep -qE 'UCX +(ERROR|WARN)' "$out"; then
            bad "$knob" "$value" "an error that does not name the knob:" \
                "$(grep -E 'UCX +(ERROR|WARN)' "$out" | head -n 1)"
            continue
        fi
        for tl in "$GAUDI_COPY_TL" gaudi_ipc; do
            if ! grep -q "Transport: $tl" "$out"; then
                bad "$knob" "$value" "accepted, but $tl is gone"
            elif grep -A6 "Transport: $tl" "$out" |
                     grep -q 'failed to open interface'; then
                bad "$knob" "$value" "accepted, but $tl did not open"
            fi
        done
    done
done
[ ${#bad[@]} -eq 0 ] ||
    fail "${#bad[@]} of $runs runs:$(printf '\n  %s' "${bad[@]}")"
ok "$runs runs over ${#knobs[@]} knobs: each a clear error naming the knob," \
   "or both transports open"

# The emulator's knobs with the emulator off: not read, no line
unset UCX_GAUDI_EMU_DEVICES UCX_GAUDI_EMU_RELEASE_RESET
for knob in "${knobs[@]}"; do
    case $knob in UCX_GAUDI_EMU_DEVICES|UCX_GAUDI_EMU_STATE_DIR) continue ;; esac
    [[ $knob == UCX_GAUDI_EMU_* ]] || continue
    rc=0
    env "$knob=x%!" UCX_WARN_UNUSED_ENV_VARS=n timeout -k 5 30 \
        "$UCX_INFO" -d > "$out" 2>&1 || rc=$?
    [ $rc -eq 0 ] || fail "$knob='x%!' without the emulator: exit $rc"
    ! grep -qE 'UCX +(ERROR|WARN)' "$out" ||
        fail "$knob='x%!' without the emulator: $(grep -E 'ERROR|WARN' "$out")"
done
ok "the emulator's knobs are not read while it is off"
