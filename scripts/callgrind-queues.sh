#!/usr/bin/env bash
# Instructions per push and per pop for every hand-off candidate, counted by callgrind.
#
# Runs `peregrine bench handoff --callgrind-op <candidate>` (one thread: a warm-up round,
# then OPS pushes into an empty queue and OPS pops) under valgrind, collecting only
# inside `measured_push` / `measured_pop`, and divides by OPS. Counts include the loop
# around each call (a few instructions) and are uncontended: they measure the code path,
# not cache-line transfers. Output: a Markdown table on stdout; raw callgrind files and
# logs in $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
OPS=${OPS:-100000}
OUT=${OUT:-bench-out/callgrind}
CANDIDATES=${CANDIDATES:-"rtrb array-queue crossbeam-channel std-mpsc peregrine-spsc shm-spsc shm-mpsc"}
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 1; }
cargo build --release -p peregrine -p peregrine-bench >&2
BIN=target/release/peregrine
mkdir -p "$OUT"

count() { # candidate op -> instructions collected
  local c=$1 op=$2
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$c.$op.out" \
    --collect-atstart=no --toggle-collect="*measured_${op}*" \
    "$BIN" bench handoff --callgrind-op "$c" --callgrind-ops "$OPS" \
    >"$OUT/$c.$op.stdout" 2>"$OUT/$c.$op.log"
  grep -oE 'Collected : [0-9]+' "$OUT/$c.$op.log" | grep -oE '[0-9]+$'
}

echo "callgrind, $OPS ops per round, $(valgrind --version), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| candidate | instructions per push | instructions per pop |"
echo "|---|---|---|"
for c in $CANDIDATES; do
  push=$(count "$c" push)
  pop=$(count "$c" pop)
  awk -v c="$c" -v a="$push" -v b="$pop" -v n="$OPS" \
    'BEGIN { printf "| %s | %.1f | %.1f |\n", c, a / n, b / n }'
done
