# Where the plugin build's UCX 1.22.0 source comes from
# (contrib/build-ucx.sh 1.22.0 source): UCX122_TARBALL when set, else the
# vendored archive when it is there, else tag v1.22.0 fetched by git and
# accepted only as the release's commit. A user's clone has no vendored
# archive: every way of not having the source must end with a message that
# says how to provide it, or how to test without the plugin build.
# Nothing here builds; no network is used (the "download" is from a local
# repository).
. "$(dirname "$0")/common.bash"
script=$(cd "$(dirname "$0")/../.." && pwd)/contrib/build-ucx.sh
tmp=$(mktemp -d /tmp/ucx-gaudi-ucx122-source.XXXXXX)
trap 'rm -rf "$tmp" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT
out=$tmp/out

# source EXPECT(ok|fail) VAR=VALUE...: the script's "source" action in a
# scratch build directory, with only the given variables of ours set
source_action() {
    local expect=$1 rc=0
    shift
    env -u UCX122_TARBALL -u UCX122_SHA256 -u UCX122_VENDOR_DIR \
        -u UCX122_GIT_URL -u UCX122_COMMIT BUILD_DIR="$tmp/build" \
        UCX122_VENDOR_DIR="$tmp/no-vendor" UCX122_GIT_URL="$tmp/no-repo" \
        "$@" bash "$script" 1.22.0 source > "$out" 2>&1 || rc=$?
    if [ "$expect" = ok ] && [ $rc -ne 0 ]; then
        fail "source $*: exit $rc: $(tail -n 5 "$out")"
    elif [ "$expect" = fail ] && [ $rc -eq 0 ]; then
        fail "source $*: accepted: $(tail -n 5 "$out")"
    fi
}

# expect_said TEXT...: the last run's output says each TEXT
expect_said() {
    local text
    for text in "$@"; do
        grep -qF -- "$text" "$out" ||
            fail "the output does not say '$text': $(cat "$out")"
    done
}

# 1. no archive anywhere and no way to download: how to provide one
source_action fail
expect_said "fetching tag v1.22.0 of $tmp/no-repo failed" UCX122_TARBALL \
    "UCX_GAUDI_TEST_BUILDS=in-tree"
ok "no archive and no download: says UCX122_TARBALL and the in-tree-only run"

# 2. UCX122_TARBALL names a missing file
source_action fail UCX122_TARBALL="$tmp/missing.tar.xz"
expect_said "UCX122_TARBALL=$tmp/missing.tar.xz: no such file" \
    "UCX_GAUDI_TEST_BUILDS=in-tree"
ok "a missing UCX122_TARBALL is named"

# 3. an archive whose checksum is not the release's
echo "not UCX" > "$tmp/fake.tar.xz"
source_action fail UCX122_TARBALL="$tmp/fake.tar.xz"
expect_said "sha256" "not using it"
ok "an archive with another checksum is refused"
# ... and accepted with its own checksum given
source_action ok UCX122_TARBALL="$tmp/fake.tar.xz" \
    UCX122_SHA256="$(sha256sum "$tmp/fake.tar.xz" | cut -d' ' -f1)"
[ "$(tail -n 1 "$out")" = "$tmp/fake.tar.xz" ] ||
    fail "source did not print the archive: $(cat "$out")"
ok "UCX122_SHA256 vouches for another archive"

# 4. a download whose tag is another commit than the release's
repo=$tmp/repo
git init -q "$repo"
printf 'define([ucx_ver_minor], 22)\n' > "$repo/configure.ac"
git -C "$repo" add configure.ac
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m "not UCX"
git -C "$repo" tag v1.22.0
source_action fail UCX122_GIT_URL="file://$repo"
expect_said "is commit $(git -C "$repo" rev-parse HEAD), not UCX 1.22.0's" \
    "not using it"
ls "$tmp/build/src"/ucx-1.22.0.git.tar > /dev/null 2>&1 &&
    fail "a refused download left its archive"
ok "a download that is not the release's commit is refused"

# 5. a download of the expected commit is packed, recorded and reused
commit=$(git -C "$repo" rev-parse HEAD)
source_action ok UCX122_GIT_URL="file://$repo" UCX122_COMMIT="$commit"
expect_said "commit $commit verified"
archive=$(tail -n 1 "$out")
# (the listing is read whole: grep -q stops at its match, and tar, still
# writing, would die of SIGPIPE, which pipefail makes a failure)
members=$(tar -tf "$archive")
grep -qx 'ucx-1.22.0/configure.ac' <<< "$members" ||
    fail "the downloaded archive lacks ucx-1.22.0/configure.ac"
source_action ok UCX122_GIT_URL="$tmp/no-repo" UCX122_COMMIT="$commit"
[ "$(tail -n 1 "$out")" = "$archive" ] ||
    fail "the downloaded archive was not reused: $(cat "$out")"
# a damaged download is not used
echo x >> "$archive"
source_action fail UCX122_GIT_URL="$tmp/no-repo" UCX122_COMMIT="$commit"
expect_said "not using it"
ok "a verified download is packed, reused, and checked again"

# 6. the vendored archive, when it is there, needs nothing else
vendored=$(cd "$(dirname "$0")/../.." && pwd)/../shared/vendor
if [ -f "$vendored/ucx-1.22.0.tar.xz" ]; then
    rm -rf "$tmp/build"
    source_action ok UCX122_VENDOR_DIR="$vendored"
    [ "$(tail -n 1 "$out")" = "$vendored/ucx-1.22.0.tar.xz" ] ||
        fail "the vendored archive was not taken: $(cat "$out")"
    ok "the vendored archive is taken and verified"
else
    ok "no vendored archive beside this checkout (case not run)"
fi
