#!/usr/bin/env bash
# Set everything up (like quickstart.sh), then the test programs and UCX's
# gtest, then run every test. The last line is "N passed, M failed"; the exit
# status is non-zero if anything failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"
"$top/contrib/install-deps.sh" test
cd "$top"
echo "test: building our test programs"
make --no-print-directory -s build-tests
eval "$(make --no-print-directory -s print-test-env)"
exec "$top/test/run-tests.sh"
