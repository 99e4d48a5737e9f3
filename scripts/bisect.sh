#!/usr/bin/env bash
# Finds the first commit between GOOD and BAD where a test starts failing:
#
#   bash scripts/bisect.sh GOOD BAD -- replay FILE          a replay file (fief torture shrink) still fails
#   bash scripts/bisect.sh GOOD BAD -- torture RUN_ARGS...   a seeded torture run fails (fief torture run RUN_ARGS)
#   bash scripts/bisect.sh GOOD BAD -- bench BENCH_ARGS...   the engine got slower than GOOD (compare-versions.sh)
#
# `git bisect run` drives it in a worktree of its own (your checkout is not touched), with one
# release build per step (--scratch-path .build-bisect, so steps build incrementally). A step
# that does not build is skipped (exit 125). The tests:
#   replay   `fief torture replay FILE --broken none` (release builds have no broken variants: the
#            case runs on each revision's own engine): 0 passes (good), 1 fails (bad). The file is
#            copied first, so revisions without it still run it; they need `fief torture replay`.
#   torture  `fief torture run RUN_ARGS`: give --seed (and --scenario, --cycles) so every step
#            runs the same cycles; 0 good, 1 bad, anything else skipped.
#   bench    `scripts/compare-versions.sh GOOD STEP -- BENCH_ARGS` (this checkout's script):
#            a regression of Fief against GOOD beyond its threshold is bad.
# Prints the first bad commit; exit status 0 when one was found, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
[ $# -ge 4 ] || usage
good="$1"; bad="$2"; shift 2
[ "$1" = "--" ] || usage
shift
mode="$1"; shift
case "$mode" in replay|torture|bench) ;; *) echo "bisect: unknown test '$mode' (replay, torture or bench)" >&2; usage ;; esac

commit_of() { git rev-parse --verify --quiet "$1^{commit}" || { echo "bisect: '$1' is not a revision of this repository" >&2; exit 1; }; }
good_sha="$(commit_of "$good")"; bad_sha="$(commit_of "$bad")"
git merge-base --is-ancestor "$good_sha" "$bad_sha" || { echo "bisect: $good is not an ancestor of $bad" >&2; exit 1; }

work="$(mktemp -d /tmp/fief-bisect.XXXXXX)"
tree="$work/tree"
cleanup() {
  git -C "$tree" bisect reset >/dev/null 2>&1 || true
  git worktree remove --force "$tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

args=("$@")
if [ "$mode" = replay ]; then
  [ ${#args[@]} -eq 1 ] && [ -f "${args[0]}" ] || { echo "bisect: replay needs one replay file" >&2; exit 1; }
  cp "${args[0]}" "$work/replay.json"
fi

# The test of one step, run by `git bisect run` inside the worktree.
cat > "$work/step.sh" <<EOF
#!/usr/bin/env bash
set -uo pipefail
sha="\$(git rev-parse --short=12 HEAD)"
# git bisect run exports GIT_DIR and friends; SwiftPM's own git calls must not see them.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX
if [ "$mode" = bench ]; then
  # compare-versions.sh builds both revisions itself (each engine tree once).
  bash "$root/scripts/compare-versions.sh" "$good_sha" "\$(git rev-parse HEAD)" --out "$work/compare" -- "\$@"
  case \$? in
    0) echo "bisect: \$sha good (no regression against $good)" >&2; exit 0 ;;
    2) echo "bisect: \$sha bad (a regression against $good)" >&2; exit 1 ;;
    *) echo "bisect: \$sha could not be compared; skipped" >&2; exit 125 ;;
  esac
fi
echo "bisect: building \$sha" >&2
if ! swift build -c release --product fief --scratch-path "$root/.build-bisect" >"$work/build.log" 2>&1; then
  tail -n 5 "$work/build.log" >&2
  echo "bisect: \$sha does not build; skipped" >&2
  exit 125
fi
fief="$root/.build-bisect/release/fief"
case "$mode" in
  replay) "\$fief" torture replay "$work/replay.json" --broken none --out "$work/run"; status=\$? ;;
  torture) "\$fief" torture run "\$@" --out "$work/run" >"$work/run.log" 2>&1; status=\$?; tail -n 3 "$work/run.log" ;;
esac
case \$status in
  0) echo "bisect: \$sha good" >&2; exit 0 ;;
  1) echo "bisect: \$sha bad" >&2; exit 1 ;;
  *) echo "bisect: \$sha could not be tested (exit \$status); skipped" >&2; exit 125 ;;
esac
EOF
chmod +x "$work/step.sh"

echo "bisect: $good (${good_sha:0:12}) good, $bad (${bad_sha:0:12}) bad, test: $mode ${args[*]}"
git worktree add --detach "$tree" "$bad_sha" >/dev/null
cd "$tree"
git bisect start "$bad_sha" "$good_sha" >/dev/null
set +e
git bisect run "$work/step.sh" "${args[@]}" | tee "$work/bisect.log"
set -e
first="$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$work/bisect.log" | head -n 1)"
if [ -z "$first" ]; then
  echo "bisect: no first bad commit found (see the log above)"
  exit 1
fi
echo
echo "bisect: the first bad commit is $(git log -1 --format='%h %s' "$first")"
