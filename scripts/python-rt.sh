#!/usr/bin/env bash
# The Python strategy <-> engine round trip beside the Rust one, in one run: the
# engine of scripts/engine-latency.toml (orchestrator busy-spinning on core 0), and a
# pinger (one order in flight, venue 9: answered by the orchestrator itself) on core 1,
# busy-spinning, each against a fresh engine:
#   rust       peregrine strategy pinger (the SDK's runner, Rust callbacks)
#   batched    the Python pinger, one interpreter acquisition per batch of events
#   per_event  the Python pinger, one interpreter acquisition per event
# and the shared-memory ring floor of docs/performance.md is `peregrine bench handoff`.
# Each prints the runner's t8 - t1 histogram; the Python ones also the full cycle,
# send in one callback -> the callback that receives its answer.
# Needs the release build (or PEREGRINE_BIN=another build) and the package installed
# (source tests/python/setup.sh).
# Usage: scripts/python-rt.sh [orders per run, default 200000]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
BIN=${PEREGRINE_BIN:-target/release/peregrine}
PY="${PY_VENV:-target/py-venv}/bin/python"
DIR=/dev/shm/peregrine-latency
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  load $(cut -d' ' -f1-3 /proc/loadavg)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
engine() {
    $BIN engine --config scripts/engine-latency.toml >/dev/null 2>&1 &
    ENGINE=$!
    for _ in $(seq 100); do [ -S "$DIR/control.sock" ] && break; sleep 0.05; done
}
stop() {
    $BIN engine --dir "$DIR" shutdown >/dev/null || true
    wait "$ENGINE" || true
}
for round in 1 2; do
    echo "## round $round"
    engine
    echo "### rust: peregrine strategy pinger --count $N --venue 9 --wait busy-spin --core 1 --no-receipts"
    $BIN strategy pinger --engine latency --count "$N" --duration 60 --venue 9 --wait busy-spin --core 1 --no-receipts 2>/dev/null
    stop
    for mode in batched per_event; do
        engine
        echo "### python $mode: python -m peregrine.examples.pinger --count $N --mode $mode --core 1"
        "$PY" -m peregrine.examples.pinger --engine latency --count "$N" --mode "$mode" --core 1 --wait busy-spin 2>/dev/null
        stop
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
