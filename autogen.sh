#!/bin/sh
# Generate the top-level configure script.
set -e
cd "$(dirname "$0")"
autoreconf -fi
