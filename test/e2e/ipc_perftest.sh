# Issue 4's acceptance on a 2-device emulated node: ucx_perftest between two
# processes (server, and client on localhost), Gaudi memory at both ends,
# reports bandwidth over gaudi_ipc:
#   UCT: -x gaudi_ipc -d <the gaudi_ipc device ucx_info -d lists>, 4 MiB:
#        -t put_bw with ucx_perftest's default layout (short) and -D zcopy,
#        -t get -D zcopy
#   UCP: -t ucp_put_bw, tag_bw, ucp_get with UCX_TLS=gaudi_copy,gaudi_ipc,
#        self,posix (gaudi_cpy,... in the plugin build), 4 MiB; the endpoints
#        of both processes have a gaudi_ipc lane. (That UCP really moves the data over it is ipc_ucp.sh's -P.)
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=2
perftest="$PREFIX/bin/ucx_perftest"
dir=$(mktemp -d /tmp/ucx-gaudi-ipc-perf.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"' EXIT
size=4194304

# (ucx_info's output is read whole before it is searched: a reader that
# stops at the first match makes ucx_info die of SIGPIPE, and pipefail
# turns that into this script's exit status 141, as in a CI run)
info=$("$UCX_INFO" -d)
dev=$(awk '/Transport: gaudi_ipc$/ { f = 1 }
           f && /Device:/ && !d { d = $3 } END { print d }' <<< "$info")
[ -n "$dev" ] || fail "ucx_info -d lists no gaudi_ipc transport: $(grep -i gaudi <<< "$info")"
ok "ucx_info -d: transport gaudi_ipc on device $dev"

. "$(dirname "$0")/../../contrib/wait-listen.bash"

# pair NAME ENV... -- ARGS...: ucx_perftest server + client on localhost;
# sets bw to the client's bandwidth (MB/s) of the Final row (its "overall"
# column: the "average" one covers only the last report interval)
pair() {
    local name=$1 envs=() port srv
    shift
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    # (a random port another process holds: the next one, twice)
    for try in 1 2 3; do
        port=$((20000 + RANDOM % 12000))
        env "${envs[@]}" timeout 120 "$perftest" "$@" -p "$port" \
            > "$dir/$name.server" 2>&1 & srv=$!
        wait_listen "$port" && break
        kill $srv 2> /dev/null || true
        wait $srv 2> /dev/null || true
        grep -qi 'address already in use' "$dir/$name.server" &&
            [ $try -lt 3 ] ||
            fail "$name: server does not listen on port $port:" \
                 "$(tail -n 8 "$dir/$name.server")"
    done
    env "${envs[@]}" timeout 120 "$perftest" localhost "$@" -p "$port" \
        > "$dir/$name.client" 2>&1 ||
        { kill $srv 2>/dev/null || true
          fail "$name: client failed: $(tail -n 8 "$dir/$name.client")"; }
    wait $srv || fail "$name: server failed: $(tail -n 8 "$dir/$name.server")"
    bw=$(awk '$1 == "Final:" { print $7 }' "$dir/$name.client")
    [ -n "$bw" ] || fail "$name: no Final row: $(tail -n 8 "$dir/$name.client")"
}

# UCT, the gaudi_ipc interface itself: put_bw with ucx_perftest's default
# data layout (short, as in the issue's command) and zero copy; get zero copy
# (ucx_perftest 1.13 has no short layout for get, and 4 MiB exceeds bcopy)
for run in "put_bw" "put_bw -D zcopy" "get -D zcopy"; do
    set -- $run
    t=$1; shift
    pair "uct-$t${1:+-zcopy}" -- -t "$t" -x gaudi_ipc -d "$dev" "$@" \
        -m gaudi,gaudi -s $size -n 200
    ok "UCT $t ${*:--D short (default)} gaudi_ipc/$dev, 4 MiB gaudi->gaudi" \
       "between two processes: $bw MB/s"
done

# UCP over gaudi_ipc: both processes' endpoints must have a gaudi_ipc lane.
# UCP 1.13.1's debug log prints the lanes of every endpoint configuration
# ("lane[N]: ... gaudi_ipc/<dev> ..."; its info-level "ep_cfg" summary does
# not list rma_bw lanes with the RMA feature alone). Newer UCX's info-level
# summary ("cfg#N tag(...) rma(...)") lists them, and its debug log
# deadlocks on a node whose devices have no sysfs path (the emulator's:
# ucs_topo_get_common_path logs their names under the topology lock).
export UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,self,posix
if [ "$GAUDI_BUILD" = in-tree-1.13.1 ]; then
    log_level=debug lane_re='lane\[[0-9]*\]:.*gaudi_ipc/'
else
    log_level=info lane_re="$EP_CFG_RE.*gaudi_ipc/"
fi
for t in ucp_put_bw tag_bw ucp_get; do
    pair "ucp-$t" UCX_LOG_LEVEL=$log_level -- -t "$t" -m gaudi,gaudi \
        -s $size -n 200
    for side in client server; do
        grep -qE "$lane_re" "$dir/ucp-$t.$side" ||
            fail "UCP $t: the $side's endpoint has no gaudi_ipc lane:" \
                 "$(grep -hE 'lane\[|cfg#' "$dir/ucp-$t.$side" |
                    sed 's/.*: lane/lane/; s/.*INFO *//')"
    done
    lanes=$(grep -hE "$lane_re" "$dir/ucp-$t.client" |
            sed 's/.*: lane/lane/; s/.*INFO *//; s/  */ /g' | sort -u |
            paste -sd ';' -)
    ok "UCP $t, 4 MiB gaudi->gaudi between two processes: $bw MB/s ($lanes)"
done
