# The in-tree UCX has InfiniBand/RoCE (README, "On a cluster"): built with
# verbs and rdmacm like Debian's libucx0, its ib and rdmacm modules load
# (their rdma-core libraries resolve), and without an RDMA device they find
# nothing and change nothing: UCP still moves Gaudi memory.
. "$(dirname "$0")/common.bash"

[ "$GAUDI_BUILD" = in-tree-1.13.1 ] ||
    skip "the $GAUDI_BUILD build's UCX is configured without verbs here" \
         "(a user's UCX brings its own; the plugin does not depend on it)"

# ucx_info -b: the modules and the transports
build_cfg=$("$UCX_INFO" -b)
modules=$(echo "$build_cfg" | sed -n 's/^#define uct_MODULES *"\(.*\)"/\1/p')
for m in ib rdmacm; do
    [[ ":$modules:" == *":$m:"* ]] ||
        fail "ucx_info -b: uct_MODULES=\"$modules\" has no $m module"
done
for tl in RC UD DC; do
    grep -Eq "^#define HAVE_TL_$tl +1$" <<< "$build_cfg" ||
        fail "ucx_info -b: no HAVE_TL_$tl (the $tl transport is not built)"
done
grep -q '^#define UCX_CONFIGURE_FLAGS .*--with-verbs' <<< "$build_cfg" ||
    fail "ucx_info -b: UCX_CONFIGURE_FLAGS has no --with-verbs"
ok "ucx_info -b: modules $modules, rc/ud/dc built"

# the modules load: UCS's module loader says so ("loaded <file>"), at the
# level UCX_MODULE_LOG_LEVEL caps its messages at (warn: printed without
# raising UCX_LOG_LEVEL)
export UCX_GAUDI_EMU_DEVICES=1
info=$(UCX_MODULE_LOG_LEVEL=warn "$UCX_INFO" -d 2>&1) ||
    fail "ucx_info -d failed: $(echo "$info" | tail -n 20)"
for m in ib rdmacm gaudi; do
    grep -Eq "loaded .*/libuct_$m\.so" <<< "$info" ||
        fail "the $m module was not loaded: $(echo "$info" | grep -i module)"
done
ok "the ib, rdmacm and gaudi modules load"

# no RDMA device here: no ib memory domain, ours as before
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    ! grep -Eq '^# *Transport: (rc|ud|dc)_' <<< "$info" ||
        fail "rc/ud/dc transports listed without an RDMA device"
    ok "no RDMA device: no rc/ud/dc transport listed"
fi
grep -q "^# *Transport: $GAUDI_COPY_TL\$" <<< "$info" ||
    fail "ucx_info -d does not list $GAUDI_COPY_TL beside the ib module"

# and UCP, with every transport allowed, still moves Gaudi memory
timeout 120 "$DEMO" roundtrip 1048593 > /dev/null ||
    fail "UCP round trip with the ib module loaded"
ok "UCP round trip of Gaudi memory with the ib module loaded"
