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
# The same checks on encrypted files (format 5): power cuts of every mode, the object graph, and FaultFS faults
# whose bit flips must fail authentication.
"$bin" torture run --scenario power-cut,faults,objects --profile quick --encrypt --out "$out/torture-encrypted" || status=$?
# A short matrix over SQLite and LMDB configurations (about a minute): the safe ones must come
# out clean; the unsafe ones should be caught losing acknowledged commits (reported, not fatal:
# with two cycles a catch depends on timing).
matrix() {
  local target="$1" expect="$2" dir="$out/targets/$3" found verdicts
  if "$bin" torture run --target "$target" --scenario power-cut,crash-points --cycles 2 --seed 7 --out "$dir" >"$dir.log" 2>&1; then
    found="clean"
  else
    found="caught"
  fi
  verdicts=$(grep -o '"verdict" : "[^"]*"' "$dir/results.json" 2>/dev/null | cut -d'"' -f4 | sed 's|\\/|/|g' | sort -u | paste -sd, -)
  printf '  %-42s expected %-7s measured %-7s (%s)\n' "$target" "$expect" "$found" "$verdicts"
  if [ "$expect" = clean ] && [ "$found" != clean ]; then status=1; echo "  see $dir.log and $dir/summary.md"; fi
}
mkdir -p "$out/targets"
echo "torture targets (power-cut and crash-points, 2 cycles each):"
matrix sqlite:journal=wal,synchronous=full      clean  sqlite-wal-full
matrix sqlite:journal=delete,synchronous=extra  clean  sqlite-delete-extra
matrix sqlite:journal=wal,synchronous=normal    caught sqlite-wal-normal
matrix sqlite:journal=wal,synchronous=off       caught sqlite-wal-off
matrix lmdb:default                             clean  lmdb-default
matrix lmdb:nosync                              caught lmdb-nosync
"$bin" report html --targets "$out"/targets/*/results.json --out "$out/targets/matrix.html" || status=$?
# The bench's HTML report also shows the torture pass/fail matrix and the growth curve.
"$bin" bench --quick --suite all --out "$out/bench" --torture "$out/torture/results.json" || status=$?
echo "reports: $out/torture and $out/torture-encrypted (results.json, junit.xml, summary.md), $out/targets (matrix.html), $out/bench (results.json, report.md, report.html)"
exit $status
