#!/usr/bin/env bash
# Does a git repository survive a power cut? Runs git (core.fsync=all) on a FaultFS mount
# under each persistence model, cuts the power after the last commit, and checks the backing
# directory as the next boot would see it: does the repository open, does `git fsck --full`
# pass, how many commits are left. Commit dates are fixed, so a seed repeats exactly.
#
#   bash scripts/git-on-faultfs.sh [--fief PATH] [--seeds N] [--first-seed S] [--commits N]
#                                  [--mode drop-random|drop-all|prefix|torn] [--out DIR]
#
# Prints one plain line per run and writes DIR/git-on-faultfs.md (a table per model).
set -euo pipefail
cd "$(dirname "$0")/.."

fief=""; seeds=5; first=1; commits=15; mode=drop-random; out=fief-out/git-on-faultfs
while [ $# -gt 0 ]; do
  case "$1" in
    --fief) fief=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --first-seed) first=$2; shift 2 ;;
    --commits) commits=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "git-on-faultfs: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
if [ -z "$fief" ]; then
  for f in .build/release/fief .build/debug/fief; do [ -x "$f" ] && { fief=$f; break; }; done
fi
[ -n "$fief" ] && [ -x "$fief" ] || { echo "git-on-faultfs: no fief executable (build first, or pass --fief PATH)" >&2; exit 2; }
command -v git >/dev/null || { echo "git-on-faultfs: git is not installed" >&2; exit 2; }
[ -e /dev/fuse ] || { echo "git-on-faultfs: CANNOT RUN: /dev/fuse is missing" >&2; exit 2; }
mkdir -p "$out"
fief=$(realpath "$fief")

# One run: prints "opens fsck-clean commits-left summary".
one() {
  local model=$1 seed=$2 d
  d=$(mktemp -d "${TMPDIR:-/tmp}/fief-git.XXXXXX")
  mkdir -p "$d/backing" "$d/mnt"
  "$fief" faultfs mount "$d/backing" "$d/mnt" --model "$model" --seed "$seed" --log "$d/daemon.log" >/dev/null
  (
    cd "$d/mnt" && git init -q repo && cd repo
    git config core.fsync all && git config user.name fief && git config user.email fief@example.invalid
    for i in $(seq 1 "$commits"); do
      echo "line $i" >> "f$((i % 3))"
      git add -A
      stamp="2026-01-01T00:$(printf %02d $((i / 60))):$(printf %02d $((i % 60)))Z"
      GIT_AUTHOR_DATE=$stamp GIT_COMMITTER_DATE=$stamp git commit -qm "commit $i"
    done
  )
  local cut
  cut=$("$fief" faultfs ctl "$d/mnt" power-cut --mode "$mode")
  "$fief" faultfs unmount "$d/mnt" >/dev/null
  local opens=no clean=no left=0
  if git -C "$d/backing/repo" log -1 >/dev/null 2>&1; then
    opens=yes
    left=$(git -C "$d/backing/repo" rev-list --count HEAD 2>/dev/null || echo 0)
    git -C "$d/backing/repo" fsck --full >/dev/null 2>&1 && clean=yes
  fi
  echo "$opens $clean $left $cut"
  rm -rf "$d"
}

table="| model | power cuts | repository opens | \`git fsck --full\` clean | commits left (of $commits), per seed |\n|---|---:|---:|---:|---|\n"
for model in posix ext4-ordered ext4-writeback; do
  o=0; c=0; lefts=""
  for seed in $(seq "$first" $((first + seeds - 1))); do
    read -r opens clean left cut < <(one "$model" "$seed")
    echo "git-on-faultfs: model $model, seed $seed, $mode: opens $opens, fsck clean $clean, $left of $commits commits ($cut)"
    [ "$opens" = yes ] && o=$((o + 1))
    [ "$clean" = yes ] && c=$((c + 1))
    lefts="$lefts${lefts:+, }$left"
  done
  table="$table| $model | $seeds | $o | $c | $lefts |\n"
done
{
  echo "# git on FaultFS: one $mode power cut after $commits commits (core.fsync=all)"
  echo
  echo "fief \`$fief\`, seeds $first..$((first + seeds - 1)), $(git --version)"
  echo
  printf "%b" "$table"
} > "$out/git-on-faultfs.md"
printf "%b" "$table"
echo "git-on-faultfs: wrote $out/git-on-faultfs.md"
