# A foreign runtime's own Gaudi memory under UCP (issue 27), on a 2-device
# emulated node with UCX_TLS=<copy>,gaudi_ipc,posix,self and the default
# settings (UCX_MEMTYPE_CACHE=y, UCX_GAUDI_APP_MEMORY=y), gaudi_app_ucp:
#  1. The runtime opens the compute node before ucp_init and UCX adopts it:
#     after ucp_init the process holds only that compute fd, and UCX's info
#     line says it was "chosen by the compute node this process already had
#     open (fd F" with the runtime's F.
#  2. One process, APP_MEMORY_CYCLES (100000; 20000 under AddressSanitizer)
#     random raw-ioctl steps (ALLOC 4 KiB..64 MiB, MAP, UNMAP, FREE,
#     re-alloc at the old VA as hint): every ioctl returns 0; after every
#     MAP and UNMAP the memtype cache says Gaudi for every live mapping and
#     not Gaudi for a malloc()ed host buffer; every 250 steps a UCP transfer
#     of a live mapping both ways (tag to the process's own worker, or
#     get/put on an rkey of it ucp_mem_map()ed with no type given, which
#     must detect Gaudi), checked against the device's DMA engine: 0
#     misdetections. At the end the emulator's accounting (dram_maps,
#     host_maps, import_maps, exports, pinned bytes, contexts) and the fd
#     count are back to their baselines. Re-allocs at a hinted VA must have
#     got it again (the VA repeats) at least once.
#  3. Two processes, APP_MEMORY_PAIR_CYCLES (2000; 1000 under ASan) cycles:
#     the exporter's runtime allocates and maps a buffer by raw ioctl (every
#     other cycle at the last VA), fills a window with a per-cycle pattern,
#     ucp_mem_map()s it and sends its rkey; the importer ucp_get_nbx()es the
#     window: 0 stale or failed gets, gaudi_ipc carried every get (a live
#     import of the peer's memory in the importer after each, a gaudi_ipc
#     lane on both endpoints), and the exporter's raw UNMAP after
#     ucp_mem_unmap returns 0 each time (its time, the revocation of the
#     importer, is reported: median and max) and no import of it is live in
#     the importer when the next cycle begins. No import or export left,
#     accounting and fds at their baselines in both processes.
#  4. Control: the same single-process run with UCX_GAUDI_APP_MEMORY=n must
#     fail, and in the expected way: UCX still adopts the fd, but under the
#     emulator no hook serves the raw ioctl (ENOTTY): "raw ioctl not
#     served: the hook is off", exit status 4. The test depends on the hook.
# Environment: APP_UCP (the gaudi_app_ucp binary; default: beside IPC_UCP,
# which test/run-tests.sh sets for each build, else beside this script),
# APP_MEMORY_CYCLES, APP_MEMORY_PAIR_CYCLES, APP_MEMORY_TIMEOUT (each run's
# bound, 280 s), PREFIX, DEMO (common.bash).
. "$(dirname "$0")/common.bash"
APP_UCP=${APP_UCP:-$(dirname "${IPC_UCP:-$0}")/gaudi_app_ucp}
[ -x "$APP_UCP" ] || fail "no gaudi_app_ucp program at $APP_UCP (set APP_UCP)"
# Under AddressSanitizer (contrib/sanitize.sh) each step costs some 30
# times more (the host buffers of up to 64 MiB malloc()ed for the memtype
# checks are poisoned and faulted in): fewer steps keep it near a minute
if ldd "$APP_UCP" 2> /dev/null | grep -q libasan; then
    cycles=${APP_MEMORY_CYCLES:-20000}
    pair_cycles=${APP_MEMORY_PAIR_CYCLES:-1000}
else
    cycles=${APP_MEMORY_CYCLES:-100000}
    pair_cycles=${APP_MEMORY_PAIR_CYCLES:-2000}
