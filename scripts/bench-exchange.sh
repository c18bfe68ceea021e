#!/usr/bin/env bash
# The exchange over loopback TCP, against its physical floor measured in the same run.
#
#   scripts/bench-exchange.sh            # reduced: ~2 minutes (5 s per run)
#   scripts/bench-exchange.sh full       # 20 s per run, 3 repetitions of each row
#   DUR=10 REPS=2 scripts/bench-exchange.sh   # any other mix
#
# For each row, `peregrine loadgen` (the same client, schedule, sizes and connections)
# first drives the floor: scripts/floor.c, a bare order-entry echo (one thread
# spinning over non-blocking sockets, speaking the v2 login without checking the
# proof; a 48-byte NewOrder gets a 92-byte Accepted), then the exchange as shipped (`wait = "park"`, compact topology). It prints both
# percentile rows and the exchange's as multiples of the floor's; the durable row's
# floor is one fdatasync after a 4 KiB overwrite in a pre-written file (floor.c, on the
# journal's disk, same run; the append + fdatasync figure is printed beside it) plus
# the echo. Protocol v2 logs in with keys: the script makes fresh ones for the run
# (`peregrine keygen`, one account per session, so each session gets only its own
# reports, as from the floor) and gives the exchange their stored hashes and loadgen
# the key file. Everything is also written as JSON (path printed at the end). Rows:
#   open100k-4   open loop 100k orders/s, 4 sessions, fsync = "none"
#   open100k-64  open loop 100k orders/s, 64 sessions, fsync = "none"
#   pingpong     1 session, 1 order outstanding, fsync = "none"
#   durable100k  open loop 100k orders/s, 4 sessions, fsync = "batch" (shipped)
#   max-none     closed loop, 4 sessions x 8 outstanding, fsync = "none"
#   max-batch    closed loop, 4 sessions x 8 outstanding, fsync = "batch"
# Goals (issue 10, this 2-core box): p50 <= 1.5x and p99 <= 3x the floor at 100k/s
# with 0 lost; ping-pong p50 <= 1.3x; durable p50 <= 1.5x and p99 <= 3x its floor.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/procs.sh
source scripts/lib/procs.sh
MODE=${1:-quick}
case $MODE in
  quick) DUR=${DUR:-5}; REPS=${REPS:-1} ;;
  full) DUR=${DUR:-20}; REPS=${REPS:-3} ;;
  *) echo "usage: $0 [quick|full]" >&2; exit 2 ;;
esac
ROWS=${ROWS:-"open100k-4 open100k-64 pingpong durable100k max-none max-batch"}
cargo build --release -p peregrine >&2
mkdir -p target/release
gcc -O2 -Wall -o target/release/peregrine-floor scripts/floor.c
# PEREGRINE_BIN=<another build>/peregrine benches that build instead (an A/B run).
# PREALLOCATE=false runs the exchange with plain journal appends (journal.preallocate).
# SYNC_NICE=N sets journal.sync_nice (default -10, as the shipped exchange.toml; none
# leaves it out).
B=${PEREGRINE_BIN:-$PWD/target/release/peregrine}
F=$PWD/target/release/peregrine-floor
TMP=$(mktemp -d -p "${TMPDIR:-/tmp}" bench-exchange.XXXXXX)
JSON_OUT=${JSON_OUT:-$PWD/target/bench-exchange-$(date -u +%Y%m%dT%H%M%SZ).json}
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT


# An exchange config: fsync policy $1, journal in $2.
config() {
  cat <<EOF
listen = "127.0.0.1:0"
recovery_listen = "127.0.0.1:0"
max_sessions = 256
accounts_file = "$TMP/accounts.toml"
[market_data]
target = "127.0.0.1:$(free_port)"
[journal]
dir = "$2"
fsync = "$1"
preallocate = ${PREALLOCATE:-true}
$([ "${SYNC_NICE:--10}" = none ] || echo "sync_nice = ${SYNC_NICE:--10}")
EOF
}


# loadgen against $1 (addr) with the row's arguments, summary JSON to $2.
loadgen() {
  local addr=$1 json=$2; shift 2
  # A run that lost orders still writes its JSON (shown in the table as lost > 0).
  "$B" loadgen --config "$TMP/base.toml" --keys "$TMP/keys.toml" --addr "$addr" --wait busy-spin \
    --duration "$DUR" --json "$json" "$@" > "$json.txt" 2>&1 || true
  [ -s "$json" ] || { echo "loadgen failed:" >&2; cat "$json.txt" >&2; return 1; }
}

