#!/usr/bin/env bash
# Set everything up (like quickstart.sh), then the test programs and UCX's
# gtest, then run every test. The last line is "N passed, M failed"; the exit
# status is non-zero if anything failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# UCX_GAUDI_SANITIZE=1: then contrib/sanitize.sh too; UCX_GAUDI_VALGRIND=1:
# then contrib/valgrind.sh too (docs/sanitizers.md). Both may be set.
# Unset: UCX warns about any UCX_* variable it does not know
sanitize=${UCX_GAUDI_SANITIZE:-0}
valgrind=${UCX_GAUDI_VALGRIND:-0}
unset UCX_GAUDI_SANITIZE UCX_GAUDI_VALGRIND
"$top/contrib/setup.sh"
"$top/contrib/install-deps.sh" test
[ "$valgrind" != 1 ] || "$top/contrib/install-deps.sh" valgrind
cd "$top"
echo "test: building our test programs"
make --no-print-directory -s build-tests
eval "$(make --no-print-directory -s print-test-env)"
[ "$sanitize" = 1 ] || [ "$valgrind" = 1 ] || exec "$top/test/run-tests.sh"

# the normal suites, then the sanitizer and/or valgrind runs, in one count
out=$(mktemp -d /tmp/ucx-gaudi-test-sh.XXXXXX)
parts="normal"
"$top/test/run-tests.sh" | tee "$out/normal" || true
if [ "$sanitize" = 1 ]; then
    t0=$SECONDS
    "$top/contrib/sanitize.sh" 2>&1 | tee "$out/sanitize" || true
    echo "test: sanitizer build and suites took $((SECONDS - t0)) s"
    parts="$parts sanitize"
fi
if [ "$valgrind" = 1 ]; then
    t0=$SECONDS
    "$top/contrib/valgrind.sh" 2>&1 | tee "$out/valgrind" || true
    echo "test: valgrind build and suites took $((SECONDS - t0)) s"
    parts="$parts valgrind"
fi
passed=0 failed=0
for part in $parts; do
    line=$(tail -n 1 "$out/$part")
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    else
        echo "test: the $part part ended without its count: counted as 1 failure"
        failed=$((failed + 1))
    fi
done
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
