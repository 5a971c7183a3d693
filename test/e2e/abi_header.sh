# The module's habanalabs ABI header is self-contained (distributions ship
# <misc/habanalabs.h>, <drm/habanalabs_accel.h> or neither), and where a
# system header is installed the build cross-checks our layout against it:
# a header that differs fails the build, naming what differs.
. "$(dirname "$0")/common.bash"

src=$(cd "$(dirname "$0")/../.." && pwd)/src
cc=${CC:-cc}
work=$UCX_GAUDI_EMU_STATE_DIR
mkdir -p "$work/none/misc" "$work/none/drm" "$work/bad/misc"

# no system header: any attempt to include one fails
for h in misc/habanalabs.h drm/habanalabs_accel.h; do
    echo '#error "the habanalabs uAPI header must not be needed"' \
        > "$work/none/$h"
done
printf '#include <uct/gaudi/seam/gaudi_abi.h>\nint main(void) { return 0; }\n' \
    > "$work/abi.c"
"$cc" -std=gnu11 -Wall -Werror -fsyntax-only -I"$work/none" -I"$src" \
    "$work/abi.c" > "$work/none.log" 2>&1 ||
    fail "gaudi_abi.h needs a system header: $(cat "$work/none.log")"
ok "gaudi_abi.h compiles (and asserts its layout) without any system uAPI header"

check() {  # check INCLUDE_DIR: compile the cross-check against that header
    "$cc" -std=gnu11 -Wall -Werror -fsyntax-only -DHAVE_MISC_HABANALABS_H \
        -I"$1" -I"$src" -I"$PREFIX/include" \
        "$src/uct/gaudi/drv/gaudi_abi_check.c"
}

sys=/usr/include/misc/habanalabs.h
if [ ! -f "$sys" ]; then
    ok "no $sys on this machine: cross-check not exercised"
    exit 0
fi
check /usr/include > "$work/sys.log" 2>&1 ||
    fail "our ABI differs from $sys: $(cat "$work/sys.log")"
ok "our ABI matches $sys field by field"

# a header that differs in one value or one field offset is caught
sed 's/^#define HL_MAX_JOBS_PER_CS[[:space:]].*/#define HL_MAX_JOBS_PER_CS 511/' \
    "$sys" > "$work/bad/misc/habanalabs.h"
grep -q 'HL_MAX_JOBS_PER_CS 511' "$work/bad/misc/habanalabs.h" ||
    fail "could not make a differing header"
check "$work/bad" > "$work/bad.log" 2>&1 &&
    fail "a differing header (HL_MAX_JOBS_PER_CS) was not caught"
grep -q 'system uAPI header differs: value of HL_MAX_JOBS_PER_CS' "$work/bad.log" ||
    fail "the cross-check failed without naming the difference: $(cat "$work/bad.log")"
awk '/^struct hl_cs_in \{/ { print; print "\t__u32 inserted;"; next } { print }' \
    "$sys" > "$work/bad/misc/habanalabs.h"
check "$work/bad" > "$work/bad.log" 2>&1 &&
    fail "a differing layout (struct hl_cs_in) was not caught"
grep -q 'system uAPI header differs: .*struct hl_cs_in' "$work/bad.log" ||
    fail "the cross-check failed without naming hl_cs_in: $(cat "$work/bad.log")"
ok "a system header that differs (a value, a field offset) fails the cross-check, naming it"
