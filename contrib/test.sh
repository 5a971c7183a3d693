#!/usr/bin/env bash
# Set everything up (like quickstart.sh), then the test programs and UCX's
# gtest, then run every test; then the same for the out-of-tree plugin build
# against UCX 1.22 (contrib/build-plugin.sh: UCX 1.22 from the vendored
# source, the plugin loaded from UCX_PLUGIN_PATH) in the release
# configuration pip wheels and distributions ship, and on request in UCX's
# default one (assertions and parameter checks on). The last line is
# "N passed, M failed" over every build; the exit status is non-zero if
# anything failed.
#
#   UCX_GAUDI_TEST_BUILDS  which builds: "in-tree plugin-release" (default,
#                          and CI), or any of "in-tree" (UCX 1.13.1 with the
#                          module grafted in, assertions on), "plugin" (UCX
#                          1.22 in its default configuration, assertions on,
#                          + the plugin), "plugin-release" (release-
#                          configured UCX 1.22 + the plugin). Each UCX 1.22
#                          build costs about a quarter of CI's 90 min
#                          (bench/results.md): CI runs one, the one users have.
#   UCX_GAUDI_SANITIZE=1   then contrib/sanitize.sh too, with the in-tree
#                          build (docs/sanitizers.md)
#   UCX_GAUDI_VALGRIND=1   then contrib/valgrind.sh too, with the in-tree
#                          build's test programs (docs/sanitizers.md)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# Unset: UCX warns about any UCX_* variable it does not know
sanitize=${UCX_GAUDI_SANITIZE:-0}
valgrind=${UCX_GAUDI_VALGRIND:-0}
builds=${UCX_GAUDI_TEST_BUILDS:-in-tree plugin-release}
unset UCX_GAUDI_SANITIZE UCX_GAUDI_VALGRIND UCX_GAUDI_TEST_BUILDS
for b in $builds; do
    case "$b" in
    in-tree|plugin|plugin-release) ;;
    *) echo "test: UCX_GAUDI_TEST_BUILDS: no build '$b' (in-tree, plugin," \
            "plugin-release)" >&2
       exit 2 ;;
    esac
done
cd "$top"

out=$(mktemp -d /tmp/ucx-gaudi-test-sh.XXXXXX)
parts=()
times=()

# step NAME COMMAND...: run a step, say how long it took
step() {
    local name=$1 t0=$SECONDS rc=0
    shift
    "$@" || rc=$?
    times+=("$name $((SECONDS - t0)) s")
    echo "test: $name took $((SECONDS - t0)) s"
    return $rc
}

# suites PART: run-tests.sh with the environment the build printed; its
# output is kept for the count (a part that cannot start counts as failed)
suites() {
    local part=$1
    parts+=("$part")
    ( eval "$(cat "$out/$part.env")" && "$top/test/run-tests.sh" ) 2>&1 |
        tee "$out/$part" || true
}

# (each command checked: set -e does not hold in a function called from a
# condition)
intree_setup() {
    "$top/contrib/setup.sh" &&
    "$top/contrib/install-deps.sh" test &&
    echo "test: building our test programs and UCX's gtest (in-tree)" &&
    make --no-print-directory -s build-tests &&
    make --no-print-directory -s print-test-env > "$out/in-tree.env"
}

plugin_setup() {
    "$top/contrib/install-deps.sh" build &&
    "$top/contrib/install-deps.sh" test &&
    "$top/contrib/build-plugin.sh" tests &&
    "$top/contrib/build-plugin.sh" env > "$out/plugin.env"
}

plugin_release_setup() {
    "$top/contrib/install-deps.sh" build &&
    "$top/contrib/install-deps.sh" test &&
    UCX122_CONFIG=release "$top/contrib/build-plugin.sh" tests &&
    UCX122_CONFIG=release "$top/contrib/build-plugin.sh" env \
        > "$out/plugin-release.env"
}

sanitizer_suites() {
    "$top/contrib/sanitize.sh" 2>&1 | tee "$out/sanitize"
}

# with the in-tree build's test programs (their environment)
valgrind_suites() {
    ( eval "$(cat "$out/in-tree.env")" && "$top/contrib/valgrind.sh" ) 2>&1 |
        tee "$out/valgrind"
}

# build NAME SETUP: set a build up, then its suites; a setup that fails
# counts as one failure of the build
build() {
    if step "$1 setup and build" "$2"; then
        step "$1 suites" suites "$1"
    else
        echo "test: setting up the $1 build failed" > "$out/$1"
        parts+=("$1")
    fi
}

for b in $builds; do
    if [ "$b" = in-tree ]; then
        echo "test: === the in-tree build: UCX 1.13.1 with the module" \
             "grafted in"
        build in-tree intree_setup
        if [ "$sanitize" = 1 ]; then
            parts+=(sanitize)
            step "sanitizer build and suites" sanitizer_suites || true
        fi
        if [ "$valgrind" = 1 ]; then
            parts+=(valgrind)
            step "valgrind build and suites" valgrind_suites || true
        fi
    elif [ "$b" = plugin ]; then
        echo "test: === the plugin build: UCX 1.22.0, libuct_hlgaudi loaded" \
             "from UCX_PLUGIN_PATH"
        build plugin plugin_setup
    else
        echo "test: === the plugin build against release-configured UCX" \
             "1.22.0 (as pip wheels ship it)"
        build plugin-release plugin_release_setup
    fi
done

passed=0 failed=0
for t in "${times[@]}"; do
    echo "test: time: $t"
done
for part in "${parts[@]}"; do
    line=$(tail -n 1 "$out/$part" 2>/dev/null || true)
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        echo "test: $part: $line"
        passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    else
        echo "test: the $part part ended without its count: counted as 1 failure"
        failed=$((failed + 1))
    fi
done
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
