# The module's counters are UCS statistics nodes (UCS_STATS_*), which UCX
# compiles out unless it is configured with --enable-stats, as ours and
# Debian's are not. So that a statistics build of UCX does not break on
# code no build here compiles, every source of the module is compiled with
# ENABLE_STATS, against the same UCX tree (syntax and types only).
# Environment: GAUDI_UCX_TREE (the configured UCX source tree); for the
# plugin build GAUDI_FEATURES_DIR (its ucx_gaudi_features.h).
. "$(dirname "$0")/common.bash"

tree=${GAUDI_UCX_TREE:-}
[ -f "$tree/config.h" ] || skip "no configured UCX tree (GAUDI_UCX_TREE)"
src=$(cd "$(dirname "$0")/../.." && pwd)/src
cc=${CC:-cc}
plugin=()
if [ -n "${GAUDI_FEATURES_DIR:-}" ]; then
    plugin=(-DUCX_GAUDI_PLUGIN -I"$GAUDI_FEATURES_DIR")
fi
n=0
for f in "$src"/uct/gaudi/base/*.c "$src"/uct/gaudi/drv/*.c \
         "$src"/uct/gaudi/copy/*.c "$src"/uct/gaudi/ipc/*.c; do
    "$cc" -std=gnu11 -DHAVE_CONFIG_H -DENABLE_STATS "${plugin[@]}" \
        -I"$src" -I"$tree" \
        -I"$tree/src" -Wall -Werror -Wno-missing-field-initializers \
        -Wno-unused-parameter -Wshadow -fsyntax-only "$f" \
        > "$UCX_GAUDI_EMU_STATE_DIR/cc.log" 2>&1 ||
        fail "$(basename "$f") does not compile with ENABLE_STATS:" \
             "$(head -n 20 "$UCX_GAUDI_EMU_STATE_DIR/cc.log")"
    n=$((n + 1))
done
grep -rq 'UCS_STATS_NODE_ALLOC' "$src/uct/gaudi" ||
    fail "no statistics node in the module: nothing was checked"
ok "$n module sources compile with UCS statistics enabled"
