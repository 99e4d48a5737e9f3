#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test target.
# Debug build on purpose: it carries the broken engine variants the suite must catch.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test "$@"
