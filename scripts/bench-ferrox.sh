#!/usr/bin/env bash
# Seed 003's headline workload, side by side: Ferrox's own phase-7 load generator
# (1M asks on 50 levels, then 1M crossing bids through its ring, one thread, an
# execution report per fill) and `peregrine bench book --only ferrox_phase7` (the same
# shape through Peregrine's ring, engine and report encoding), alternated in one run.
#
#   scripts/bench-ferrox.sh PATH_TO_FERROX_CHECKOUT [rounds]
#
# PATH_TO_FERROX_CHECKOUT is a checkout of Ferrox that you obtained yourself; this
# script only runs `cargo build --release --example loadgen --features metrics`
# inside it. Nothing of Ferrox is part of this repository. See docs/performance.md.
set -euo pipefail
FERROX=${1:?usage: scripts/bench-ferrox.sh PATH_TO_FERROX_CHECKOUT [rounds]}
ROUNDS=${2:-3}
FERROX=$(cd "$FERROX" && pwd)
cd "$(dirname "$0")/.."
[ -f "$FERROX/examples/loadgen.rs" ] || { echo "no examples/loadgen.rs in $FERROX" >&2; exit 2; }

echo "building Ferrox's loadgen in $FERROX ..." >&2
(cd "$FERROX" && cargo build --release --example loadgen --features metrics) >&2
FX="$FERROX/target/release/examples/loadgen"
echo "building peregrine ..." >&2
cargo build --release -p peregrine >&2
PG=target/release/peregrine
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "# $(date -u +%FT%TZ)  nproc $(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-28s %12s %12s %7s %7s %7s\n' round candidate "orders/s" "untimed/s" p50 p99 p99.9
for r in $(seq 1 "$ROUNDS"); do
  (cd "$FERROX" && "$FX") > "$TMP/fx.txt"
  # Ferrox prints "Throughput : N orders/sec" and "P50 : N" ... in ns.
  fx_tp=$(awk -F: '/Throughput/ {gsub(/[^0-9.]/, "", $2); print $2}' "$TMP/fx.txt")
  fx_p() { awk -F: -v k="$1" '$1 ~ "^ *"k" *$" {gsub(/[^0-9.]/, "", $2); print $2}' "$TMP/fx.txt"; }
  fx_fills=$(awk -F: '/Fills produced/ {gsub(/[^0-9]/, "", $2); print $2}' "$TMP/fx.txt")
  printf '%-5s %-28s %12.0f %12s %7s %7s %7s   (%s fills)\n' "$r" "ferrox loadgen" "$fx_tp" "-" "$(fx_p P50)" "$(fx_p P99)" "$(fx_p P99.9)" "$fx_fills"

  "$PG" bench book --only ferrox_phase7 --json "$TMP/pg.json" > "$TMP/pg.txt"
  jq -r --arg r "$r" '.phase7[] | [$r, .candidate, .timed_orders_per_sec, .orders_per_sec, .p50, .p99, .p999, .fills] | @tsv' "$TMP/pg.json" |
    while IFS=$'\t' read -r rr cand tp un p50 p99 p999 fills; do
      printf '%-5s %-28s %12.0f %12.0f %7s %7s %7s   (%s fills)   x%.2f vs ferrox\n' \
        "$rr" "$cand" "$tp" "$un" "$p50" "$p99" "$p999" "$fills" "$(awk -v a="$tp" -v b="$fx_tp" 'BEGIN {print a / b}')"
    done
done
echo "orders/s: measured orders over the timed loop's wall time (per-order timing on, as Ferrox measures); untimed/s: Peregrine's loop without the per-order timer; latencies in ns."
