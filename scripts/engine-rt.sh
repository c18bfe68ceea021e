#!/usr/bin/env bash
# Strategy<->engine round trip on this machine, beside its floor in the same session:
# the two-process shared-memory ring round trip with the engine's own messages
# (`peregrine bench engine floor`, run before and after the engine modes), then the
# engine with scripts/engine-latency.toml and the pinger strategy (one order in
# flight) in three modes, each against a fresh engine:
#   engine-only : venue index 9 (unknown) -> answered by the orchestrator (decode, checks)
#   risk-reject : qty 1000 > max_order_qty -> answered by the full pre-trade risk check
#   venue       : the sim venue with D = 0 through a gateway thread; three polling
#                 threads on two cores, so everything spin-yields
#                 (scripts/engine-latency-venue.toml)
# Usage: scripts/engine-rt.sh [orders per mode, default 300000]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300000}
BIN=target/release/peregrine
DIR=/dev/shm/peregrine-latency
cargo build --release -p peregrine -p peregrine-bench >/dev/null 2>&1
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
run() {
    local mode=$1 config=$2; shift 2
    $BIN engine --config "$config" >/dev/null 2>&1 &
    local engine=$!
    sleep 0.5
    echo "## $mode ($config): peregrine strategy pinger --engine latency --count $N $*"
    $BIN strategy pinger --engine latency --count "$N" --duration 60 "$@" 2>/dev/null
    if [ "$mode" = venue ]; then
        sleep 1.2  # one stats interval
        $BIN engine --dir "$DIR" stats | sed -n '2,14p'
    fi
    $BIN engine --dir "$DIR" shutdown >/dev/null
    wait "$engine" || true
}
SPIN="--wait busy-spin --core 1"
floor() {
    echo "## floor: peregrine bench engine floor --rounds $N --core 1 --echo-core 0"
    $BIN bench engine floor --rounds "$N" --core 1 --echo-core 0 | tail -2
}
floor
run engine-only scripts/engine-latency.toml $SPIN --venue 9 --no-receipts
floor
run engine-only scripts/engine-latency.toml $SPIN --venue 9 --no-receipts
run risk-reject scripts/engine-latency.toml $SPIN --qty 1000 --no-receipts
floor
run venue scripts/engine-latency-venue.toml --wait spin-yield
