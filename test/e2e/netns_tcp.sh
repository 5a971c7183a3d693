# Two emulated nodes joined by TCP: two network namespaces linked by a veth
# pair, each with its own hostname (UTS namespace) and its own emulated
# node (state directory) of one Gaudi. gaudi_ipc_ucp runs as a server in one
# and a client in the other with UCX_TLS=gaudi_copy,gaudi_ipc,tcp,self: tag,
# put, get and AM on Gaudi memory at both ends, 8 B .. 4 MiB, both
# directions, byte-exact; gaudi_ipc has no lane to the other node, and no
# process imported a DMA-BUF of it (gaudi_ipc reaches the processes that
# share its rendezvous directory: each node has its own, as two hosts would;
# test/e2e/containers.sh shares one across namespaces).
# Needs root and `ip netns` (iproute2) and `unshare`: otherwise it is
# SKIPPED (exit 77), which run-tests.sh counts as a skip, not a pass.
# Environment: IPC_UCP (the gaudi_ipc_ucp binary; default: next to this
# script), PREFIX, DEMO (common.bash).
. "$(dirname "$0")/common.bash"
IPC_UCP=${IPC_UCP:-$(dirname "$0")/gaudi_ipc_ucp}
[ -x "$IPC_UCP" ] || fail "no gaudi_ipc_ucp program at $IPC_UCP (set IPC_UCP)"

[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip > /dev/null || skip "needs ip (iproute2) for ip netns"
command -v unshare > /dev/null || skip "needs unshare (util-linux)"

ns_a=ucxg-a-$$ ns_b=ucxg-b-$$
dir=$(mktemp -d /tmp/ucx-gaudi-netns.XXXXXX)
cleanup() {
    ip netns del "$ns_a" 2> /dev/null || true
    ip netns del "$ns_b" 2> /dev/null || true
    rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"
}
trap cleanup EXIT

if ! ip netns add "$ns_a" 2> "$dir/netns.err" ||
   ! ip netns add "$ns_b" 2>> "$dir/netns.err"; then
    skip "cannot create network namespaces here: $(head -n 1 "$dir/netns.err")"
fi
# ip netns exec needs "/" to be a mount point (a plain chroot's is not)
ip netns exec "$ns_a" true 2> "$dir/netns.err" ||
    skip "ip netns exec does not work here: $(head -n 1 "$dir/netns.err")"
ip link add "ucxg$$a" netns "$ns_a" type veth peer name "ucxg$$b" \
    netns "$ns_b" || fail "cannot create a veth pair between the namespaces"
ip -n "$ns_a" addr add 10.213.0.1/24 dev "ucxg$$a"
ip -n "$ns_b" addr add 10.213.0.2/24 dev "ucxg$$b"
for ns in "$ns_a" "$ns_b"; do
    ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set "ucxg$$a" up
ip -n "$ns_b" link set "ucxg$$b" up
# UCX's tcp lists only running interfaces: wait for the veth carrier
for _ in $(seq 50); do
    ip -n "$ns_a" link show "ucxg$$a" | grep -q 'state UP' &&
        ip -n "$ns_b" link show "ucxg$$b" | grep -q 'state UP' && break
    sleep 0.1
done
ok "namespaces $ns_a (10.213.0.1) and $ns_b (10.213.0.2) over a veth pair"

# on_node NS HOST NAME ARGS...: gaudi_ipc_ucp in network namespace NS with
# hostname HOST and an emulated node of its own; output in $dir/NAME
on_node() {
    local ns=$1 host=$2 name=$3
    shift 3
    mkdir -p "$dir/emu-$host"
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
        "$host" env UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,tcp,self \
        UCX_GAUDI_EMU_DEVICES=1 UCX_GAUDI_EMU_STATE_DIR="$dir/emu-$host" \
        UCX_GAUDI_IPC_DIR="$dir/ipc-$host" \
        UCX_LOG_LEVEL=info timeout 200 "$IPC_UCP" -t 180 -p 13337 \
        -s 8,65536,4194304 "$@" > "$dir/$name" 2>&1
}

on_node "$ns_a" node-a server server & srv=$!
rc=0
on_node "$ns_b" node-b client client 10.213.0.1 || rc=$?
wait $srv || rc=$((rc ? rc : 100 + $?))
echo "--- client report:"
grep -vE '^\[[0-9.]+\] \[' "$dir/client" || true
if [ "$rc" -ne 0 ] || grep -q '^FAIL' "$dir/client"; then
    echo "--- server output:"
    grep -vE '^\[[0-9.]+\] \[.*INFO' "$dir/server" | tail -n 30
    fail "traffic between the namespaces failed (exit status $rc)"
fi
grep -q '^PASS: 0 operation(s) failed' "$dir/client" || fail "no final verdict"
n=$(grep -c '^PASS [a-z_]* [0-9]' "$dir/client" || true)
[ "$n" -eq 24 ] || fail "$n operations passed, expected 24"
ok "tag/put/get/am 8 B..4 MiB both ways byte-exact between the namespaces"

grep -q '^lane client:.*tcp/' "$dir/client" ||
    fail "the client's endpoint has no tcp lane"
# the nodes do not share a rendezvous directory: a peer of the other one is
# not reachable, and must get no lane (else every rendezvous first tries an
# import that cannot succeed)
! grep -E '^lane (client|server):.*gaudi_ipc' "$dir/client" "$dir/server" ||
    fail "gaudi_ipc claims to reach a process of another node"
imports=$(sed -n 's/^gaudi_emu import_maps max: //p' "$dir/client")
[ "$imports" = "client=0 server=0" ] ||
    fail "a DMA-BUF of the other node was imported ($imports)"
ok "over tcp; no DMA-BUF crossed the nodes ($imports)"
