# Sourced by the scripts that start a ucx_perftest server and then its
# client (bench/run.sh, test/e2e/ipc_perftest.sh).

# wait_listen PORT: until something listens on TCP PORT (10 s at most)
wait_listen() {
    local hex
    hex=$(printf ':%04X ' "$1")
    for _ in $(seq 100); do
        cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
            awk -v p="$hex" '$4 == "0A" && index($2 " ", p)' | grep -q . &&
            return 0
        sleep 0.1
    done
    return 1
}
