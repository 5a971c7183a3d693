# UCX 1.22.0, unmodified, from the vendored source archive (or a verified
# download: contrib/lib/ucx-build.bash's second half), into a prefix of its
# own: the UCX that ucx-gaudi's out-of-tree plugin build (issue 14) compiles
# against (the configured source tree: UCX's internal headers and config.h)
# and links with (the installed -luct -lucs). contrib/build-plugin.sh calls
# build-ucx.sh 1.22.0 install.
#
# Upstream's own Gaudi module (src/uct/gaudi, component gaudi_gdr, which
# needs SCAL/Synapse) is configured out (--without-gaudi), so no
# libuct_gaudi.so is installed in this prefix.
#
# Two configurations of the same source, each in a tree and prefix of its
# own (UCX122_CONFIG):
#   debug    UCX's defaults (assertions and parameter checks on): the test
#            build, which catches our misuse of UCT/UCP
#   release  what contrib/configure-release-mt in UCX's tree gives and what
#            distributions and pip wheels (NIXL's) ship: no assertions, no
#            parameter checks, no trace logging, multi-threaded
#
# Settings: UCX122_TARBALL, UCX122_SHA256, UCX122_VENDOR_DIR, UCX122_GIT_URL,
# UCX122_COMMIT, UCX122_CONFIG, UCX122_SRC (contrib/lib/ucx-build.bash), and
#   PREFIX     default build/install-1.22, release: build/install-1.22-release
#   BUILD_DIR  scratch directory for the logs (default build): ucx122-*.log,
#              release: ucx122-release-*.log
#   UCX_CONFIGURE_FLAGS  extra flags for UCX's configure
#
# usage: build-ucx.sh 1.22.0 [source|build|install|gtest|all]

# shellcheck shell=bash disable=SC2034,SC2154  # shared with build-ucx.sh
ucx_env=UCX122
ucx_release_sha256=dbdeddc772a2747c06b9a9d9247a9e573dbcdd8554b7b2d7adfeae8b080e003a
ucx_release_commit=8a6b06fb880accbb933a79cda893883872c68d9d
ucx_archive_setup
# test/mpi: used by nobody
ucx_skip="test/mpi"
ucx_build_time="about 6 min on 2 idle cores"
ucx_gtest_time="10+ min on 2 cores"

# Equivalent to 1.13.1's flags (contrib/ucx/1.13.1.bash), less our
# --with-gaudi (1.13.1's grafted module) and the RDMA transports, plus what
# 1.22 added: upstream's gaudi_gdr module (--without-gaudi), Level Zero
# (--without-ze), the transports that need verbs or CUDA (efa, gdrcopy,
# mad), uGNI. release: contrib/configure-release-mt's flags (UCX's gtest is
# not built for it).
# (autogen.sh's "git submodule update" fails outside a git checkout and
# says so; the submodule, external/gpunetio, is for GPU-initiated
# networking over mlx5 + CUDA only, configured out here.)
ucx_flags() {
    local config="--enable-gtest"
    [ "$ucx_config" = debug ] ||
        config="--disable-logging --disable-debug --disable-assertions
                --disable-params-check"
    # shellcheck disable=SC2086  # one word per flag
    echo --prefix="$PREFIX" --without-verbs --without-rdmacm \
         --without-cuda --without-rocm --without-knem --without-xpmem \
         --without-ze --without-gaudi --without-efa --without-gdrcopy \
         --without-mad --without-ugni \
         --without-java --without-go --disable-doxygen-doc --enable-mt \
         $config $UCX_CONFIGURE_FLAGS
}

# Upstream's gaudi module must not be built, whatever configure found
ucx_check_configure() {
    ! grep -q '^#define HAVE_GAUDI 1' "$ucx_src/config.h" ||
        die "UCX's configure enabled its own gaudi module; see the configure log"
}

ucx_check_install() {
    [ ! -e "$PREFIX/lib/ucx/libuct_gaudi.so.0" ] ||
        die "upstream's libuct_gaudi.so.0 was installed into $PREFIX/lib/ucx"
}

ucx_main() { ucx_archive_main "$@"; }
