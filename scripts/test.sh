#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test target.
# Debug build on purpose: it carries the broken engine variants the suite must catch.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
# The whole log scrolls past; a failure is repeated at its end, where CI shows it.
log=$(mktemp)
set +e
swift test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
    echo "== swift test exited with $rc; what failed (each line also above) =="
    grep -E "error: |' failed \(|Fatal error|[Ee]xited with (signal|unexpected)|signal code|Test Suite '.*' started" "$log" \
        | grep -B1 -vE "^Test Suite '.*' started" | grep -vE "^--$" | tail -60
fi
rm -f "$log"
exit "$rc"