fi
export UCX_GAUDI_EMU_DEVICES=2 UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,posix,self
dir=$(mktemp -d /tmp/ucx-gaudi-app-memory.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"' EXIT

# each run's own bound, seconds (10^5 pair cycles take about 12 minutes)
run_timeout=${APP_MEMORY_TIMEOUT:-280}

# run NAME ENV... -- ARGS...: the program on a fresh emulated node, its
# output in $dir/NAME; sets rc (its exit status)
run() {
    local name=$1 envs=()
    shift
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    rm -rf "$dir/emu"; mkdir "$dir/emu"
    rc=0
    env "${envs[@]}" UCX_GAUDI_EMU_STATE_DIR="$dir/emu" UCX_LOG_LEVEL=info \
        timeout -k 5 $((run_timeout + 20)) "$APP_UCP" -t "$run_timeout" "$@" \
        > "$dir/$name" 2>&1 || rc=$?
}

# show NAME [PREFIX]: what the program said (UCX's log lines left out),
# each line after PREFIX
show() {
    echo "--- $1: gaudi_app_ucp output (UCX log left out):"
    grep -vE '^\[[0-9.]+\] \[' "$dir/$1" | head -n 40 | sed "s/^/${2:-}/" ||
        true
}

# num NAME LINE KEY: the value of KEY=V on the first line of NAME starting
# with LINE
num() {
    sed -n "s/^$2.* $3=\([0-9./-]*\).*/\1/p" "$dir/$1" | head -n 1
}

# adopted NAME ROLE: the runtime's fd was the one UCX took; in $afd
adopted() {
    local name=$1 role=$2
    afd=$(sed -n "s/^\[$role\] adopted fd \([0-9]*\):.*/\1/p" "$dir/$name")
    [ -n "$afd" ] || fail "$name: the $role's fd was not adopted"
    grep "chosen by the compute node this process already had open" \
        "$dir/$name" | grep -q "(fd $afd," ||
        fail "$name: no UCX info line says the $role's fd $afd was adopted"
}

# counters NAME SIDE: the accounting at the end equals the baseline, with
# no import or export, and so do the fds; in $counted
counters() {
    local name=$1 side=$2 base end
    base=$(sed -n "s/^counters $side baseline: //p" "$dir/$name")
    end=$(sed -n "s/^counters $side end: //p" "$dir/$name")
    [ -n "$base" ] && [ "$base" = "$end" ] ||
        fail "$name: $side's accounting: baseline '$base', end '$end'"
    grep -q 'import_maps=0 .*exports=0' <<< "$end" ||
        fail "$name: $side: imports or exports left: $end"
    grep -q "^fds $side baseline=\([0-9]*\) end=\1\$" "$dir/$name" ||
        fail "$name: $side's fds: $(grep "^fds $side" "$dir/$name")"
    counted="$end; fds $(sed -n "s/^fds $side baseline=\([0-9]*\).*/\1/p" \
                               "$dir/$name")"
}

# ---- 1, 2: one process -------------------------------------------------
run cycles -- -k 250 cycles "$cycles"
show cycles
[ "$rc" -eq 0 ] && grep -q '^PASS$' "$dir/cycles" ||
    fail "cycles: exit status $rc: $(grep -m1 '^FAIL' "$dir/cycles" || true)"
adopted cycles app
ok "cycles: the runtime's compute fd $afd, opened before ucp_init, was" \
   "adopted by UCX (the only compute fd afterwards)"
steps=$(num cycles cycles steps)
mis=$(num cycles cycles misdetections)
[ "$steps" = "$cycles" ] || fail "cycles: $steps steps run, not $cycles"
[ "$mis" = 0 ] || fail "cycles: $mis misdetection(s)"
xfers=$(num cycles cycles transfers)
# (one is put off while no mapping is live: not exactly one per 250)
[ "${xfers:-0}" -ge $((cycles / 500)) ] && [ "${xfers:-0}" -gt 0 ] ||
    fail "cycles: only $xfers transfers (expected about $((cycles / 250)))"
reuse=$(num cycles cycles va_reuse)
[ "${reuse%%/*}" -gt 0 ] || fail "cycles: no re-alloc got its old VA again"
ok "cycles: $steps raw-ioctl steps (alloc=$(num cycles cycles alloc)" \
   "map=$(num cycles cycles map) unmap=$(num cycles cycles unmap)" \
   "free=$(num cycles cycles free) realloc=$(num cycles cycles realloc))" \
   "in $(num cycles cycles time) s, all returned 0"
ok "cycles: misdetections 0 over $(num cycles cycles lookups) memtype" \
   "lookups and $xfers UCP transfers (tag=$(num cycles cycles tag)" \
   "rma=$(num cycles cycles rma), $(num cycles cycles bytes) bytes" \
   "checked by the DMA engine)"
ok "cycles: VA reuse: $reuse re-allocs got the old VA again;" \
   "$(num cycles cycles max_live) live handles at most"
counters cycles app
ok "cycles: back to the baseline: $counted"

# ---- 3: two processes --------------------------------------------------
run pair -- pair-cycles "$pair_cycles"
show pair
[ "$rc" -eq 0 ] && grep -q '^PASS$' "$dir/pair" ||
    fail "pair: exit status $rc: $(grep -m1 '^FAIL' "$dir/pair" || true)"
adopted pair exporter
e=$afd
adopted pair importer
ok "pair: both runtimes' fds (exporter $e, importer $afd) adopted by UCX"
n=$(num pair pair cycles)
[ "$n" = "$pair_cycles" ] || fail "pair: $n cycles run, not $pair_cycles"
[ "$(num pair pair stale)" = 0 ] && [ "$(num pair pair errors)" = 0 ] ||
    fail "pair: stale=$(num pair pair stale) errors=$(num pair pair errors)"
# the UNMAP returned 0, so the driver saw no DMA-BUF of it left: nor may
# the importer's accounting (its import was revoked before the next cycle)
[ "$(num pair pair left)" = 0 ] ||
    fail "pair: $(num pair pair left) cycle(s) began with an earlier" \
         "cycle's import still live in the importer"
imported=$(num pair pair imported)
[ "$imported" = "$n" ] ||
    fail "pair: gaudi_ipc imported the peer's buffer in $imported of $n" \
         "cycles"
lanes_e=$(num pair 'gaudi_ipc lanes:' exporter)
lanes_i=$(num pair 'gaudi_ipc lanes:' importer)
[ "${lanes_e:-0}" -gt 0 ] && [ "${lanes_i:-0}" -gt 0 ] ||
    fail "pair: no gaudi_ipc lane (exporter=$lanes_e importer=$lanes_i)"
ok "pair: $n cycles in $(num pair pair time) s ($(num pair pair rate)" \
   "cycles/s): stale 0, failed gets 0; gaudi_ipc imported every buffer" \
   "($imported/$n; lanes exporter=$lanes_e importer=$lanes_i)"
ok "pair: every raw UNMAP returned 0 after ucp_mem_unmap; its wait" \
   "(revoking the importer, whose import was still cached after the rkey" \
   "went in $(num pair pair cached) cycles): median" \
   "$(num pair pair unmap_median_us) us, max $(num pair pair unmap_max_us)" \
   "us; VA reuse $(num pair pair va_reuse) hinted cycles"
counters pair exporter
ok "pair: exporter back to the baseline: $counted"
counters pair importer
ok "pair: importer back to the baseline: $counted"

# ---- 4: control: without the hook the raw ioctls are not served ----------
run control UCX_GAUDI_APP_MEMORY=n -- cycles 1000
show control "    expected: "
[ "$rc" -ne 0 ] || fail "control: passed with UCX_GAUDI_APP_MEMORY=n"
adopted control app
[ "$rc" -eq 4 ] && grep -q 'raw ioctl not served: the hook is off' \
                       "$dir/control" ||
    fail "control: failed otherwise than expected (exit status $rc):" \
         "$(grep -m1 '^FAIL' "$dir/control" || true)"
ok "control: with UCX_GAUDI_APP_MEMORY=n the fd is still adopted, and the" \
   "first raw ioctl fails: $(grep -m1 -o 'raw ioctl not served.*' \
                              "$dir/control")"
