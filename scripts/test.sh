#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test target.
# Debug build on purpose: it carries the broken engine variants the suite must catch.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
# Formatting first: seconds, where a build takes minutes. `swift format lint --strict` reports
# any difference from what `swift format format` writes with .swift-format; the line check
# catches what the formatter never breaks (string literals, comments). It counts bytes
# (LC_ALL=C) so that mawk and gawk agree: a "→" or "·" counts as more than one column.
check_format() {
    local lint rc long n f
    local -a files
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        # Tracked and new files; one deleted from the work tree but not from git is skipped.
        while IFS= read -r f; do
            if [ -f "$f" ]; then files+=("$f"); fi
        done < <(git ls-files --cached --others --exclude-standard -- '*.swift')
    else
        mapfile -t files < <(find Sources Tests -name '*.swift'; echo Package.swift)
    fi
    set +e
    lint=$(swift format lint --strict --recursive --parallel Sources Tests Package.swift 2>&1)
    rc=$?
    set -e
    long=$(LC_ALL=C awk 'length > 120 {print FILENAME ":" FNR ": " length " bytes"}' "${files[@]}")
    if [ "$rc" -ne 0 ] || [ -n "$lint" ] || [ -n "$long" ]; then
        [ -z "$lint" ] || echo "$lint"
        [ -z "$long" ] || echo "$long"
        n=0
        [ -z "$long" ] || n=$(echo "$long" | wc -l)
        echo "== $n lines over 120 columns / formatting differs from .swift-format; run:" \
            "swift format format --in-place --recursive Sources Tests Package.swift" \
            "(long strings and comments are split by hand) =="
        exit 1
    fi
}
check_format
# A test that cannot run says why through `skipping` (Tests/FiefTestSupport), which
# scripts/test.sh lists after the run; a bare XCTSkip would pass silently under `swift test
# --parallel`. Each file is read whole (-z), so a call split over lines is seen too.
bare=$(grep -rlPz --include='*.swift' 'XCTSkip(Unless|If)?\(\s*+(?!skipping\()' Tests || true)
if [ -n "$bare" ]; then
    echo "$bare"
    echo "== a test in these files skips without saying why; use XCTSkip(skipping(\"why\")) =="
    exit 1
fi
# No warnings: one in this package's sources or tests fails the run (dependencies' are
# theirs). A fresh clone compiles every file, so CI sees them all; an incremental build
# shows only the files it recompiled.
build_without_warnings() {
    local out rc
    out=$(mktemp)
    set +e
    swift build "$@" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -ne 0 ]; then rm -f "$out"; exit "$rc"; fi
    if grep -E "^$PWD/(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$out" | sort -u | grep .; then
        echo "== swift build $* warns (above); the build must be free of warnings =="
        rm -f "$out"
        exit 1
    fi
    rm -f "$out"
}
build_without_warnings -c release
build_without_warnings --build-tests
# The whole log scrolls past; a failure is repeated at its end, where CI shows it.
# In parallel, one process per test and one test per core: most of the suite waits on fsync,
# FUSE and child processes, so two cores ran it in 7.5 minutes where one after another took
# 14. A passing test's output is not shown; a failing one's is, in full.
log=$(mktemp)
skips=$(mktemp)
trap 'rm -f "$log" "$skips"' EXIT
set +e
FIEF_TEST_SKIPS="$skips" swift test --parallel "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
    echo "== swift test exited with $rc; what failed (each line also above) =="
    grep -E "error: |' failed \(|Fatal error|[Ee]xited with (signal|unexpected)|signal code|Test Suite '.*' started" "$log" \
        | grep -B1 -vE "^Test Suite '.*' started" | grep -vE "^--$" | tail -60
fi
# Last and loud: the tests that could not run here (`skipping` wrote them).
if [ -s "$skips" ]; then
    echo "== skipped, could not run on this machine ($(wc -l <"$skips")): =="
    cat "$skips"
fi
exit "$rc"
