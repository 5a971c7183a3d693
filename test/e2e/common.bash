# Shared by the e2e tests: a fresh emulated node and assertion helpers.
# Environment: PREFIX (UCX's install: in-tree, UCX + gaudi), DEMO
# (gaudi_ucp_demo binary); from test/run-tests.sh also GAUDI_BUILD
# (in-tree-1.13.1 or plugin-<UCX version>: UCX_PLUGIN_PATH is then set),
# GAUDI_COPY_TL (the copy transport's name in that build).
set -euo pipefail
: "${PREFIX:?}" "${DEMO:?}"
UCX_INFO="$PREFIX/bin/ucx_info"
GAUDI_BUILD=${GAUDI_BUILD:-in-tree-1.13.1}
GAUDI_COPY_TL=${GAUDI_COPY_TL:-gaudi_copy}
# UCP's info line of an endpoint configuration and its lanes per feature:
# "ep_cfg[N]: tag(...)" in 1.13.1, "<worker> <scope> cfg#N tag(...)" in
# newer UCX (grep -E)
EP_CFG_RE='(ep_cfg\[[0-9]+\]:|cfg#[0-9]+) '
export UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d /tmp/ucx-gaudi-e2e.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
# the test cannot run here (run-tests.sh counts exit 77 as a skip)
skip() { echo "SKIP: $*"; exit 77; }
# the test checks what only our core patch of UCX 1.13.1 makes UCP do
needs_core_patch() {
    [ "$GAUDI_BUILD" = in-tree-1.13.1 ] ||
        skip "$* (UCX's core patch, in-tree 1.13.1 build only; the" \
             "$GAUDI_BUILD build runs an unpatched UCX: README)"
}
ok()   { echo "ok: $*"; }
