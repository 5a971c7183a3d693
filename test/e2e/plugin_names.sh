# The plugin build beside upstream's Gaudi module (README, "Next to
# upstream's Gaudi module"), which UCX 1.22 ships in src/uct/gaudi
# (gaudi_gdr, libuct_gaudi.so.0) and a process may load with ours:
#  - no symbol our libraries export is a name upstream's module uses: the
#    perftest allocator is loaded RTLD_GLOBAL and brings our module into the
#    global scope, where a name both export would bind upstream's calls to
#    our function;
#  - UCX_MODULES=^hlgaudi removes our module, UCX_MODULES=^gaudi (which
#    removes upstream's) keeps it.
# Environment: GAUDI_UCX_TREE (the configured UCX source tree), PREFIX,
# UCX_PLUGIN_PATH (run-tests.sh exports it for the plugin build).
. "$(dirname "$0")/common.bash"
[ "$GAUDI_BUILD" != in-tree-1.13.1 ] ||
    skip "the plugin's names (plugin build only; in-tree, the module is UCX's own)"
tree=${GAUDI_UCX_TREE:-}
[ -d "$tree/src/uct/gaudi" ] ||
    skip "no upstream Gaudi module in the UCX tree ($tree)"
dir=${UCX_PLUGIN_PATH:?the plugin build sets UCX_PLUGIN_PATH}
export UCX_GAUDI_EMU_DEVICES=1
work=$UCX_GAUDI_EMU_STATE_DIR

# every identifier of upstream's module sources
find "$tree/src/uct/gaudi" "$tree/src/ucs/sys/topo" -name '*.[ch]' \
    -path '*gaudi*' -print0 | xargs -0 cat |
    grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u > "$work/upstream"
[ "$(wc -l < "$work/upstream")" -gt 100 ] ||
    fail "too few identifiers in upstream's module: nothing was checked"
n=0
for lib in libuct_hlgaudi.so.0 libucx_perftest_hlgaudi.so.0; do
    [ -f "$dir/$lib" ] || fail "no $lib in $dir"
    nm -D --defined-only "$dir/$lib" | awk '{ print $3 }' | sort -u \
        > "$work/$lib"
    n=$((n + $(wc -l < "$work/$lib")))
    both=$(comm -12 "$work/upstream" "$work/$lib" | paste -sd ' ' -)
    [ -z "$both" ] || fail "$lib exports names upstream's module uses: $both"
done
[ "$n" -gt 20 ] || fail "only $n exported symbols: nothing was checked"
ok "none of the $n symbols our libraries export is a name of upstream's" \
   "Gaudi module ($(wc -l < "$work/upstream") identifiers)"

out=$("$UCX_INFO" -d 2>&1)
grep -q "Transport: $GAUDI_COPY_TL" <<< "$out" ||
    fail "ucx_info -d lists no $GAUDI_COPY_TL with UCX_PLUGIN_PATH=$dir"
out=$(UCX_MODULES=^hlgaudi "$UCX_INFO" -d 2>&1)
grep -q 'Memory domain: gaudi_' <<< "$out" &&
    fail "UCX_MODULES=^hlgaudi: our MDs still listed"
out=$(UCX_MODULES=^gaudi "$UCX_INFO" -d 2>&1)
grep -q "Transport: $GAUDI_COPY_TL" <<< "$out" ||
    fail "UCX_MODULES=^gaudi (upstream's module out) removed ours too"
grep -q 'Transport: gaudi_ipc' <<< "$out" ||
    fail "UCX_MODULES=^gaudi removed gaudi_ipc"
ok "UCX_MODULES=^hlgaudi removes our module, UCX_MODULES=^gaudi keeps it"
