#!/usr/bin/env bash
# Compares the engine of two git revisions on this machine:
#
#   bash scripts/compare-versions.sh REV_A REV_B [--rounds N] [--threshold 5%] [--alpha 0.05] [--out DIR] [--whole] [-- FIEF BENCH ARGS...]
#
# Each revision is checked out in a git worktree and built in release mode with its own
# --scratch-path (.build-rev-<commit>), side by side. By default only Sources/Engine comes from
# the revision and everything else (the bench harness, the peers) from the current HEAD, so
# the same harness measures both engines, and revisions older than `fief bench` compare too;
# --whole builds each revision's whole tree instead (both must have `fief bench`). Two
# revisions with the same Sources/Engine tree share one build.
#
# The benchmarks run interleaved, A B, B A, A B ... (--rounds rounds, --repetitions 1 each,
# same seed), so machine drift lands on both; each side's runs are pooled with
# `fief report combine` (one sample a round), then `fief report compare A B` decides with
# its test: Mann-Whitney U on the rounds, of Fief's numbers and of its ratio to the peers
# measured in the same round, p < --alpha and beyond --threshold. It needs --rounds >= 5
# (its minimum sample count); the default 6 puts each side first equally often. It writes
# comparison.md, comparison.html and comparison.json under --out. Exit status: that of
# `fief report compare` (0 no regression, 2 a regression of Fief, 1 bad input).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
[ $# -ge 2 ] || usage
rev_a="$1"; rev_b="$2"; shift 2
rounds=6; threshold="5%"; alpha=0.05; out="fief-out/compare"; whole=0; bench_args=(--quick)
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --threshold) threshold="$2"; shift 2 ;;
    --alpha) alpha="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --whole) whole=1; shift ;;
    --) shift; bench_args=("$@"); break ;;
    *) echo "compare-versions: unknown option $1" >&2; usage ;;
  esac
done

min_rounds=5
if [ "$rounds" -lt "$min_rounds" ]; then
  echo "compare-versions: --rounds $rounds is below the test's minimum of $min_rounds samples a side; nothing would be gated" >&2
  exit 1
fi

commit_of() { git rev-parse --verify --quiet "$1^{commit}" || { echo "compare-versions: '$1' is not a revision of this repository" >&2; exit 1; }; }
sha_a="$(commit_of "$rev_a")"; sha_b="$(commit_of "$rev_b")"
seed="${FIEF_BENCH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
echo "compare-versions: $rev_a (${sha_a:0:12}) against $rev_b (${sha_b:0:12}), seed $seed, $rounds rounds"

worktrees=()
cleanup() {
  for w in "${worktrees[@]}"; do git worktree remove --force "$w" >/dev/null 2>&1 || true; done
  rmdir "$root/.build-rev-work" 2>/dev/null || true
}
trap cleanup EXIT

# Builds one revision and sets $built to its fief binary. (Not run in $(...): the worktree
# it adds must be recorded in this shell for the clean-up.)
build() {
  local sha="$1" key wt scratch
  if [ "$whole" = 1 ]; then key="${sha:0:12}"; else key="engine-$(git rev-parse "$sha:Sources/Engine" | cut -c1-12)"; fi
  wt="$root/.build-rev-work/$key"
  scratch="$root/.build-rev-$key"
  if [ ! -d "$wt" ]; then
    mkdir -p "$root/.build-rev-work"
    if [ "$whole" = 1 ]; then
      git worktree add --detach --force "$wt" "$sha" >/dev/null
    else
      git worktree add --detach --force "$wt" HEAD >/dev/null
      rm -rf "$wt/Sources/Engine"
      git archive "$sha" Sources/Engine | tar -x -C "$wt"
    fi
    worktrees+=("$wt")
  fi
  echo "compare-versions: building ${sha:0:12} in $wt (scratch $scratch)" >&2
  swift build -c release --package-path "$wt" --scratch-path "$scratch" >&2
  built="$scratch/release/fief"
}

build "$sha_a"; bin_a="$built"
build "$sha_b"; bin_b="$built"
"$bin_a" bench --help >/dev/null 2>&1 || { echo "compare-versions: $rev_a's build has no 'fief bench' (drop --whole)" >&2; exit 1; }

mkdir -p "$out"
rm -rf "$out"/runs; mkdir -p "$out/runs"
for ((i = 1; i <= rounds; i++)); do
  if (( i % 2 == 1 )); then order="a b"; else order="b a"; fi
  for side in $order; do
    if [ "$side" = a ]; then bin="$bin_a"; sha="$sha_a"; label="$rev_a"; else bin="$bin_b"; sha="$sha_b"; label="$rev_b"; fi
    echo "compare-versions: round $i/$rounds, $label"
    FIEF_GIT_COMMIT="$sha" "$bin" bench "${bench_args[@]}" --repetitions 1 --seed "$seed" --label "$label" --out "$out/runs/$side-$i" | grep -E '^fief bench' || true
    [ -f "$out/runs/$side-$i/results.json" ] || { echo "compare-versions: the run of $label wrote no results" >&2; exit 1; }
  done
done

"$bin_b" report combine "$out"/runs/a-*/results.json --out "$out/base.json"
"$bin_b" report combine "$out"/runs/b-*/results.json --out "$out/new.json"
status=0
gate=(--threshold "$threshold")
# (A --whole build of a revision older than the rank test has no --alpha: it gates its own way.)
if "$bin_b" report compare --help 2>&1 | grep -q -- --alpha; then gate+=(--alpha "$alpha" --min-samples "$min_rounds"); fi
"$bin_b" report compare "$out/base.json" "$out/new.json" "${gate[@]}" \
  --markdown "$out/comparison.md" --html "$out/comparison.html" --json "$out/comparison.json" || status=$?
echo "compare-versions: wrote $out/comparison.md, comparison.html, comparison.json (base.json, new.json, runs/)"
exit $status
