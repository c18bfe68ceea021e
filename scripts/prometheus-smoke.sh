#!/usr/bin/env bash
# Smoke test of /metrics against a real Prometheus server (Debian's `prometheus`
# package, `apt-get install -y prometheus`; scripts/test-all.sh installs it).
#
# Starts the release exchange on loopback with [metrics] on free ports and keys from
# `peregrine keygen`, checks /health, lints one scrape with `promtool check metrics`,
# runs a Prometheus that scrapes it every second, drives `peregrine loadgen` for 3 s,
# then asks the Prometheus HTTP API for the target's health, the trade counter, a
# latency quantile, a process_* metric and peregrine_build_info. The HTTP gateway
# (`peregrine gateway http`) runs beside it as a second target: signed REST orders,
# then its order-stage histogram and session gauge through Prometheus. Exits non-zero
# on any failure; everything runs on 127.0.0.1 and stops by itself (bounded waits).
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
EX= PROM= GW=
cleanup() {
  for p in $PROM $GW $EX; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
MP=$(free_port); PP=$(free_port); OP=$(free_port); HP=$(free_port); FP=$(free_port)
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
target = "127.0.0.1:$FP"
EOF
cat "$TMP/accounts.toml" >> "$TMP/ex.toml"
"$B" exchange --config "$TMP/ex.toml" > "$TMP/ex.out" 2> "$TMP/ex.err" & EX=$!
for _ in $(seq 100); do grep -q "listening on" "$TMP/ex.out" 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" "$TMP/ex.out" || { cat "$TMP/ex.err"; echo "exchange did not start" >&2; exit 1; }

[ "$(curl -sf --max-time 5 "http://127.0.0.1:$MP/health")" = "ok" ] || { echo "/health did not answer ok" >&2; exit 1; }

cat > "$TMP/gw.toml" <<EOF
listen = "127.0.0.1:$HP"
[exchange]
config = "$TMP/ex.toml"
keys = "$TMP/keys.toml"
[history]
url = "sqlite://$TMP/history.db"
[[api_keys]]
account = 1
api_key = "smoke-key"
secret_key = "smoke-secret"
EOF
"$B" gateway http --config "$TMP/gw.toml" > "$TMP/gw.out" 2> "$TMP/gw.err" & GW=$!
up=""
for _ in $(seq 100); do
  up=$(curl -sf --max-time 2 "http://127.0.0.1:$HP/peregrine/status" 2>/dev/null |
    python3 -c 'import json,sys; print(all(s["up"] for s in json.load(sys.stdin)["sessions"]))' 2>/dev/null || true)
  [ "$up" = "True" ] && break
  sleep 0.1
done
[ "$up" = "True" ] || { cat "$TMP/gw.err"; echo "gateway session did not come up" >&2; exit 1; }
# lint URL NAME: one scrape through `promtool check metrics`.
lint_scrape() {
  command -v promtool >/dev/null || return 0
  curl -sf --max-time 5 "$1" > "$TMP/scrape.txt"
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
  [ -z "$unexpected" ] || { echo "promtool check metrics ($2):"; echo "$unexpected"; exit 1; } >&2
  echo "promtool check metrics ($2): OK ($(grep -vc '^#' "$TMP/scrape.txt") samples; $(printf '%s\n' "$lint" | grep -c '_total no help text') OpenMetrics counter samples read as HELP-less by the classic parser)"
}
lint_scrape "http://127.0.0.1:$MP/metrics" exchange
lint_scrape "http://127.0.0.1:$HP/metrics" gateway

cat > "$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: peregrine
    static_configs:
      - targets: ["127.0.0.1:$MP"]
  - job_name: gateway
    static_configs:
      - targets: ["127.0.0.1:$HP"]
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

# Signed REST orders through the gateway (Binance's HMAC-SHA256 over the body).
orders=$(python3 - "$HP" <<'PY'
import hashlib, hmac, http.client, sys, time
port = int(sys.argv[1]); ok = 0
for i in range(20):
    side = "BUY" if i % 2 else "SELL"
    body = f"symbol=PGN-USD&side={side}&type=LIMIT&timeInForce=IOC&quantity=1&price=100.00&timestamp={int(time.time() * 1000)}"
    sig = hmac.new(b"smoke-secret", body.encode(), hashlib.sha256).hexdigest()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("POST", "/api/v3/order", f"{body}&signature={sig}",
              {"X-MBX-APIKEY": "smoke-key", "Content-Type": "application/x-www-form-urlencoded"})
    r = c.getresponse(); r.read()
    ok += r.status == 200
print(ok)
PY
)
[ "$orders" = "20" ] || { cat "$TMP/gw.err"; echo "gateway answered $orders of 20 orders" >&2; exit 1; }
n=""
for _ in $(seq 40); do
  n=$(query 'peregrine_http_order_stage_seconds_count{stage="total",job="gateway"}' 2>/dev/null || true)
  [ "$n" = "20" ] && break
  sleep 0.5
done
gp50=$(query 'histogram_quantile(0.5, sum by (le) (peregrine_http_order_stage_seconds_bucket{stage="total"}))')
gup=$(query 'peregrine_http_session_up{account="1"}')
gbuild=$(query 'peregrine_build_info{job="gateway",component="http"}')
echo "gateway: orders=$n stage total p50<=${gp50}s session_up=$gup build_info=$gbuild"
[ "$n" = "20" ] && [ "$gup" = "1" ] && [ "$gbuild" = "1" ] && [ -n "$gp50" ] && [ "$gp50" != "NaN" ] || { echo "unexpected gateway values" >&2; exit 1; }
echo "prometheus smoke: OK"
