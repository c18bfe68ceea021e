#!/usr/bin/env bash
# Idle CPU of the order engine (docs/engine.md, "Idle CPU"): `peregrine exchange`
# (wait = park, UDP feed on) and `peregrine engine` with an exchange venue "px"
# (feed subscribed) and one strategy attached that sends nothing but heartbeats
# (`peregrine strategy reverter`, no book subscribed), nothing trading. After SETTLE s, the CPU
# time each engine thread used over SECS s, from /proc/<pid>/task/*/stat
# (utime + stime), as % of one core; the strategy's and the exchange's beside it.
#
#   scripts/engine-idle.sh [SECS=30]
#   ORCH='wait = "park"' scripts/engine-idle.sh 30     # the [orchestrator] lines
#   THREADS='wait = "park"' ...                         # md and px threads
#   BIN=/tmp/peregrine-before scripts/engine-idle.sh   # another build
#
# Needs target/release/peregrine (cargo build --release -p peregrine).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/procs.sh
source scripts/lib/procs.sh
SECS=${1:-30}
SETTLE=${SETTLE:-3}
BIN=${BIN:-$PWD/target/release/peregrine}
ORCH=${ORCH:-}
THREADS=${THREADS:-wait = \"park\"}
[ -x "$BIN" ] || { echo "build first: cargo build --release -p peregrine" >&2; exit 2; }
TMP=$(mktemp -d /tmp/peregrine-idle.XXXXXX)
SHM=/dev/shm/peregrine-idle-$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP" "$SHM"
}
trap cleanup EXIT
ORDER=$(free_port); MD=$(free_port)
"$BIN" keygen --accounts 1 --keys-out "$TMP/keys.toml" --accounts-out "$TMP/accounts.toml" >/dev/null
cat >"$TMP/exchange.toml" <<EOF
listen = "127.0.0.1:$ORDER"
wait = "park"
[market_data]
enabled = true
target = "127.0.0.1:$MD"
heartbeat_ms = 100
[metrics]
enabled = false
EOF
cat "$TMP/accounts.toml" >>"$TMP/exchange.toml"
cat >"$TMP/engine.toml" <<EOF
name = "idle"
shm_dir = "$SHM"
instruments = [1]
[orchestrator]
$ORCH
[market_data]
thread = { $THREADS }
[[strategies]]
name = "idler"
[[venues]]
name = "px"
thread = { $THREADS }
exchange = { addr = "127.0.0.1:$ORDER", account = 1, key_file = "$TMP/keys.toml", feed = { addr = "127.0.0.1:$MD" } }
EOF
"$BIN" exchange --config "$TMP/exchange.toml" >"$TMP/exchange.log" 2>&1 &
EXCH=$!; pids+=("$EXCH")
wait_for_line "$TMP/exchange.log" "listening"
"$BIN" engine --config "$TMP/engine.toml" >"$TMP/engine.log" 2>&1 &
ENGINE=$!; pids+=("$ENGINE")
for _ in $(seq 1 200); do [ -S "$SHM/control.sock" ] && break; sleep 0.05; done
"$BIN" strategy reverter --dir "$SHM" --name idler --wait park --duration $((SETTLE + SECS + 5)) \
    >"$TMP/strategy.log" 2>&1 &
STRAT=$!; pids+=("$STRAT")
sleep "$SETTLE"
HZ=$(getconf CLK_TCK)
ticks() { # /proc/<pid>/task/<tid>/stat -> "comm utime+stime"
    for f in /proc/"$1"/task/*/stat; do
        awk -v f="$f" '{ s=$0; sub(/^[0-9]+ \(/, "", s); c=s; sub(/\).*$/, "", c); sub(/^.*\) /, "", s);
             split(s, a, " "); print f, c, a[12] + a[13] }' "$f" 2>/dev/null || true
    done
}
declare -A before
while read -r f c t; do before[$f]=$t; done < <(ticks "$ENGINE"; ticks "$STRAT"; ticks "$EXCH")
load0=$(cut -d' ' -f1 /proc/loadavg)
sleep "$SECS"
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  load $load0 -> $(cut -d' ' -f1 /proc/loadavg)  $(basename "$BIN")  [orchestrator] ${ORCH:-(default)}  threads { $THREADS }"
printf '%-10s %-18s %8s\n' process thread '% core'
total=0
while read -r f c t; do
    pid=${f#/proc/}; pid=${pid%%/*}
    case $pid in "$ENGINE") p=engine ;; "$STRAT") p=strategy ;; *) p=exchange ;; esac
    d=$(( t - ${before[$f]:-$t} ))
    pct=$(awk -v d="$d" -v hz="$HZ" -v s="$SECS" 'BEGIN { printf "%.2f", 100 * d / hz / s }')
    [ "$p" = engine ] && total=$(( total + d ))
    [ "$d" -gt 0 ] && printf '%-10s %-18s %8s\n' "$p" "$c" "$pct"
done < <(ticks "$ENGINE"; ticks "$STRAT"; ticks "$EXCH")
awk -v d="$total" -v hz="$HZ" -v s="$SECS" 'BEGIN { printf "engine total: %.2f%% of one core over %d s\n", 100 * d / hz / s, s }'
grep -q "attached\|strategy idler" "$TMP/engine.log" || true
