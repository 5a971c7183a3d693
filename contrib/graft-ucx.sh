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

if ! grep -q 'AC_INIT(\[ucx\], \[1\.13\.' "$ucx/configure.ac" 2>/dev/null &&
   ! grep -q '^define(\[ucx_ver_minor\], 13)' "$ucx/configure.ac" 2>/dev/null; then
    echo "graft-ucx: $ucx does not look like a UCX 1.13 source tree" >&2
    exit 1
fi

# The graft is a tree of real directories holding symbolic links to our
# files: UCX's build writes its Makefiles and objects into the UCX tree, not
# ours, relative paths like $(top_builddir) resolve inside the UCX tree, and
# an edit of one of our files is seen by UCX's make through the link.
for dir in src/uct/gaudi src/tools/perf/gaudi; do
    target="$ucx/$dir"
    if [ -L "$target" ]; then
        rm -f "$target"          # a whole-directory link of an older graft
    fi
    mkdir -p "$target"
    (cd "$here/$dir" &&
     find . -type f \( -name '*.[ch]' -o -name '*.am' -o -name '*.m4' \) \
          -print) |
    while read -r f; do
        f=${f#./}
        mkdir -p "$target/$(dirname "$f")"
        ln -sfn "$here/$dir/$f" "$target/$f"
    done
    # links to files that no longer exist here
    find "$target" -xtype l -delete
done

# The applied patch is kept in the tree, so that a newer version of it can
# replace it: the old one is reversed first (UCX's make then rebuilds what
# the difference touches).
applied="$ucx/.ucx-gaudi-patch"
if [ -f "$applied" ] && cmp -s "$applied" "$patch_file"; then
    exit 0
fi
patches=("$patch_file")
[ -f "$applied" ] && patches+=("$applied")
files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "${patches[@]}" | sort -u)
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
if [ -f "$applied" ]; then
    # files the new patch leaves as they were keep their time stamps, so
    # that UCX's make rebuilds only what the difference touches
    for f in $files; do
        [ -f "$ucx/$f" ] && mkdir -p "$keep/$(dirname "$f")" &&
            cp -p "$ucx/$f" "$keep/$f"
    done
    patch -p1 -R -s -d "$ucx" < "$applied" ||
        { echo "graft-ucx: cannot reverse the previous core patch in $ucx;" \
               "start from a fresh UCX tree (rm -rf it, it is re-fetched)" >&2
          exit 1; }
    rm -f "$applied"
    echo "graft-ucx: previous core patch reversed in $ucx"
elif [ -f "$ucx/.ucx-gaudi-patched" ]; then
    echo "graft-ucx: $ucx was patched by an older graft script; start from" \
         "a fresh UCX tree (rm -rf it, it is re-fetched)" >&2
    exit 1
fi
patch -p1 -N -s -d "$ucx" < "$patch_file"
for f in $files; do
    if [ -f "$keep/$f" ] && cmp -s "$keep/$f" "$ucx/$f"; then
        touch -r "$keep/$f" "$ucx/$f"
    fi
done
cp "$patch_file" "$applied"
echo "graft-ucx: core patch applied to $ucx"
