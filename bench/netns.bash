# Sourced by bench/run.sh: two emulated nodes joined by TCP. Two network
# namespaces linked by a veth pair, each with its own hostname (UTS
# namespace) and its own emulated node of one Gaudi (state directory).
# Needs root, ip (iproute2) and unshare.
#
#   netns_up DIR    create them (state under DIR); 1 and $netns_why if not
#   perftest_ns ENV... -- ARGS...   ucx_perftest server in one, client in
#                   the other: "avg_latency_usec bandwidth_MBps" (overall)
#   netns_down      delete them (also safe if they were never created)

netns_a=ucxg-bench-a-$$
netns_b=ucxg-bench-b-$$
netns_dir=

netns_up() {
    netns_dir=$1
    if [ "$(id -u)" -ne 0 ]; then
        netns_why="needs root for network namespaces"; return 1
    elif ! command -v ip > /dev/null || ! command -v unshare > /dev/null; then
        netns_why="needs ip (iproute2) and unshare"; return 1
    fi
    mkdir -p "$netns_dir"
    if ! ip netns add "$netns_a" 2> "$netns_dir/err" ||
       ! ip netns add "$netns_b" 2>> "$netns_dir/err" ||
       ! ip link add "ucxgb$$a" netns "$netns_a" type veth peer \
            name "ucxgb$$b" netns "$netns_b" 2>> "$netns_dir/err"; then
        netns_why="cannot create the namespaces: $(head -n 1 "$netns_dir/err")"
        netns_down
        return 1
    fi
    # ip netns exec needs "/" to be a mount point (a plain chroot's is not)
    if ! ip netns exec "$netns_a" true 2> "$netns_dir/err"; then
        netns_why="ip netns exec does not work here: $(head -n 1 "$netns_dir/err")"
        netns_down
        return 1
    fi
    ip -n "$netns_a" addr add 10.214.0.1/24 dev "ucxgb$$a"
    ip -n "$netns_b" addr add 10.214.0.2/24 dev "ucxgb$$b"
    ip -n "$netns_a" link set lo up
    ip -n "$netns_b" link set lo up
    ip -n "$netns_a" link set "ucxgb$$a" up
    ip -n "$netns_b" link set "ucxgb$$b" up
    # UCX's tcp lists only running interfaces: wait for the veth carrier
    for _ in $(seq 50); do
        ip -n "$netns_a" link show "ucxgb$$a" | grep -q 'state UP' &&
            ip -n "$netns_b" link show "ucxgb$$b" | grep -q 'state UP' &&
            return 0
        sleep 0.1
    done
    netns_why="the veth pair did not come up"
    netns_down
    return 1
}

netns_down() {
    ip netns del "$netns_a" 2> /dev/null || true
    ip netns del "$netns_b" 2> /dev/null || true
}

# netns_run NS HOST ARGS...: ARGS in namespace NS with hostname HOST and an
# emulated node of its own (with its own gaudi_ipc rendezvous directory, as
# another host would have)
netns_run() {
    local ns=$1 host=$2
    shift 2
    mkdir -p "$netns_dir/emu-$host"
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
        "$host" env UCX_GAUDI_EMU_DEVICES=1 \
        UCX_GAUDI_EMU_STATE_DIR="$netns_dir/emu-$host" \
        UCX_GAUDI_IPC_DIR="$netns_dir/ipc-$host" "$@"
}

perftest_ns() {
    local envs=() srv
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    netns_run "$netns_a" node-a env "${envs[@]}" timeout 300 "$perftest" \
        "$@" -p 13337 > "$netns_dir/server" 2>&1 & srv=$!
    # (the server listens in its own namespace: wait_listen cannot see it)
    sleep 1
    if ! netns_run "$netns_b" node-b env "${envs[@]}" timeout 300 \
             "$perftest" 10.214.0.1 "$@" -p 13337 > "$netns_dir/client" 2>&1 ||
       ! wait $srv; then
        kill $srv 2> /dev/null || true
        cat "$netns_dir/server" "$netns_dir/client" >&2
        echo "bench: ucx_perftest $* between the namespaces failed" >&2
        exit 1
    fi
    awk '$1 == "Final:" { print $5, $7 }' "$netns_dir/client" | tail -n 1
}
