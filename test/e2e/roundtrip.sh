# A UCP application allocates Gaudi memory, UCP detects it by address, and
# a pattern survives host -> Gaudi -> host.
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=1
for size in 1 4097 65536 1048593; do
    timeout 120 "$DEMO" roundtrip $size || fail "roundtrip of $size bytes"
done
ok "UCP round trips intact"
