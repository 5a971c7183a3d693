#!/usr/bin/env bash
# Shared by quickstart.sh and test.sh: install the Debian packages the build
# needs (when missing), then configure, build and install UCX + gaudi into
# build/install. Idempotent: a second run reuses the build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

pkgs="autoconf automake libtool pkg-config make gcc g++ patch dpkg-dev
      linux-libc-dev libcjson-dev libnuma-dev libgtest-dev file"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq $missing
fi

[ -x configure ] || ./autogen.sh > build-autogen.log 2>&1 ||
    { cat build-autogen.log; exit 1; }
rm -f build-autogen.log
[ -f Makefile ] || ./configure ${UCX_GAUDI_CONFIGURE_FLAGS:-}
make
make install
