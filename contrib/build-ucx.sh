#!/usr/bin/env bash
# Build (and install) one UCX version for ucx-gaudi:
#   1.13.1  with the gaudi module grafted in (the in-tree build; the
#           top-level Makefile calls it): contrib/ucx/1.13.1.bash
#   1.22.0  unmodified, from the vendored source, for the out-of-tree
#           plugin build (contrib/build-plugin.sh): contrib/ucx/1.22.0.bash
# The versions are listed in contrib/lib/ucx-build.bash
# (UCX_GAUDI_UCX_VERSIONS), which holds what all of them share; each
# version's file says where its source comes from, its configure flags and
# checks, its environment and its actions. Idempotent: every step is
# skipped when its result is already there, and UCX's own make rebuilds
# only what changed.
#
#   JOBS  make -j (default nproc)
#
# usage: build-ucx.sh VERSION ACTION
#        1.13.1: build|install|gtest
#        1.22.0: source|build|install|gtest|all (default all)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/contrib/lib/ucx-build.bash"
ucx_version=${1:-}
[[ -n $ucx_version && " $UCX_GAUDI_UCX_VERSIONS " == *" $ucx_version "* ]] ||
    die "usage: build-ucx.sh VERSION ACTION (VERSION: $UCX_GAUDI_UCX_VERSIONS;" \
        "the actions: contrib/ucx/VERSION.bash)"
UCX_CONFIGURE_FLAGS=${UCX_CONFIGURE_FLAGS:-}
jobs=${JOBS:-$(nproc)}
# shellcheck source=contrib/ucx/1.22.0.bash
. "$here/contrib/ucx/$ucx_version.bash"
mkdir -p "$BUILD_DIR"
ucx_main "${2:-}"
