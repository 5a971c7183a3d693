# Shared by the e2e tests: a fresh emulated node and assertion helpers.
# Environment: PREFIX (UCX + gaudi install), DEMO (gaudi_ucp_demo binary).
set -euo pipefail
: "${PREFIX:?}" "${DEMO:?}"
UCX_INFO="$PREFIX/bin/ucx_info"
export UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d /tmp/ucx-gaudi-e2e.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
# the test cannot run here (run-tests.sh counts exit 77 as a skip)
skip() { echo "SKIP: $*"; exit 77; }
ok()   { echo "ok: $*"; }
