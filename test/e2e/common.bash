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

# ---- two processes of gaudi_ipc_ucp (ipc_ucp.sh, containers.sh) ----------
# Their server's and client's output are in $dir/RUN.server and
# $dir/RUN.client ($dir: the script's own directory).

# ipc_ucp_verdict RUN RC EXPECTED_PASSES: fails unless the pair RUN exited 0
# (RC: the first non-zero exit status of the two, 0 none) and the client
# reports every operation passed, EXPECTED_PASSES of them; on a failure,
# the end of the server's output too
ipc_ucp_verdict() {
    local run=$1 rc=$2 expect=$3 n
    if grep -q '^FAIL' "$dir/$run.client" || [ "$rc" -ne 0 ]; then
        echo "--- $run: server output:"
        # (|| true: a server that printed nothing else must not end the
        # script here, before the reason is said)
        grep -vE '^\[[0-9.]+\] \[.*INFO' "$dir/$run.server" | tail -n 30 ||
            true
        fail "$run: $(grep -c '^FAIL [a-z]' "$dir/$run.client")" \
             "operation(s) failed (exit status $rc):" \
             "$(grep -m1 '^FAIL' "$dir/$run.client")"
    fi
    grep -q '^PASS: 0 operation(s) failed' "$dir/$run.client" ||
        fail "$run: no final verdict"
    n=$(grep -c '^PASS [a-z_]* [0-9]' "$dir/$run.client" || true)
    [ "$n" -eq "$expect" ] ||
        fail "$run: $n operations passed, expected $expect"
}

# field RUN LINE KEY: the number KEY=N on the line starting with LINE of
# the client report of RUN
field() {
    sed -n "s/^$2.*$3=\([0-9-]*\).*/\1/p" "$dir/$1.client" | head -n 1
}

# check_ipc_lanes RUN: RUN used gaudi_ipc: lanes on both endpoints, imports
# in both processes
check_ipc_lanes() {
    local name=$1 c s side
    c=$(field "$name" 'gaudi_ipc lanes:' client)
    s=$(field "$name" 'gaudi_ipc lanes:' server)
    [ "${c:-0}" -gt 0 ] && [ "${s:-0}" -gt 0 ] ||
        fail "$name: no gaudi_ipc lane (client=$c server=$s)"
    for side in client server; do
        grep -hE "$EP_CFG_RE" "$dir/$name.$side" | grep -q 'gaudi_ipc/' ||
            fail "$name: the $side's ep_cfg lines show no gaudi_ipc"
    done
    ok "$name: both endpoints have a gaudi_ipc lane:" \
       "$(grep -h '^lane client:.*gaudi_ipc/' "$dir/$name.client" |
          sed 's/^lane client: *//; s/  */ /g' | paste -sd ';' -)"
    grep -q '^gaudi_emu import_maps max: unavailable' "$dir/$name.client" &&
        fail "$name: the emulator does not export gaudi_emu_get_stats"
    c=$(field "$name" 'gaudi_emu import_maps max:' client)
    s=$(field "$name" 'gaudi_emu import_maps max:' server)
    [ "${c:-0}" -gt 0 ] && [ "${s:-0}" -gt 0 ] ||
        fail "$name: the emulator saw no import (client=$c server=$s)"
    ok "$name: gaudi_ipc imported the peer's memory in both processes" \
       "(peak live imports client=$c server=$s)"
}
