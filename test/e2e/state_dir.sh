# The emulator's state directory after its users are gone (docs/emulator.md,
# "The state directory"): the last process that leaves a node removes the
# HBM backing files (sparse, but every page written stays on disk or in
# tmpfs: 2 x 96 GiB apparent for a 2-device Gaudi2 node) and the DMA-BUF
# FIFOs nobody holds (a crashed exporter leaves them); what stays is a few
# KiB. While another process uses the node nothing of it is removed. A user
# holds a shared flock on node.state (emu_state.c): "another user" here is a
# process holding one.
. "$(dirname "$0")/common.bash"
export UCX_GAUDI_EMU_DEVICES=2
dir=$UCX_GAUDI_EMU_STATE_DIR
pids=()
trap 'kill "${pids[@]}" 2> /dev/null || true; rm -rf "$dir"' EXIT

# one process that opens the node and leaves it: ucx_info -d opens every
# emulated device
use_node() {
    "$UCX_INFO" -d > "$dir.out" 2>&1 ||
        fail "ucx_info -d: $(tail -n 5 "$dir.out")"
    grep -q 'Transport: *gaudi' "$dir.out" ||
        fail "ucx_info -d listed no Gaudi transport: $(tail -n 5 "$dir.out")"
    rm -f "$dir.out"
}

apparent_kib() { du -s --apparent-size --block-size=1K "$dir" | cut -f1; }

# hold_file FILE: a process that holds a shared flock on FILE until killed
# (opened read-write: a FIFO opened for reading alone waits for a writer)
hold_file() {
    ( exec 7<> "$1" && flock -s 7 && exec sleep 300 ) &
    pids+=($!)
    # the lock is taken once flock(1) has run: wait for sleep (from /proc:
    # a minimal root has no ps)
    for _ in $(seq 100); do
        [ "$(cat "/proc/${pids[-1]}/comm" 2> /dev/null)" = sleep ] && return 0
        sleep 0.05
    done
    fail "the lock holder for $1 did not start"
}

# 1. a process alone: its node's HBM backings go with it
use_node
ls "$dir"/hbm* > /dev/null 2>&1 &&
    fail "HBM backing files left after the last user: $(ls -l "$dir")"
kib=$(apparent_kib)
[ "$kib" -lt 1024 ] ||
    fail "the state directory holds $kib KiB (apparent) after the last user"
ok "after the last user: no HBM backing, $kib KiB left ($(ls "$dir" | xargs))"

# 2. a crash's leftovers: a FIFO nobody holds goes, a held one stays
mkfifo -m 0600 "$dir/dmabuf-0-0-1000-99999-1"
mkfifo -m 0600 "$dir/dmabuf-1-0-1000-99998-2"
hold_file "$dir/dmabuf-1-0-1000-99998-2"
use_node
[ ! -e "$dir/dmabuf-0-0-1000-99999-1" ] ||
    fail "a DMA-BUF FIFO nobody holds was left"
[ -p "$dir/dmabuf-1-0-1000-99998-2" ] ||
    fail "a DMA-BUF FIFO that is held was removed"
kill "${pids[-1]}"; wait "${pids[-1]}" 2> /dev/null || true
ok "a crashed exporter's DMA-BUF goes, a held one stays"

# 3. while another process uses the node, its HBM backings stay (a FIFO
# nobody holds may go at any time: the emulator's users drop those too when
# they look for a device's exporters)
hold_file "$dir/node.state"
use_node
ls "$dir"/hbm0 "$dir"/hbm1 > /dev/null ||
    fail "HBM backing removed while another process uses the node"
ok "with another user: the HBM backings stay"
# ... and the next last user removes them
kill "${pids[-1]}"; wait "${pids[-1]}" 2> /dev/null || true
mkfifo -m 0600 "$dir/dmabuf-0-0-1000-99997-3"
use_node
ls "$dir"/hbm* "$dir"/dmabuf-* > /dev/null 2>&1 &&
    fail "left after the last user: $(ls "$dir" | xargs)"
ok "the next last user removes them"
