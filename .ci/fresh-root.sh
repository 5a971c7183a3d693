#!/usr/bin/env bash
# Run commands of the project as a new user on a fresh Debian bookworm machine
# would: a minimal debootstrap root with only git and ca-certificates added,
# the commit under test cloned into it (what is committed, nothing else),
# then each command run there in order, its output shown as it runs.
#
#   .ci/fresh-root.sh [-k] [COMMAND ...]
#     default commands: contrib/quickstart.sh contrib/test.sh
#     -k  keep the root afterwards (its path is printed)
#
# Needs root and the Debian mirror apt already uses. The pristine base root
# is cached as a tarball in /var/cache/ucx-gaudi-fresh-root (nothing of the
# project is ever in it); the first run makes it (debootstrap, 2-5 min).
# Exits non-zero at the first command that fails. Each command's whole output
# is also kept in /tmp/ucx-gaudi-fresh-root-logs/.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
keep=0
while getopts "k" o; do case $o in k) keep=1 ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- contrib/quickstart.sh contrib/test.sh
[ "$(id -u)" = 0 ] || { echo "fresh-root: needs root (chroot, mounts)" >&2; exit 2; }

say() { echo "fresh-root: $*"; }
cache=/var/cache/ucx-gaudi-fresh-root
logs=/tmp/ucx-gaudi-fresh-root-logs
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null ||
         awk '/^deb / { print $2; exit }' /etc/apt/sources.list)
[ -n "$mirror" ] || { say "cannot find the Debian mirror in apt's sources" >&2; exit 1; }

if ! command -v debootstrap > /dev/null; then
    say "installing debootstrap"
    { apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } > /dev/null
fi
mkdir -p "$cache" "$logs"
if [ ! -f "$cache/bookworm-base.tar" ]; then
    say "making the pristine base root (debootstrap --variant=minbase bookworm, 2-5 min)"
    base=$(mktemp -d /tmp/ucx-gaudi-fresh-base.XXXXXX)
    debootstrap --variant=minbase bookworm "$base" "$mirror" > "$logs/debootstrap.log" 2>&1 ||
        { tail -n 20 "$logs/debootstrap.log"; rm -rf "$base"; exit 1; }
    cp /etc/resolv.conf "$base/etc/" 2>/dev/null || true
    chroot "$base" /bin/bash -c 'apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git ca-certificates &&
        apt-get clean' \
        > "$logs/base-packages.log" 2>&1 ||
        { tail -n 20 "$logs/base-packages.log"; rm -rf "$base"; exit 1; }
    tar -C "$base" -cf "$cache/bookworm-base.tar.tmp" . &&
        mv "$cache/bookworm-base.tar.tmp" "$cache/bookworm-base.tar"
    rm -rf "$base"
fi

root=$(mktemp -d /tmp/ucx-gaudi-fresh-root.XXXXXX)
# processes still running inside the root (a test's orphan): killed, so that
# nothing of a run outlives it or keeps the root busy
kill_inside() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2> /dev/null)" = "$root" ] &&
            kill -9 "${p#/proc/}" 2> /dev/null
    done
    return 0
}
cleanup() {
    local m
    kill_inside
    for m in dev/shm dev/pts dev proc sys; do umount -l "$root/$m" 2> /dev/null || true; done
    # the root's own mount and whatever the tests mounted under it (ip netns)
    umount -l "$root" 2> /dev/null || true
    if [ $keep = 1 ]; then say "kept $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
tar -C "$root" -xf "$cache/bookworm-base.tar"
# the root's "/" as on a machine: mktemp's 0700 (of the root, and of the
# base's "." in the archive) kept every other uid out of the whole tree, so
# the tests that act as uid nobody found nothing they could reach
chmod 0755 "$root"
# "/" inside is a mount point of its own, as on a machine (ip netns exec and
# unshare -m make it a slave), and private: nothing mounted inside shows
# outside
mount --bind "$root" "$root"
mount --make-rprivate "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
git clone -q "$top" "$root/project"
say "project at $(git -C "$root/project" log -1 --format='%h %s' | cut -c1-70)"
# the shared folder sits beside the checkout, as on every machine of the
# project; a clean clone made elsewhere (CI) finds it beside its origin
shared=$top/../shared
origin=$(git -C "$top" config remote.origin.url 2> /dev/null || true)
if [ ! -d "$shared" ] && [ -d "$origin/../shared" ]; then
    shared=$origin/../shared
fi
if [ -d "$shared" ]; then
    # (-L: a shared folder that is a link is copied as the folder)
    cp -aL "$shared" "$root/shared"
else
    say "no shared folder beside $top or its origin: the plugin build will" \
        "miss the vendored UCX 1.22 source"
fi

n=0
for cmd in "$@"; do
    n=$((n + 1)); t0=$SECONDS
    log="$logs/$(basename "$root").$n.log"
    say "running $cmd"
    # the log exists before tail follows it: tail on a file that is not
    # there yet gives up at once, and set -e then ended the whole run
    : > "$log"
    # the output goes to the log and is followed from there: an orphan that
    # keeps the output open cannot hold the run (as a pipe to tee would)
    chroot "$root" /bin/bash -lc "cd /project && $cmd" > "$log" 2>&1 < /dev/null &
    pid=$!
    tail -n +1 -f --pid=$pid "$log"
    rc=0; wait $pid || rc=$?
    kill_inside
    if [ $rc -eq 0 ]; then
        say "$cmd: ok ($((SECONDS - t0)) s)"
    else
        say "$cmd: FAILED after $((SECONDS - t0)) s (whole output: $log)"
        exit 1
    fi
done
