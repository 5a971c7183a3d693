# gaudi_cpy provides DMA-BUFs of Gaudi memory to the MDs that register them
# (UCX >= 1.14's API; InfiniBand's ibv_reg_dmabuf_mr on a real node). No NIC
# here: a test-only consumer MD, dbufsink (test/dmabuf), loaded through
# UCX_PLUGIN_PATH, stands in for it, and gaudi_dmabuf_ucp checks through UCP
# that it gets a DMA-BUF whose bytes, at the offset it was given, are the
# buffer's, for every driver form of the export (Gaudi2 with the DRM and the
# 6.1 ABI, Gaudi1), and that no fd or DMA-BUF is left over.
# Environment (besides common.bash's): DMABUF_UCP (the program), DBUFSINK_DIR
# (where libuct_dbufsink.so.0 is), GAUDI_FEATURES_DIR.
. "$(dirname "$0")/common.bash"

features=${GAUDI_FEATURES_DIR:-}/ucx_gaudi_features.h
if [ -z "${GAUDI_FEATURES_DIR:-}" ] ||
   ! grep -q '^#define UCX_GAUDI_HAVE_MD_DMABUF 1' "$features"; then
    skip "this UCX ($GAUDI_BUILD) has no DMA-BUF registration between MDs" \
         "(UCX >= 1.14; 1.13.1 has none)"
fi
: "${DMABUF_UCP:?}" "${DBUFSINK_DIR:?}"
[ -x "$DMABUF_UCP" ] && [ -f "$DBUFSINK_DIR/libuct_dbufsink.so.0" ] ||
    fail "the test programs are not built ($DMABUF_UCP, $DBUFSINK_DIR)"

export UCX_PLUGIN_PATH=${UCX_PLUGIN_PATH:+$UCX_PLUGIN_PATH:}$DBUFSINK_DIR
export UCX_TLS=self,$GAUDI_COPY_TL,dbufsink
export UCX_GAUDI_EMU_DEVICES=1

# ucx_info -d: gaudi_cpy provides DMA-BUFs of Gaudi memory, dbufsink
# registers them
info=$("$UCX_INFO" -d 2>&1) || fail "ucx_info -d: $info"
md_block() {  # the lines of one memory domain's description
    echo "$info" | awk -v md="# Memory domain: $1" \
        '$0 == md { on = 1; next } /^# Memory domain:/ { on = 0 } on'
}
md_block gaudi_cpy | grep -Eq '^#  *memory types:.*gaudi \([a-z_,]*dmabuf' ||
    fail "ucx_info -d does not list gaudi_cpy as a DMA-BUF provider of" \
         "Gaudi memory: $(md_block gaudi_cpy)"
ok "ucx_info -d: gaudi_cpy provides DMA-BUFs of Gaudi memory"
md_block dbufsink | grep -q 'register:.*dmabuf' ||
    fail "ucx_info -d does not show dbufsink registering DMA-BUFs"
ok "ucx_info -d: the consumer MD registers DMA-BUFs"

# run_case NAME ARGS...: one process of the program; its output (UCX logs
# to stdout) is kept in $out for the checks of the failing registrations
out=$UCX_GAUDI_EMU_STATE_DIR/out
run_case() {
    local name=$1 state
    shift
    echo "--- $name"
    # a node of its own: the emulated ASIC and ABI differ between cases
    state=$(mktemp -d "$UCX_GAUDI_EMU_STATE_DIR/node.XXXXXX")
    if ! UCX_GAUDI_EMU_STATE_DIR=$state "$DMABUF_UCP" "$@" > "$out" 2>&1; then
        cat "$out"
        fail "$name"
    fi
    cat "$out"
}

# Gaudi2, DRM ABI: the export holds the allocation (chunk VA + offset);
# the application's memory is exported by its mapping's address
run_case "Gaudi2, DRM ABI" -u -a -i
grep -q 'no DMA-BUF of .* memory' "$out" ||
    fail "no error names why the application's memory inside its mapping" \
         "has no DMA-BUF"
ok "the refusal is named"

# Gaudi2, 6.1 ABI: the export holds the whole chunk (handle form), offsets
# are the allocations' places in it; no export by address
UCX_GAUDI_EMU_ABI=misc run_case "Gaudi2, 6.1 ABI" -u -A
grep -q 'no DMA-BUF of .* memory' "$out" ||
    fail "no error names why the application's memory has no DMA-BUF"
ok "the refusal is named"

# the application's runtime at work after UCX owns the device (raw
# ioctl(), seen by UCX's hook): its memory is exported as UCX's is, from
# inside its mapping and in the 6.1 handle form as well
run_case "Gaudi2, DRM ABI, the runtime's memory seen by the hook" -r -a -i
ok "the runtime's memory (hooked): DMA-BUF from its start and from inside"
UCX_GAUDI_EMU_ABI=misc run_case "Gaudi2, 6.1 ABI, hooked runtime memory" -r -a
ok "the runtime's memory (hooked): DMA-BUF in the 6.1 handle form"

# Gaudi1: physical HBM
UCX_GAUDI_EMU_ASIC=gaudi1 run_case "Gaudi1" -u

# the knob: no provider, Gaudi memory is not offered to the consumer
UCX_GAUDI_COPY_DMABUF=n run_case "UCX_GAUDI_COPY_DMABUF=n" -n
ok "DMA-BUF provider"
