# The common UCX_TLS mistakes say what is missing (README, "The wrong
# UCX_TLS"). UCP's own messages for them name no cause a user can act on
# ("no active messages transport ... Unsupported operation", "Out of
# memory"): our components say it once per process when UCP queries them
# (ucp_init). A right list says nothing.
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=1
out=$(mktemp)
trap 'rm -rf "$out" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT
copy=$GAUDI_COPY_TL
case "$copy" in
gaudi_copy) other=gaudi_cpy ;;
*)          other=gaudi_copy ;;
esac

# demo TLS: a UCP round trip through Gaudi memory with UCX_TLS=TLS (it may
# fail: the messages are what counts)
demo() {
    UCX_TLS=$1 timeout -k 5 60 "$DEMO" roundtrip 65536 > "$out" 2>&1 || true
}

# the last run's warnings, less UCS's about variables it did not read (the
# test command's environment has some)
warnings() { grep 'UCX  WARN' "$out" | grep -v 'unused env variable' || true; }

# said WHAT TEXT: the last run warned TEXT, once
said() {
    local n
    n=$(warnings | grep -cF -- "$2" || true)
    [ "$n" -eq 1 ] || fail "$1: warned '$2' $n times: $(tail -n 8 "$out")"
}

demo "$copy,gaudi_ipc"
said "Gaudi transports only" "UCX_TLS=$copy,gaudi_ipc lists Gaudi transports only"
said "Gaudi transports only" "e.g. UCX_TLS=$copy,gaudi_ipc,posix,self"
ok "Gaudi transports only: says an active-message transport is needed"

demo "gaudi_ipc,posix,self"
said "no copy transport" "lists gaudi_ipc without $copy"
ok "gaudi_ipc without $copy: says to add it"

demo "$other,gaudi_ipc,posix,self"
grep -q "transport '$other' is not available" "$out" ||
    fail "the other build's name: UCP did not say it is not available: $(tail -n 8 "$out")"
said "the other build's name" "lists gaudi_ipc without $copy"
ok "the other build's name ($other): UCP names it, we name $copy"

demo "$copy,gaudi_ipc,posix,self"
grep -q 'data intact' "$out" || fail "the right list: $(tail -n 8 "$out")"
[ -z "$(warnings)" ] || fail "the right list warns: $(warnings)"
env -u UCX_TLS timeout -k 5 60 "$DEMO" roundtrip 65536 > "$out" 2>&1 ||
    fail "UCX_TLS unset: $(tail -n 8 "$out")"
[ -z "$(warnings)" ] || fail "UCX_TLS unset warns: $(warnings)"
ok "the right list and none: no warning"
