#!/usr/bin/env bash
# Shared by quickstart.sh and test.sh: install the Debian packages the build
# needs (when missing), then configure, build and install UCX + gaudi into
# build/install (UCX's gtest and our test programs are test.sh's). Idempotent:
# a second run reuses the build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

"$top/contrib/install-deps.sh" build

if [ ! -x configure ]; then
    echo "setup: bootstrapping ucx-gaudi (autogen.sh)"
    ./autogen.sh > build-autogen.log 2>&1 || { cat build-autogen.log; exit 1; }
    rm -f build-autogen.log
fi
if [ ! -f Makefile ]; then
    echo "setup: configuring ucx-gaudi (log: config.log)"
    ./configure ${UCX_GAUDI_CONFIGURE_FLAGS:-} > /dev/null ||
        { echo "setup: configure failed; see config.log" >&2; exit 1; }
fi
make --no-print-directory -s install
