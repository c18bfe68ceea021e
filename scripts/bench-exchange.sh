#!/usr/bin/env bash
# Loopback latency/throughput of the exchange, compact vs split, with the load
# generator on the same machine. Prints one block per run; see docs/exchange.md.
#   scripts/bench-exchange.sh [duration_s] [rate]
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-5}
RATE=${2:-100000}
cargo build --release -p peregrine >/dev/null
B=target/release/peregrine
TMP=$(mktemp -d)
trap 'kill $EX 2>/dev/null || true; rm -rf "$TMP"' EXIT
echo "# $(date -u +%FT%TZ)  nproc $(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  load $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # topology server_wait loadgen_wait loadgen-args...
  local topo=$1 swait=$2 lwait=$3; shift 3
  RUNS=$((${RUNS:-0} + 1)) # a fresh journal per run, so no run replays another's
  sed -e '0,/^listen = /s/^listen = .*/listen = "127.0.0.1:7790"/' -e 's/^listen = "127.0.0.1:9100"/listen = "127.0.0.1:7792"/' -e "s/^topology = .*/topology = \"$topo\"/" \
      -e "s/^wait = .*/wait = \"$swait\"/" -e 's/^target = .*/target = "127.0.0.1:7791"/' \
      -e "s|^dir = .*|dir = \"$TMP/journal-$RUNS\"|" \
      exchange.toml > "$TMP/ex.toml"
  $B exchange --config "$TMP/ex.toml" > "$TMP/out" 2> "$TMP/err" & EX=$!
  sleep 0.5
  echo "== topology=$topo server-wait=$swait loadgen-wait=$lwait $*"
  RUST_BACKTRACE=0 $B loadgen --config "$TMP/ex.toml" --wait "$lwait" --duration "$DUR" "$@" 2>&1 | grep -E "^(sent|latency|order|Error)" || true
  kill $EX; wait $EX 2>/dev/null || true
  grep -h "slow reader" "$TMP/err" | head -2 || true
}
run compact busy-spin busy-spin --rate "$RATE" --connections 4
run split   busy-spin busy-spin --rate "$RATE" --connections 4
run compact spin-yield spin-yield --rate "$RATE" --connections 4
run split   spin-yield spin-yield --rate "$RATE" --connections 4
run compact busy-spin spin-yield --closed --window 8 --connections 4
run split   spin-yield spin-yield --closed --window 8 --connections 4
