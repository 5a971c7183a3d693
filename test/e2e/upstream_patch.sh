# contrib/upstream/ucx-1.22.0-rndv-status.patch does what it says: on
# the unpatched UCX 1.22.0 of the plugin build, a rendezvous whose get fails
# (the receiver's Gaudi device fails) leaves the sender's request waiting
# forever, and a rendezvous whose sender-side copy fails delivers wrong data
# as a success; with the patch applied to libucp, neither.
# The patch is applied to a copy of the plugin build's UCX tree and libucp
# rebuilt there (two files; about a minute); the same fault-matrix cells
# (docs/faults.md) then run against each libucp.
#
# Environment: GAUDI_UCX_TREE (the built UCX 1.22.0 tree), FAULT_UCP,
# PREFIX, DEMO (common.bash).
. "$(dirname "$0")/common.bash"
case "$GAUDI_BUILD" in
plugin-1.22.0*) ;;
*) skip "the patch is for UCX 1.22.0; the plugin builds run this test" \
        "(this is the $GAUDI_BUILD build)" ;;
esac
here=$(cd "$(dirname "$0")/../.." && pwd)
patch_file=$here/contrib/upstream/ucx-1.22.0-rndv-status.patch
: "${GAUDI_UCX_TREE:?GAUDI_UCX_TREE is not set (run-tests.sh sets it)}"
[ -f "$GAUDI_UCX_TREE/src/ucp/.libs/libucp.so" ] ||
    fail "no built libucp in $GAUDI_UCX_TREE"
FAULT_UCP=${FAULT_UCP:-$(dirname "$0")/gaudi_fault_ucp}
[ -x "$FAULT_UCP" ] || fail "no gaudi_fault_ucp program at $FAULT_UCP"
tmp=$(mktemp -d /tmp/ucx-gaudi-upstream.XXXXXX)
trap 'rm -rf "$tmp" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

# a copy (not links: the build rewrites objects in place) with the dates
# kept, so that make rebuilds only what the patch touches
cp -a "$GAUDI_UCX_TREE" "$tmp/ucx"
patch -d "$tmp/ucx" -p1 < "$patch_file" > "$tmp/patch.log" 2>&1 ||
    fail "the patch does not apply to UCX 1.22.0: $(cat "$tmp/patch.log")"
make -C "$tmp/ucx/src/ucp" > "$tmp/make.log" 2>&1 ||
    fail "libucp does not build with the patch: $(tail -n 20 "$tmp/make.log")"
ok "the patch applies to UCX 1.22.0 and libucp builds with it"

export UCX_GAUDI_EMU_DEVICES=2 UCX_GAUDI_DMA_TIMEOUT=1s
# the constant estimates: the cells reproduce the bugs on the protocols UCX
# 1.22 chooses with them (bug 2: an 8-byte tag from Gaudi memory by
# rendezvous, rkey_ptr/mtype); with the measured ones (docs/design.md,
# "What UCP is told") it sends 8 bytes eagerly, that path is not reached,
# and a failed copy there meets dt.c's abort instead (checked 2026-12-03)
export UCX_GAUDI_PERF_PROBE=n
# cell LIBDIR SIDE OP SIZE: a fault-matrix cell whose SIDE's device fails
# (fail:cs:1+:EIO); prints its outcome, "hang" or "corruption"
cell() {
    local libdir=$1 side=$2 op=$3 size=$4 rc=0
    local out=$tmp/cell.$2.$3.$4.$(basename "$1")
    rm -rf "$tmp/emu"; mkdir "$tmp/emu"
    LD_LIBRARY_PATH=$libdir UCX_GAUDI_EMU_STATE_DIR="$tmp/emu" \
        UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,posix,self \
        timeout -k 5 60 "$FAULT_UCP" -o "$op" -s "$size" -f fail:cs:1+:EIO \
        -w "$side" -e none -t 10 > "$out" 2>&1 || rc=$?
    if grep -qE 'did not complete in|in this process hangs' "$out"; then
        echo hang
    elif grep -q 'silent corruption' "$out"; then
        echo corruption
    elif grep -q 'Fatal: mem type' "$out"; then
        echo "dt.c abort"
    elif [ $rc -eq 0 ]; then
        grep -m1 '^CELL' "$out" | sed 's/.*outcome=//'
    else
        echo "exit $rc: $(grep -E '^(DIE|CELL)|Fatal' "$out" | head -n 3)"
    fi
}

patched=$tmp/ucx/src/ucp/.libs
# bug 1: the target's get fails: the initiator's 4 MiB tag send waited for
# its ATS; the initiator's own copy of Gaudi memory (a rendezvous through its
# self endpoint, fetched by the copy transport) waited the same way
for c in "target tag" "initiator put"; do
    before=$(cell "$PREFIX/lib" $c 4194304)
    after=$(cell "$patched" $c 4194304)
    [ "$before" = hang ] ||
        fail "$c: unpatched UCX 1.22.0 no longer hangs ($before): has" \
             "upstream changed? docs/faults.md and the patch say it does"
    [ "$after" = error ] ||
        fail "$c: with the patch: $after, not an error on both sides"
    ok "bug 1, $c 4 MiB: unpatched UCX hangs, patched ends with the error"
done

# bug 2: the initiator's copy of its 8 B message into the target's mapped
# fragment fails (rndv/rkey_ptr/mtype): the target received wrong bytes as a
# success. Patched, both requests fail; the cell's program then goes on
# and meets the abort the patch leaves (dt.c, docs/faults.md)
before=$(cell "$PREFIX/lib" initiator tag 8)
after=$(cell "$patched" initiator tag 8)
[ "$before" = corruption ] ||
    fail "initiator tag 8: unpatched UCX 1.22.0 no longer reports wrong" \
         "data as success ($before): has upstream changed?"
[ "$after" = "dt.c abort" ] || [ "$after" = error ] ||
    fail "initiator tag 8: with the patch: $after"
ok "bug 2, initiator tag 8 B: unpatched UCX reports wrong data as success," \
   "patched does not ($after)"
