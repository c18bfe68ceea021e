#!/usr/bin/env bash
# The order engine's numbers for docs/performance.md, one command (bench, not test):
#   1. strategy<->engine round trip WITH market data flowing (pinger answered by the
#      risk check while the simulated market publishes to it), beside the same
#      without market data;
#   2. feed-to-strategy latency on the simulated market (venue timestamp -> on_book,
#      engine stats), with the bare UDP loopback one-way latency measured in the same
#      run as the floor;
#   3. engine journal cost per order and recovery time for 1M journaled events.
# Loaded machine: record `uptime` with every number (printed here).
# Usage: scripts/engine-bench.sh [orders per round-trip mode, default 300000]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300000}
BIN=target/release/peregrine
cargo build --release -p peregrine -p peregrine-bench >/dev/null 2>&1
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# load: $(uptime | sed 's/.*load average/load average/')"
rt() {
    local label=$1 config=$2 dir=$3; shift 3
    $BIN engine --config "$config" >/dev/null 2>&1 &
    local engine=$!
    sleep 0.5
    echo "## $label: pinger --count $N $*"
    $BIN strategy pinger --dir "$dir" --count "$N" --duration 120 "$@" 2>/dev/null | grep -E "round trip|market data"
    $BIN engine --dir "$dir" shutdown >/dev/null
    wait "$engine" || true
}
SPIN="--wait busy-spin --core 1 --qty 1000 --no-receipts"
rt "risk-reject, no market data" scripts/engine-latency.toml /dev/shm/peregrine-latency $SPIN
rt "risk-reject, market data flowing" scripts/engine-latency-md.toml /dev/shm/peregrine-latency $SPIN

echo "## feed-to-strategy: simulated market, reverter subscribed, 15 s"
$BIN engine --config scripts/engine-md.toml --duration 20 >/dev/null 2>&1 &
engine=$!
sleep 0.5
$BIN strategy reverter --engine mdlat --name reverter --wait spin-yield --duration 15 >/dev/null 2>&1 || true
$BIN engine --dir /dev/shm/peregrine-mdlat stats | grep -E "^(latency|md )"
$BIN engine --dir /dev/shm/peregrine-mdlat shutdown >/dev/null
wait "$engine" || true
echo "## floor, same run: UDP loopback one-way (receiver polling)"
$BIN bench engine udp --count 20000 --gap-us 50

echo "## engine journal: per-order cost and recovery of 1M events"
$BIN bench engine journal --events 1000000
echo "# load after: $(uptime | sed 's/.*load average/load average/')"
