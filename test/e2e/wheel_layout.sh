# The plugin in a UCX laid out as a pip wheel bundles it (README, "From
# NIXL / vLLM", step 4): UCX's libraries renamed as auditwheel renames them
# (libucs-<hash>.so.0, their sonames and needed entries to match), its
# modules in "ucx/" beside them, no UCX_PLUGIN_PATH. The plugin, with its
# needed entries pointed at the renamed libraries (patchelf), and the
# emulator are copied into that "ucx/": UCX must load them from there, and
# nothing may load the original libraries.
. "$(dirname "$0")/common.bash"

[ "$GAUDI_BUILD" != in-tree-1.13.1 ] ||
    skip "the in-tree build is UCX itself, not a plugin"
command -v patchelf > /dev/null ||
    skip "patchelf is not installed (contrib/install-deps.sh test)"
plugin_dir=${UCX_PLUGIN_PATH%%:*}
[ -f "$plugin_dir/libuct_hlgaudi.so.0" ] ||
    fail "no plugin in UCX_PLUGIN_PATH=${UCX_PLUGIN_PATH:-}"
unset UCX_PLUGIN_PATH

wheel=$UCX_GAUDI_EMU_STATE_DIR/wheel
libs=$wheel/pkg.libs
mkdir -p "$libs/ucx" "$wheel/bin"

# the renamed libraries: libX.so.0 -> libX-<hash>.so.0 (UCS takes the
# module file suffix from its own file name: .so.0, as the modules have)
declare -A renamed
for lib in ucm ucs uct ucp; do
    renamed[lib$lib.so.0]=lib$lib-$(echo "$lib" | sha1sum | cut -c1-8).so.0
done
# rename_needed FILE: its needed entries and runpath as in the wheel
rename_needed() {
    local file=$1 old
    for old in "${!renamed[@]}"; do
        if patchelf --print-needed "$file" | grep -qx "$old"; then
            patchelf --replace-needed "$old" "${renamed[$old]}" "$file"
        fi
    done
}
for old in "${!renamed[@]}"; do
    cp "$PREFIX/lib/$old" "$libs/${renamed[$old]}"
    patchelf --set-soname "${renamed[$old]}" "$libs/${renamed[$old]}"
    rename_needed "$libs/${renamed[$old]}"
    patchelf --set-rpath '$ORIGIN' "$libs/${renamed[$old]}"
done
for mod in "$PREFIX"/lib/ucx/libuct_*.so.0; do
    cp "$mod" "$libs/ucx/"
    rename_needed "$libs/ucx/$(basename "$mod")"
    patchelf --set-rpath '$ORIGIN/..' "$libs/ucx/$(basename "$mod")"
done
cp "$PREFIX/bin/ucx_info" "$wheel/bin/"
rename_needed "$wheel/bin/ucx_info"
patchelf --set-rpath "$libs" "$wheel/bin/ucx_info"

# step 4 of the README: the plugin needs the wheel's names, and sits in ucx/
cp "$plugin_dir/libuct_hlgaudi.so.0" "$plugin_dir/libgaudi_emu.so.0" \
   "$libs/ucx/"
rename_needed "$libs/ucx/libuct_hlgaudi.so.0"

# ldd: the copied ucx_info and plugin reach only the wheel's libraries
for file in "$wheel/bin/ucx_info" "$libs/ucx/libuct_hlgaudi.so.0"; do
    deps=$(LD_LIBRARY_PATH=$libs ldd "$file")
    ! grep -qE "$PREFIX/lib/libu(cs|ct|cm|cp)\.so" <<< "$deps" ||
        fail "$file still reaches $PREFIX: $deps"
done

export UCX_GAUDI_EMU_DEVICES=1
# which files the dynamic loader opens (not UCX_MODULE_LOG_LEVEL: UCX 1.22
# logs under its topology lock and deadlocks at that level here)
info=$(LD_DEBUG=files LD_DEBUG_OUTPUT=$wheel/ld "$wheel/bin/ucx_info" -d 2>&1) ||
    fail "ucx_info -d of the wheel layout: $(echo "$info" | tail -n 20)"
loaded=$(cat "$wheel"/ld.* | sed -n 's/.*file=\([^ ]*\) .*generating link map.*/\1/p')
grep -qx "$libs/ucx/libuct_hlgaudi.so.0" <<< "$loaded" ||
    fail "UCX did not load the plugin from $libs/ucx: $loaded"
! echo "$loaded" | grep -E "^$PREFIX/lib/" ||
    fail "the original UCX libraries were loaded too"
for l in 'Memory domain: gaudi_cpy' "Transport: $GAUDI_COPY_TL" \
         'Memory domain: gaudi_ipc' 'Transport: gaudi_ipc'; do
    grep -q "^# *$l\$" <<< "$info" ||
        fail "ucx_info -d of the wheel layout does not list $l"
done
ok "the plugin loads into a wheel-style UCX (renamed libraries, ucx/)"
