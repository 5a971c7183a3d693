# Two processes started together on a 2-device node each own a different
# device; a third gets a clear "all devices are busy" message and UCX goes
# on without gaudi (no crash, no hang).
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=2
dir=$(mktemp -d)

timeout 60 "$DEMO" hold 6 > "$dir/a" 2>&1 & a=$!
timeout 60 "$DEMO" hold 6 > "$dir/b" 2>&1 & b=$!
sleep 3
timeout 60 "$DEMO" hold 0 > "$dir/c" 2>&1 || fail "third process failed: $(cat "$dir/c")"
wait $a || fail "first process failed: $(cat "$dir/a")"
wait $b || fail "second process failed: $(cat "$dir/b")"
cat "$dir/a" "$dir/b" "$dir/c"

da=$(grep -oE 'owns gaudi[0-9]+' "$dir/a" || true)
db=$(grep -oE 'owns gaudi[0-9]+' "$dir/b" || true)
[ -n "$da" ] && [ -n "$db" ] || fail "a process owns no device"
[ "$da" != "$db" ] || fail "both processes own the same device ($da)"
ok "processes own different devices ($da, $db)"

grep -q 'owns no Gaudi device' "$dir/c" || fail "third process owns a device"
grep -qi 'all 2 Gaudi devices are busy' "$dir/c" ||
    fail "third process got no clear busy message: $(cat "$dir/c")"
ok "third process: $(grep -i 'busy' "$dir/c" | head -n1)"
rm -rf "$dir"
