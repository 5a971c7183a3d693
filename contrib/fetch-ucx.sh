#!/usr/bin/env bash
# Fetch Debian's ucx source package (1.13.1) into DEST with apt-get source,
# through a private apt configuration whose deb-src entries are derived from
# the machine's own configured Debian sources.  No host name is hard-coded.
#
# usage: contrib/fetch-ucx.sh DEST_DIR
# Result: DEST_DIR/ucx-1.13.1 (unpacked by dpkg-source, which verifies every
# file against the checksums in the .dsc; apt verifies the .dsc itself against
# the signed Release file).
set -euo pipefail

dest=${1:?usage: fetch-ucx.sh DEST_DIR}
version=${UCX_DEB_VERSION:-1.13.1-1}
upstream=${version%-*}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
tree="$dest/ucx-$upstream"

if [ -f "$tree/.ucx-gaudi-fetched" ]; then
    echo "fetch-ucx: reusing $tree"
    exit 0
fi

apt_dir="$dest/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
src_list="$apt_dir/sources.list"
: > "$src_list"

# Derive deb-src lines from deb822 (.sources) and one-line (.list) files.
emit() {  # uri suite components signed_by
    local opts=""
    [ -n "$4" ] && opts="[signed-by=$4] "
    echo "deb-src ${opts}$1 $2 $3" >> "$src_list"
}
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'BEGIN{RS=""; FS="\n"}
         {types=""; uris=""; suites=""; comps=""; sb="";
          for (i = 1; i <= NF; i++) {
              line = $i; if (line ~ /^#/) continue
              k = line; sub(/:.*/, "", k); v = line; sub(/^[^:]*:[ \t]*/, "", v)
              if (k == "Types") types = v; else if (k == "URIs") uris = v;
              else if (k == "Suites") suites = v; else if (k == "Components") comps = v;
              else if (k == "Signed-By") sb = v
          }
          if (types !~ /deb/ || uris == "") next
          nu = split(uris, U, " "); ns = split(suites, S, " ")
          for (a = 1; a <= nu; a++) for (b = 1; b <= ns; b++)
              print U[a] "\t" S[b] "\t" comps "\t" sb}' "$f"
done | while IFS=$'\t' read -r uri suite comps sb; do
    case "$uri" in *debian*) emit "$uri" "$suite" "$comps" "$sb" ;; esac
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*deb[[:space:]]\+//p' "$f" | while read -r line; do
        case "$line" in *debian*) echo "deb-src $line" >> "$src_list" ;; esac
    done
done
if [ ! -s "$src_list" ]; then
    echo "fetch-ucx: no Debian entry found in the system's apt sources;" \
         "pass --with-ucx-src=DIR or a tarball instead" >&2
    exit 1
fi

apt_opts=(-o "Dir::Etc::SourceList=$src_list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o "APT::Sandbox::User=root")
echo "fetch-ucx: apt sources derived from the system:"
sed 's/^/    /' "$src_list"
apt-get "${apt_opts[@]}" -qq update
work="$dest/dl"
rm -rf "$work" "$tree"
mkdir -p "$work"
(cd "$work" && apt-get "${apt_opts[@]}" --download-only -qq source "ucx=$version")
dsc=$(ls "$work"/ucx_*.dsc | head -n 1)
# dpkg-source checks size and checksums of every file listed in the .dsc.
dpkg-source --no-copy -x "$dsc" "$tree"
touch "$tree/.ucx-gaudi-fetched"
echo "fetch-ucx: unpacked $tree"
