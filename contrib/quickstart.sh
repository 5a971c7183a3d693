#!/usr/bin/env bash
# Set everything up on a fresh Debian machine (packages, UCX source, build,
# install), then run the main job on an emulated 2-device Gaudi node.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"
exec "$top/contrib/main-job.sh"
