#!/usr/bin/env bash
# Smoke test of /metrics against a real Prometheus server (Debian's `prometheus`
# package, `apt-get install -y prometheus`; scripts/test-all.sh installs it).
#
# Starts the release exchange on loopback with [metrics] on free ports and keys from
# `peregrine keygen`, checks /health, lints one scrape with `promtool check metrics`,
# runs a Prometheus that scrapes it every second, drives `peregrine loadgen` for 3 s,
# then asks the Prometheus HTTP API for the target's health, the trade counter, a
# latency quantile, a process_* metric and peregrine_build_info. Exits non-zero on
# any failure; everything runs on 127.0.0.1 and stops by itself (bounded waits).
#   scripts/prometheus-smoke.sh            (builds the release binary first)
#   PEREGRINE_BIN=target/release/peregrine scripts/prometheus-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/procs.sh
source scripts/lib/procs.sh
command -v prometheus >/dev/null || { echo "prometheus not installed (apt-get install prometheus)" >&2; exit 2; }
# PEREGRINE_BIN: a release binary already built (scripts/test-all.sh passes the one
# `cargo test --workspace --release` built; `cargo build -p peregrine` alone unifies
# features differently and would rebuild it).
if [ -n "${PEREGRINE_BIN:-}" ]; then
  B=$(realpath "$PEREGRINE_BIN")
else
  cargo build --release -p peregrine >/dev/null
  B=$PWD/target/release/peregrine
fi
TMP=$(mktemp -d)
EX= PROM=
cleanup() {
  for p in $PROM $EX; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
MP=$(free_port); PP=$(free_port); OP=$(free_port)
"$B" keygen --accounts 1-4 --keys-out "$TMP/keys.toml" --accounts-out "$TMP/accounts.toml" >/dev/null

cat > "$TMP/ex.toml" <<EOF
listen = "127.0.0.1:$OP"
recovery_listen = "127.0.0.1:0"
wait = "park"
[metrics]
enabled = true
listen = "127.0.0.1:$MP"
publish_interval_ms = 100
[journal]
dir = "$TMP/journal"
fsync = "none"
[market_data]
enabled = false
EOF
cat "$TMP/accounts.toml" >> "$TMP/ex.toml"
"$B" exchange --config "$TMP/ex.toml" > "$TMP/ex.out" 2> "$TMP/ex.err" & EX=$!
for _ in $(seq 100); do grep -q "listening on" "$TMP/ex.out" 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" "$TMP/ex.out" || { cat "$TMP/ex.err"; echo "exchange did not start" >&2; exit 1; }

[ "$(curl -sf --max-time 5 "http://127.0.0.1:$MP/health")" = "ok" ] || { echo "/health did not answer ok" >&2; exit 1; }
if command -v promtool >/dev/null; then
  curl -sf --max-time 5 "http://127.0.0.1:$MP/metrics" > "$TMP/scrape.txt"
  # The document is OpenMetrics (prometheus-client), which declares a counter as
  # `# TYPE x counter` and samples it as `x_total`; `promtool check metrics` (2.42)
  # reads only the classic text format, where such a sample is a family of its own
  # without HELP. Exactly those findings are expected (each is checked against its
  # TYPE line); any other finding fails.
  lint=$(promtool check metrics < "$TMP/scrape.txt" 2>&1) || true
  unexpected=$(printf '%s\n' "$lint" | python3 -c '
import re, sys
doc = open(sys.argv[1]).read()
for line in sys.stdin:
    line = line.strip()
    m = re.fullmatch(r"(\w+)_total no help text", line)
    if line and not (m and f"# TYPE {m.group(1)} counter\n" in doc):
        print(line)' "$TMP/scrape.txt")
  [ -z "$unexpected" ] || { echo "promtool check metrics:"; echo "$unexpected"; exit 1; } >&2
  echo "promtool check metrics: OK ($(grep -vc '^#' "$TMP/scrape.txt") samples; $(printf '%s\n' "$lint" | grep -c '_total no help text') OpenMetrics counter samples read as HELP-less by the classic parser)"
fi

cat > "$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: peregrine
    static_configs:
      - targets: ["127.0.0.1:$MP"]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
  --web.listen-address="127.0.0.1:$PP" > "$TMP/prom.log" 2>&1 & PROM=$!

"$B" loadgen --config "$TMP/ex.toml" --keys "$TMP/keys.toml" --rate 1000 --duration 3 --drain 1 2>&1 | grep -E "^sent" || true

# Instant query → the first sample's value, or empty.
query() {
  curl -sf --max-time 5 --get "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
trades=""
for _ in $(seq 60); do
  trades=$(query 'peregrine_exchange_trades_total' 2>/dev/null || true)
  [ -n "$trades" ] && [ "$trades" != "0" ] && [ "$(query 'up{job="peregrine"}')" = "1" ] && break
  sleep 0.5
done
[ -n "$trades" ] && [ "$trades" != "0" ] || { tail -20 "$TMP/prom.log"; echo "Prometheus never saw a trade" >&2; exit 1; }
sleep 2 # one more scrape after the load ended
trades=$(query 'peregrine_exchange_trades_total')
orders=$(query 'sum(peregrine_exchange_orders_received_total)')
p99=$(query 'histogram_quantile(0.99, sum by (le) (peregrine_exchange_matching_latency_seconds_bucket))')
up=$(query 'up{job="peregrine"}')
rss=$(query 'process_resident_memory_bytes{job="peregrine"}')
build=$(query 'peregrine_build_info{job="peregrine",component="exchange"}')
echo "prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}'): up=$up orders=$orders trades=$trades matching p99<=${p99}s rss=${rss} build_info=${build}"
# The load mix trades about half of its orders.
[ "$up" = "1" ] && [ "$trades" -gt 0 ] && [ "$orders" -ge "$trades" ] && [ -n "$rss" ] && [ "$build" = "1" ] || { echo "unexpected values" >&2; exit 1; }
echo "prometheus smoke: OK"
