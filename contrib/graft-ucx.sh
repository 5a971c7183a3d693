#!/usr/bin/env bash
# Graft ucx-gaudi into a UCX 1.13.1 source tree: link our in-tree directories
# into it and apply the core patch (once). Idempotent.
#
# usage: contrib/graft-ucx.sh UCX_SRC_DIR
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ucx=${1:?usage: graft-ucx.sh UCX_SRC_DIR}
ucx=$(cd "$ucx" && pwd)
patch_file="$here/contrib/ucx-1.13.1-gaudi.patch"
stamp="$ucx/.ucx-gaudi-patched"

if ! grep -q 'AC_INIT(\[ucx\], \[1\.13\.' "$ucx/configure.ac" 2>/dev/null &&
   ! grep -q '^define(\[ucx_ver_minor\], 13)' "$ucx/configure.ac" 2>/dev/null; then
    echo "graft-ucx: $ucx does not look like a UCX 1.13 source tree" >&2
    exit 1
fi

for dir in src/uct/gaudi; do
    target="$ucx/$dir"
    if [ -L "$target" ] || [ ! -e "$target" ]; then
        ln -sfn "$here/$dir" "$target"
    else
        echo "graft-ucx: $target exists and is not our link" >&2
        exit 1
    fi
done

sum=$(sha256sum "$patch_file" | cut -d' ' -f1)
if [ -f "$stamp" ]; then
    if [ "$(cat "$stamp")" != "$sum" ]; then
        echo "graft-ucx: $ucx was patched with another version of the core" \
             "patch; start from a fresh UCX tree (rm -rf it, it is re-fetched)" >&2
        exit 1
    fi
else
    patch -p1 -N -s -d "$ucx" < "$patch_file"
    echo "$sum" > "$stamp"
    echo "graft-ucx: core patch applied to $ucx"
fi
