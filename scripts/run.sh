#!/usr/bin/env bash
# Fief's main job: installs what is missing, builds the release binary, runs the default
# torture suite and a short benchmark, and writes every report under ${FIEF_OUT:-fief-out}/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release
bin="$(swift build -c release --show-bin-path)/fief"
out="${FIEF_OUT:-fief-out}"
mkdir -p "$out"
status=0
"$bin" torture run --scenario all --profile quick --out "$out/torture" || status=$?
# The bench's HTML report also shows the torture pass/fail matrix and the growth curve.
"$bin" bench --quick --suite all --out "$out/bench" --torture "$out/torture/results.json" || status=$?
echo "reports: $out/torture (results.json, junit.xml, summary.md), $out/bench (results.json, report.md, report.html)"
exit $status
