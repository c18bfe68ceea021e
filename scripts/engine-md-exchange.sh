#!/usr/bin/env bash
# Exchange feed -> strategy latency, one command (bench, not test), for
# docs/performance.md: `peregrine exchange` publishes its UDP feed (send time in each
# packet header), `peregrine engine` subscribes through its exchange venue's `feed`
# (market-data thread busy-spinning on core 1), a reverter strategy subscribed to
# the exchange's book (spin-yield) gets on_book, and `peregrine loadgen` (three other
# accounts, protocol v2) moves the book. The engine's `md exch send -> engine` / `-> on_book`
# rows come from the strategy's market-data receipts. The floor, in the same run:
# `peregrine bench engine udp` (one loopback datagram every 50 us, receiver polling).
# Loaded machine: the load (`uptime`) is printed before and after.
# Usage: scripts/engine-md-exchange.sh [loadgen seconds, default 20] [orders/s, default 2000]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/procs.sh
source scripts/lib/procs.sh
SECS=${1:-20}
RATE=${2:-2000}
BIN=target/release/peregrine
cargo build --release -p peregrine -p peregrine-bench >/dev/null 2>&1
TMP=$(mktemp -d /tmp/peregrine-mdx.XXXXXX)
SHM=/dev/shm/peregrine-mdx-$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP" "$SHM"
}
trap cleanup EXIT
ORDER=$(free_port); REC=$(free_port); MD=$(free_port)

exchange_toml() {
    cat <<EOF
listen = "127.0.0.1:$ORDER"
wait = "park"
recovery_enabled = true
recovery_listen = "127.0.0.1:$REC"
[market_data]
enabled = true
target = "127.0.0.1:$MD"
heartbeat_ms = 100
[metrics]
enabled = false
EOF
}
# Protocol v2 keys: accounts 1-3 for loadgen, 4 for the engine.
"$BIN" keygen --accounts 1-3 --keys-out "$TMP/load-keys.toml" --accounts-out "$TMP/load-accounts.toml" >/dev/null
"$BIN" keygen --accounts 4 --keys-out "$TMP/engine-keys.toml" --accounts-out "$TMP/engine-accounts.toml" >/dev/null
{ exchange_toml; cat "$TMP/load-accounts.toml" "$TMP/engine-accounts.toml"; } >"$TMP/exchange.toml"
cat >"$TMP/engine.toml" <<EOF
name = "mdx"
shm_dir = "$SHM"
stats_interval_ms = 500
instruments = [1]
[orchestrator]
wait = "park"
[market_data]
thread = { wait = "busy-spin", core = 1 }
[[strategies]]
name = "watcher"
subscribe = [{ venue = "px", instrument = 1 }]
[strategies.limits]
max_order_qty = 10
max_position = 30
[[venues]]
name = "px"
thread = { wait = "park" }
exchange = { addr = "127.0.0.1:$ORDER", account = 4, key_file = "$TMP/engine-keys.toml", feed = { addr = "127.0.0.1:$MD", recovery = "127.0.0.1:$REC" } }
EOF

echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# load before: $(uptime | sed 's/.*load average/load average/')"
"$BIN" exchange --config "$TMP/exchange.toml" >"$TMP/exchange.out" 2>"$TMP/exchange.log" &
pids+=($!)
until grep -q "listening on" "$TMP/exchange.out" 2>/dev/null; do sleep 0.05; done
"$BIN" engine --config "$TMP/engine.toml" --duration $((SECS + 30)) >/dev/null 2>"$TMP/engine.log" &
pids+=($!)
until [ -S "$SHM/control.sock" ]; do sleep 0.05; done
"$BIN" strategy reverter --dir "$SHM" --name watcher --venue 0 --wait spin-yield \
    --duration $((SECS + 2)) >"$TMP/watcher.out" 2>&1 &
pids+=($!)
echo "## loadgen: $RATE orders/s over 3 sessions (accounts 1-3) for $SECS s"
"$BIN" loadgen --config "$TMP/exchange.toml" --keys "$TMP/load-keys.toml" --rate "$RATE" --connections 3 \
    --duration "$SECS" --wait park | grep -E "orders|p50|throughput" | head -5 || true
sleep 3 # the watcher's last receipts and one stats snapshot (bench, not a test)
echo "## engine stats: exchange feed -> strategy (ns on CLOCK_MONOTONIC)"
"$BIN" engine --dir "$SHM" stats | grep -E "^(latency|md )"
echo "## JSON (engine summary, latency rows)"
python3 - "$SHM/control.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"summary\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
j = json.loads(data.decode().strip().splitlines()[-1])
print(json.dumps({"latency": [r for r in j.get("latency", []) if r.get("name", "").startswith("md")]}))
PY
grep -E "market data" "$TMP/engine.log" | head -5 || true
"$BIN" engine --dir "$SHM" shutdown >/dev/null || true
echo "## floor, same run: UDP loopback one-way (receiver polling)"
"$BIN" bench engine udp --count 20000 --gap-us 50
echo "# load after: $(uptime | sed 's/.*load average/load average/')"
