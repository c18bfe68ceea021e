#!/usr/bin/env bash
# Strategy<->engine round trip of two builds, alternating in one session (A B A B ...),
# with the two-process ring floor once per round: what a change to the orchestrator's
# or the SDK's hot path costs. Per round and build, two modes against a fresh engine
# (pinger strategy, one order in flight, N orders):
#   engine-only : scripts/engine-latency.toml (orchestrator busy-spins on core 0, the
#                 pinger on core 1), venue 9 (unknown) answered by the orchestrator
#   park        : scripts/engine-latency-park.toml, the orchestrator on its default
#                 wait (park), the sim venue (D = 0) through a spin-yield gateway
#
#   A=/tmp/peregrine-before B=target/release/peregrine scripts/engine-rt-ab.sh [N=50000] [ROUNDS=2]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50000}
ROUNDS=${2:-2}
A=${A:?A=<peregrine binary>}
B=${B:-target/release/peregrine}
DIR=/dev/shm/peregrine-latency
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  load $(cut -d' ' -f1-3 /proc/loadavg)  A=$A  B=$B  N=$N"
mode() { # bin name config strategy-args...
    local bin=$1 name=$2 config=$3; shift 3
    "$bin" engine --config "$config" >/dev/null 2>&1 &
    local engine=$!
    for _ in $(seq 1 100); do [ -S "$DIR/control.sock" ] && break; sleep 0.05; done
    printf '%-3s %-12s ' "$(basename "$bin" | sed 's/.*-//')" "$name"
    local out
    out=$(timeout 120 "$bin" strategy pinger --engine latency --count "$N" --duration 100 "$@" 2>/dev/null || true)
    grep -m1 "round trip" <<<"$out" || echo "(no round-trip line)"
    "$bin" engine --dir "$DIR" shutdown >/dev/null 2>&1 || true
    wait "$engine" || true
}
for r in $(seq 1 "$ROUNDS"); do
    # The floor needs target/release/peregrine-bench (cargo build --release -p peregrine-bench).
    echo "## round $r  floor: $(target/release/peregrine bench engine floor --rounds "$N" --core 1 --echo-core 0 2>/dev/null | tail -1 || echo 'not run (no peregrine-bench)')"
    for bin in "$A" "$B"; do
        mode "$bin" engine-only scripts/engine-latency.toml --wait busy-spin --core 1 --venue 9 --no-receipts
        mode "$bin" park scripts/engine-latency-park.toml --wait spin-yield
    done
done
echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)"
