# ucx_info lists the Gaudi memory domain and device on an emulated node,
# shows nothing (and prints no warning or error) without one, and shows the
# gaudi_copy knobs with help text. (The copy transport is gaudi_cpy in the
# plugin build of a UCX whose transport names hold 9 characters.)
. "$(dirname "$0")/common.bash"

out=$(UCX_GAUDI_EMU_DEVICES=2 "$UCX_INFO" -d 2>&1)
grep -q 'Memory domain: gaudi_cpy' <<< "$out" || fail "no gaudi_cpy MD: $out"
grep -q "Transport: $GAUDI_COPY_TL" <<< "$out" ||
    fail "no $GAUDI_COPY_TL transport"
grep -qE 'Device: gaudi[01]$' <<< "$out" || fail "no gaudi device"
ok "ucx_info -d lists gaudi_cpy/$GAUDI_COPY_TL on $(echo "$out" | grep -oE 'Device: gaudi[0-9]+' | head -n1)"
grep -q 'Memory domain: gaudi_ipc' <<< "$out" || fail "no gaudi_ipc MD: $out"
grep -q 'Transport: gaudi_ipc' <<< "$out" || fail "no gaudi_ipc transport"
grep -A3 'Transport: gaudi_ipc' <<< "$out" | grep -q 'Device: gaudi_ipc' ||
    fail "gaudi_ipc transport without its device"
ok "ucx_info -d lists gaudi_ipc/gaudi_ipc"

out=$(env -u UCX_GAUDI_EMU_DEVICES "$UCX_INFO" -d 2>&1)
grep -qi 'gaudi' <<< "$out" && fail "gaudi shown without devices: $(echo "$out" | grep -i gaudi)"
grep -qE '\[.*(WARN|ERROR)' <<< "$out" && fail "warning without devices: $out"
ok "no gaudi device and no warning without the emulator"

cfg=$("$UCX_INFO" -c -f 2>&1)
for knob in GAUDI_COPY_BW GAUDI_COPY_LAT GAUDI_COPY_BOUNCE_SIZE \
            GAUDI_COPY_REG_OVERHEAD GAUDI_COPY_RCACHE GAUDI_COPY_MAX_INFLIGHT \
            GAUDI_COPY_RCACHE_MAX_SIZE GAUDI_EMU_DEVICES GAUDI_DEVICE \
            GAUDI_IPC_BW GAUDI_IPC_LAT GAUDI_IPC_OVERHEAD GAUDI_IPC_CACHE \
            GAUDI_IPC_MAX_INFLIGHT GAUDI_IPC_TIMEOUT GAUDI_IPC_BOUNCE_SIZE; do
    grep -q "UCX_$knob=" <<< "$cfg" || fail "knob UCX_$knob not listed"
done
# every GAUDI_COPY knob is preceded by its help text (a "# <text>" line
# other than the syntax line, since the previous knob's value)
echo "$cfg" | awk '/^UCX_/ { if ($0 ~ /^UCX_GAUDI_(COPY|IPC)_/ && !help) { print; bad = 1 }
                             help = 0; next }
                   /^# [A-Za-z"]/ && !/^# syntax:/ { help = 1 }
                   END { exit bad }' > "$UCX_GAUDI_EMU_STATE_DIR/nohelp" ||
    fail "knobs without help text: $(cat "$UCX_GAUDI_EMU_STATE_DIR/nohelp")"
n=$(echo "$cfg" | grep -c '^UCX_GAUDI_COPY_')
[ "$n" -ge 10 ] || fail "only $n GAUDI_COPY knobs listed"
n=$(echo "$cfg" | grep -c '^UCX_GAUDI_IPC_')
[ "$n" -ge 7 ] || fail "only $n GAUDI_IPC knobs listed"
ok "ucx_info -c -f lists the GAUDI_COPY and GAUDI_IPC knobs with help text"

# a bandwidth knob UCS's parser takes but UCP cannot use (inf, nan, a
# negative number) is refused by name when the interface opens
for bw in infMBs nanMBs -5MBs; do
    out=$(UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_COPY_BW=$bw "$UCX_INFO" -d 2>&1)
    grep -q 'UCX_GAUDI_COPY_BW=.*is out of range' <<< "$out" ||
        fail "UCX_GAUDI_COPY_BW=$bw not refused: $(echo "$out" | grep -i -A2 "$GAUDI_COPY_TL" | head -n 5)"
    grep -A5 "Transport: $GAUDI_COPY_TL" <<< "$out" |
        grep -q 'failed to open interface' ||
        fail "$GAUDI_COPY_TL opened with UCX_GAUDI_COPY_BW=$bw"
    out=$(UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_IPC_BW=$bw "$UCX_INFO" -d 2>&1)
    grep -q 'UCX_GAUDI_IPC_BW=.*is out of range' <<< "$out" ||
        fail "UCX_GAUDI_IPC_BW=$bw not refused"
done
ok "UCX_GAUDI_COPY_BW / UCX_GAUDI_IPC_BW of inf, nan or below 0 are refused by name"
