# Open MPI over our UCX: Debian's Open MPI 4.1 (pml ucx) with our prefix first
# in the library path (the plugin build: UCX 1.22's, and UCX_PLUGIN_PATH), 2 ranks on an emulated 2-device node, each owning one
# Gaudi; MPI_Send/MPI_Recv on Gaudi buffers, 1 B .. 16 MiB, both directions,
# byte-exact (gaudi_mpi_xfer). gaudi_ipc carried the Gaudi -> Gaudi legs:
#  - UCP reports the gaudi_ipc lane in the ranks' endpoint configuration
#    (UCX_LOG_LEVEL=info prints "ep_cfg[N]: tag(... gaudi_ipc/gaudi_ipc)",
#    "cfg#N tag(...)" in newer UCX; the README's way to tell), and
#  - both ranks imported the peer's DMA-BUF (the emulator's accounting), while
#    a control run with the import op missing imports nothing and still
#    passes by staging.
# Environment: MPI_XFER (the program), PREFIX, DEMO (common.bash).
source "$(dirname "$0")/common.bash"
: "${MPI_XFER:?}"
[ -x "$MPI_XFER" ] || fail "no MPI program at $MPI_XFER"
command -v mpirun > /dev/null || fail "mpirun not found (openmpi-bin: contrib/install-deps.sh test)"

export UCX_GAUDI_EMU_DEVICES=2
dir=$(mktemp -d /tmp/ucx-gaudi-mpi.XXXXXX)
trap 'rm -rf "$UCX_GAUDI_EMU_STATE_DIR" "$dir"' EXIT

# The README's line (docs: "From MPI"), plus the emulator's variables
run_mpi() {  # NAME MAX_SIZE EXTRA_MPIRUN_ARGS...
    local name=$1 max=$2
    shift 2
    timeout 300 mpirun -np 2 --allow-run-as-root \
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
        --mca osc ^ucx --mca btl self \
        -x LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        -x UCX_TLS=$GAUDI_COPY_TL,gaudi_ipc,posix,self \
        -x UCX_LOG_LEVEL=info \
        -x UCX_GAUDI_EMU_DEVICES -x UCX_GAUDI_EMU_STATE_DIR \
        ${UCX_PLUGIN_PATH:+-x UCX_PLUGIN_PATH} \
        "$@" "$MPI_XFER" "$max" > "$dir/$name" 2>&1 ||
        { cat "$dir/$name"; fail "$name: mpirun failed"; }
    cat "$dir/$name"
    grep -q '^PASSED: 0 of' "$dir/$name" || fail "$name: not every size passed"
    [ "$(grep -c '^PASS [0-9]' "$dir/$name")" -ge 18 ] ||
        fail "$name: fewer than 18 sizes checked"
}

run_mpi ipc $((16 << 20))
for r in 0 1; do
    n=$(sed -n "s/^rank $r imports=\([0-9-]*\)$/\1/p" "$dir/ipc")
    [ -n "$n" ] && [ "$n" -gt 0 ] ||
        fail "rank $r imported no peer memory (imports=$n): gaudi_ipc did not carry the data"
done
grep -E "$EP_CFG_RE" "$dir/ipc" | grep -q 'gaudi_ipc/' ||
    fail "no endpoint configuration with a gaudi_ipc lane in UCX's info log"
ok "2 ranks, 1 B .. 16 MiB both ways byte-exact; gaudi_ipc lanes, both ranks imported"
# mpirun's local ranks pick the devices the way Habana's runtime does
for r in 0 1; do
    grep -q "(module $r, .*chosen by module ID = local rank $r (OMPI_COMM_WORLD_LOCAL_RANK=$r)" "$dir/ipc" ||
        fail "rank $r does not own module $r: $(grep 'chosen by' "$dir/ipc")"
done
ok "local ranks 0 and 1 (OMPI_COMM_WORLD_LOCAL_RANK) own modules 0 and 1"

UCX_GAUDI_EMU_OOT_IMPORT=n run_mpi staged $((4 << 20)) -x UCX_GAUDI_EMU_OOT_IMPORT
grep -q '^rank 0 imports=0$' "$dir/staged" && grep -q '^rank 1 imports=0$' "$dir/staged" ||
    fail "control: imports counted without the import op"
ok "control without the import op (1 B .. 4 MiB): staged, no import, still byte-exact"