floor_run() { # json loadgen-args...
  local json=$1; shift
  local port; port=$(free_port)
  "$F" echo "$port" > "$TMP/floor.out" 2>&1 & local pid=$!; PIDS+=("$pid")
  wait_for_line "$TMP/floor.out" listening
  loadgen "127.0.0.1:$port" "$json" "$@"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

exchange_run() { # fsync json loadgen-args...
  local fsync=$1 json=$2; shift 2
  local dir="$TMP/journal-$RANDOM$RANDOM"
  config "$fsync" "$dir" > "$TMP/ex.toml"
  "$B" exchange --config "$TMP/ex.toml" > "$TMP/ex.out" 2> "$json.exchange.log" & local pid=$!
  PIDS+=("$pid")
  wait_for_line "$TMP/ex.out" "listening on"
  local addr; addr=$(sed -n 's/^listening on //p' "$TMP/ex.out")
  loadgen "$addr" "$json" "$@"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  cp "$TMP/ex.out" "$json.exchange.out" # its order->ack summary by stage
  # The next row starts on a quiet disk: without this, the kernel's writeback of an
  # `fsync = "none"` row's journal (~50 MB) lands in the middle of the next row
  # (measured: durable100k p99 32.6 ms after three such rows, 5-9 ms alone).
  rm -rf "$dir"; sync
}

row_args() {
  case $1 in
    open100k-4) echo "none --rate 100000 --connections 4" ;;
    open100k-64) echo "none --rate 100000 --connections 64" ;;
    pingpong) echo "none --closed --window 1 --connections 1" ;;
    durable100k) echo "batch --rate 100000 --connections 4" ;;
    max-none) echo "none --closed --window 8 --connections 4" ;;
    max-batch) echo "batch --closed --window 8 --connections 4" ;;
    *) echo "unknown row $1" >&2; return 1 ;;
  esac
}

# One account per session of the widest row (64); session i logs in as account i+1.
"$B" keygen --accounts 1-64 --keys-out "$TMP/keys.toml" --accounts-out "$TMP/accounts.toml" >&2
config none "$TMP/unused" > "$TMP/base.toml"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# $(date -u +%FT%TZ)  $(nproc) cores  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  load $LOAD_BEFORE  mode $MODE (${DUR}s x $REPS)"
mkdir -p "$TMP/fsync-probe"
"$F" fsync "$TMP/fsync-probe" "${FSYNCS:-1000}" > "$TMP/fsync-append.txt"
"$F" fsync-inplace "$TMP/fsync-probe" "${FSYNCS:-1000}" > "$TMP/fsync.txt"
echo "# floor: $(cat "$TMP/fsync.txt") (4 KiB overwrite in a pre-written file + fdatasync on the journal's disk: the durable row's floor)"
echo "#   for reference: $(cat "$TMP/fsync-append.txt") (4 KiB append + fdatasync)"
for rep in $(seq 1 "$REPS"); do
  for row in $ROWS; do
    read -r fsync args <<<"$(row_args "$row")"
    # shellcheck disable=SC2086
    floor_run "$TMP/$row-$rep-floor.json" $args
    # shellcheck disable=SC2086
    exchange_run "$fsync" "$TMP/$row-$rep-exchange.json" $args
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$TMP" "$JSON_OUT" "$ROWS" "$REPS" "$LOAD_BEFORE" "$LOAD_AFTER" "$MODE" "$DUR" <<'PY'
import json, sys, os, re
tmp, out, rows, reps = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
load_before, load_after, mode, dur = sys.argv[5:9]
fs = open(os.path.join(tmp, "fsync.txt")).read().split()
fsync = {"p50_us": float(fs[2]), "p99_us": float(fs[4]), "max_us": float(fs[6])}
fa = open(os.path.join(tmp, "fsync-append.txt")).read().split()
fsync_append = {"p50_us": float(fa[2]), "p99_us": float(fa[4]), "max_us": float(fa[6])}
def load(p):
    return json.load(open(p))
cols = ["p50_us", "p90_us", "p99_us", "p999_us", "max_us"]
result = {"mode": mode, "duration_s": float(dur), "reps": reps, "load_before": load_before,
          "load_after": load_after, "fdatasync_floor": fsync,
          "fdatasync_append": fsync_append, "rows": []}
print(f"{'row':<12} {'rep':>3} {'who':<9} {'sent':>8} {'lost':>5} {'tput/s':>9} " +
      " ".join(f"{c[:-3]:>8}" for c in cols))
for rep in range(1, reps + 1):
    for row in rows:
        f = load(os.path.join(tmp, f"{row}-{rep}-floor.json"))
        e = load(os.path.join(tmp, f"{row}-{rep}-exchange.json"))
        floor = dict(f["ack"])
        if row.startswith("durable"):
            floor = {c: f["ack"][c] + (fsync["p50_us"] if c == "p50_us" else fsync["p99_us"]) for c in cols}
        ratios = {c: (e["ack"][c] / floor[c] if floor[c] > 0 else None) for c in cols}
        for who, s, ack in (("floor", f, floor), ("exchange", e, e["ack"])):
            print(f"{row:<12} {rep:>3} {who:<9} {s['sent']:>8} {s['lost']:>5} {s['throughput_per_s']:>9.0f} " +
                  " ".join(f"{ack[c]:>8.1f}" for c in cols))
        print(f"{row:<12} {rep:>3} {'ratio':<9} {'':>8} {'':>5} {'':>9} " +
              " ".join(f"{(ratios[c] or 0):>7.2f}x" for c in cols))
        out_file = os.path.join(tmp, f"{row}-{rep}-exchange.json.exchange.out")
        stages = [l for l in open(out_file).read().splitlines() if l.startswith("ack stage")]
        if os.environ.get("STAGES", "1") == "1":
            for l in stages:
                print(f"{'':<12}     server {l}")
        result["rows"].append({"row": row, "rep": rep, "floor": f, "floor_ack": floor,
                               "exchange": e, "ratio": ratios, "server": stages})
json.dump(result, open(out, "w"), indent=1)
print(f"# load {load_before} -> {load_after}; JSON: {out}")
PY
