#!/usr/bin/env bash
# Install the Debian packages one of the two commands needs, when missing.
#
#   contrib/install-deps.sh build   what the build of UCX + gaudi and the main
#                                   job need (contrib/setup.sh)
#   contrib/install-deps.sh test    what the test programs and the test
#                                   command's suites need besides (test.sh)
#   contrib/install-deps.sh valgrind  what the valgrind run needs besides
#                                   (valgrind.sh; UCX_GAUDI_VALGRIND=1 test.sh)
#
# Nothing else is installed: a header the build can reach comes from one of
# these packages, or from UCX itself.
set -euo pipefail

case "${1:-}" in
build)
    # autotools for UCX's and our bootstrap, dpkg-dev + patch to unpack and
    # graft Debian's UCX source, file for libtool, the module's libraries;
    # rdma-core's verbs and rdmacm for UCX's ib and rdmacm modules, as
    # Debian's libucx0 has them (their runtime libraries come along)
    pkgs="autoconf automake libtool pkg-config make gcc g++ patch dpkg-dev
          file linux-libc-dev libcjson-dev libnuma-dev libibverbs-dev
          librdmacm-dev" ;;
test)
    # gtest for our unit/multi-process tests and UCX's gtest; Open MPI for
    # the MPI e2e test (pml ucx over our UCX); iproute2 for the tests in
    # network namespaces; patchelf to lay a UCX out as a pip wheel does
    # (test/e2e/wheel_layout.sh)
    pkgs="libgtest-dev openmpi-bin libopenmpi-dev iproute2 patchelf" ;;
valgrind)
    # memcheck, and its headers (valgrind/memcheck.h) for UCX's
    # --with-valgrind build of the valgrind run (docs/sanitizers.md)
    pkgs="valgrind" ;;
*)
    echo "usage: install-deps.sh build|test|valgrind" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
        missing="$missing $p"
done
[ -n "$missing" ] || exit 0

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
log=${TMPDIR:-/tmp}/ucx-gaudi-apt-$1.log
t0=$SECONDS
echo "install-deps: installing$missing"
echo "install-deps: (about 1-2 min on a fresh machine; log: $log)"
if ! { $sudo_cmd apt-get update -qq &&
       DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq \
           --no-install-recommends $missing; } > "$log" 2>&1; then
    echo "install-deps: apt-get failed; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
echo "install-deps: done in $((SECONDS - t0)) s"
