#!/usr/bin/env bash
# Issue 28's proof, run by hand: `peregrine up` for SECS seconds (default 600) while
# `stress-ng --cpu 2` holds both cores, with a strategy and then the exchange killed
# late in the run (RESTART=0 leaves that out). Passes when up exits 0 with its normal
# summary and kill-switch demonstration, the engine declared no strategy dead for
# silence, and the exchange closed no session for silence. Prints the 7-segment table
# of the run; `NOLOAD=1` runs the same without the hog, for the table beside it.
#
#   scripts/up-loaded.sh [SECS=600]
#   NOLOAD=1 scripts/up-loaded.sh 600
#
# Needs stress-ng (apt-get install stress-ng) and target/release/peregrine (cargo build
# --release -p peregrine). Leaves its run directory in /tmp/peregrine-up-loaded-*.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-600}
BIN=${BIN:-$PWD/target/release/peregrine}
[ -x "$BIN" ] || { echo "build first: cargo build --release -p peregrine" >&2; exit 2; }
DIR=$(mktemp -d /tmp/peregrine-up-loaded-XXXXXX)
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  load before $(cut -d' ' -f1-3 /proc/loadavg)  commit $(git rev-parse --short HEAD)  $( [ "${NOLOAD:-0}" = 1 ] && echo 'no hog' || echo 'stress-ng --cpu 2')"
HOG=""
if [ "${NOLOAD:-0}" != 1 ]; then
    command -v stress-ng >/dev/null || { echo "stress-ng missing: apt-get install stress-ng" >&2; exit 2; }
    stress-ng --cpu 2 --timeout $((SECS + 120))s >/dev/null 2>&1 &
    HOG=$!
fi
cleanup() { [ -n "$HOG" ] && kill "$HOG" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
"$BIN" up --duration "$SECS" --plain --dir "$DIR/run" >"$DIR/up.out" 2>"$DIR/up.err" &
UP=$!
if [ "${RESTART:-1}" = 1 ]; then
    # Late in the run: a strategy killed, then the exchange (the supervisor restarts
    # both; the engine's adapter logs in again and replays what it missed).
    # Found among up's own children (each runs in its own process group but stays
    # up's child), so a neighbour's `up` on the same machine is never hit.
    sleep $((SECS * 8 / 10))
    MK=$(pgrep -P "$UP" -f " strategy maker " | head -1 || true)
    echo "killing strategy maker (pid ${MK:-none}) at $(date -u +%T)"
    [ -n "$MK" ] && kill -KILL "$MK" || true
    sleep 5
    EX=$(pgrep -P "$UP" -f " exchange --config " | head -1 || true)
    echo "killing the exchange (pid ${EX:-none}) at $(date -u +%T)"
    [ -n "$EX" ] && kill -KILL "$EX" || true
fi
rc=0
wait "$UP" || rc=$?
cleanup
trap - EXIT
echo "up exit $rc; load after $(cut -d' ' -f1-3 /proc/loadavg); run directory $DIR"
dead=$(grep -c "is dead (heartbeat timeout" "$DIR/run/engine.log" 2>/dev/null || true)
silent=$(grep -c "no input for three heartbeat" "$DIR/run/exchange.log" 2>/dev/null || true)
stalls=$(grep -c "did not run for" "$DIR/run/engine.log" 2>/dev/null || true)
echo "strategies declared dead for silence: $dead; exchange sessions closed for silence: $silent; engine stalls excused: $stalls"
sed -n '/^== summary/,/^md exch send -> on_book/p' "$DIR/up.out"
sed -n '/^== restarts/,/^$/p' "$DIR/up.out"
sed -n '/^== kill switch demonstration/,/^result/p' "$DIR/up.out"
if [ "$rc" != 0 ] || [ "$dead" != 0 ] || [ "$silent" != 0 ] || ! grep -q "^== summary" "$DIR/up.out"; then
    echo "FAILED"; tail -20 "$DIR/up.err"; exit 1
fi
echo "PASSED"
