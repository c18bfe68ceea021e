#!/usr/bin/env bash
# Issue 28's stall, reproduced and observed: the shipped exchange.toml and engine.toml
# (ports, directories and keys made fresh per run) with the `px` exchange venue, and the
# example maker and taker at `px` with `--wait park`, for SECS seconds, RUNS times.
# Per run it reports whether the exchange closed the engine's session for silence and
# what the engine logged, and per engine thread the longest gap between two samples
# of /proc/<tid>/schedstat in which the thread neither ran nor waited to run (it was
# blocked: off-CPU), with the total run-queue wait.
#
#   scripts/engine-stall.sh [RUNS=6] [SECS=8]
#   PERF=1 scripts/engine-stall.sh 1 8   # also, for the engine and the exchange, every
#                                        # syscall that took over 50 ms (perf trace
#                                        # --duration 50) and an off-CPU profile
#                                        # (perf record -e sched:sched_switch -g)
# Uses target/release/peregrine (build it first: cargo build --release -p peregrine).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-6}
SECS=${2:-8}
BIN=${BIN:-$PWD/target/release/peregrine}
[ -x "$BIN" ] || { echo "build first: cargo build --release -p peregrine" >&2; exit 2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  load $(cut -d' ' -f1-3 /proc/loadavg)  commit $(git rev-parse --short HEAD)"
for run in $(seq 1 "$RUNS"); do
    T=$(mktemp -d /tmp/peregrine-stall-XXXXXX)
    P1=$(free_port); P2=$(free_port); P3=$(free_port); P4=$(free_port); P5=$(free_port)
    "$BIN" keygen --accounts 1 --keys-out "$T/keys.toml" --accounts-out "$T/accounts.toml" >/dev/null
    sed -e "s|^listen = .*|listen = \"127.0.0.1:$P1\"|" \
        -e "s|^recovery_listen = .*|recovery_listen = \"127.0.0.1:$P2\"|" \
        -e "s|^target = .*|target = \"127.0.0.1:$P3\"|" \
        -e "s|^listen = \"127.0.0.1:7790\".*|listen = \"127.0.0.1:$P4\"|" \
        -e "s|^accounts_file = .*|accounts_file = \"$T/accounts.toml\"|" \
        -e "s|^dir = \"data/journal\"|dir = \"$T/journal\"|" exchange.toml >"$T/exchange.toml"
    # The metrics listen line follows [metrics]; the first sed above matched the
    # order-entry listen only, so fix the metrics one explicitly.
    python3 - "$T/exchange.toml" "$P1" "$P4" <<'EOF'
import sys, re
p, entry, metrics = sys.argv[1], sys.argv[2], sys.argv[3]
t = open(p).read()
t = re.sub(r'(\[metrics\][^\[]*?listen = )"[^"]*"', r'\1"127.0.0.1:%s"' % metrics, t, flags=re.S)
open(p, "w").write(t)
EOF
    sed -e "s|^name = \"main\".*|name = \"stall\"\nshm_dir = \"/dev/shm/peregrine-stall-$run-$$\"|" engine.toml >"$T/engine.toml"
    cat >>"$T/engine.toml" <<EOF
[[venues]]
name = "px"
thread = { wait = "park" }
exchange = { addr = "127.0.0.1:$P1", account = 1, key_file = "$T/keys.toml" }
EOF
    SHM=/dev/shm/peregrine-stall-$run-$$
    "$BIN" exchange --config "$T/exchange.toml" >"$T/exchange.out" 2>"$T/exchange.log" &
    EX=$!
    for _ in $(seq 100); do grep -q "listening on" "$T/exchange.out" 2>/dev/null && break; sleep 0.05; done
    "$BIN" engine --config "$T/engine.toml" --duration $((SECS + 3)) >"$T/engine.out" 2>"$T/engine.log" &
    EN=$!
    for _ in $(seq 100); do [ -S "$SHM/control.sock" ] && break; sleep 0.05; done
    if [ "${PERF:-0}" = 1 ]; then
        perf record -q -e sched:sched_switch -g -p "$EN,$EX" -o "$T/perf.data" -- sleep "$SECS" >/dev/null 2>&1 &
        PERFPID=$!
        perf trace --duration 50 -p "$EN,$EX" -o "$T/slow-syscalls.txt" -- sleep "$SECS" >/dev/null 2>&1 &
        TRACEPID=$!
    fi
    python3 scripts/lib/schedstat_gaps.py "$SECS" "$EN" "$EX" >"$T/gaps.txt" &
    GAPS=$!
    "$BIN" strategy maker --dir "$SHM" --venue 1 --wait park --duration "$SECS" >"$T/maker.out" 2>&1 &
    MK=$!
    "$BIN" strategy taker --dir "$SHM" --venue 1 --wait park --duration "$SECS" >"$T/taker.out" 2>&1 &
    TK=$!
    wait $MK $TK || true
    wait $GAPS || true
    [ "${PERF:-0}" = 1 ] && wait $PERFPID $TRACEPID || true
    "$BIN" engine --dir "$SHM" stats >"$T/stats.txt" 2>&1 || true
    "$BIN" engine --dir "$SHM" shutdown >/dev/null 2>&1 || true
    wait $EN || true
    kill $EX 2>/dev/null; wait $EX 2>/dev/null || true
    closed=$(grep -c "no input for three heartbeat" "$T/exchange.log" || true)
    disc=$(grep -c "disconnected" "$T/engine.log" || true)
    acks=$(grep -o "ack [0-9]*" "$T/taker.out" | head -1)
    echo "run $run: exchange closed for silence: $closed  engine disconnects: $disc  taker $acks  ($T)"
    sed 's/^/    /' "$T/gaps.txt"
    if [ "${PERF:-0}" = 1 ]; then
        perf script -i "$T/perf.data" -F comm,tid,time,event,trace,ip,sym 2>/dev/null >"$T/perf.txt" || true
        echo "    off-CPU profile: $T/perf.txt; syscalls over 50 ms (futex and epoll waits left out):"
        grep -v "futex(\|epoll_wait(\|clock_nanosleep(\|nanosleep(" "$T/slow-syscalls.txt" | sed 's/^/      /' | head -20
    fi
    rm -rf "$SHM"
done
