#!/usr/bin/env bash
# The objects suite at 20K, 200K and 1M persons (Fief against SQLite, one seed for all three),
# then one scaling table: each target at each size, how each workload's cost grows with N, and
# each system's peak memory and file size (`fief report scaling`). About 6 minutes on 2 cores.
# Writes ${FIEF_OUT:-fief-out}/scaling/<persons>/ and scaling/scaling.md.
#   FIEF_SEED=11 FIEF_SIZES="20000 200000" bash scripts/objects-scaling.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release
bin="$(swift build -c release --show-bin-path)/fief"
out="${FIEF_OUT:-fief-out}/scaling"
seed="${FIEF_SEED:-$RANDOM}"
sizes="${FIEF_SIZES:-20000 200000 1000000}"
echo "objects scaling: seed $seed, persons $sizes"
results=()
for n in $sizes; do
  args=(--suite objects --systems fief,sqlite --no-faultfs --seed "$seed" --objects "$n" --out "$out/$n")
  if [ "$n" -ge 1000000 ]; then
    # One repetition, and not the workloads that do not change with N (the second process's
    # latency, encryption's cost against plain Fief): about 3 minutes instead of 15.
    args+=(--repetitions 1 --workloads "obj.insert,obj.count,obj.query,obj.pk-get,obj.enumerate,obj.sort-limit,\
obj.links,obj.update,obj.delete-cascade,obj.file-size,obj.small-txns,obj.notify")
  fi
  "$bin" bench run "${args[@]}"
  results+=("$out/$n/results.json")
done
"$bin" report scaling "${results[@]}" --out "$out/scaling.md"
echo "scaling table: $out/scaling.md"
