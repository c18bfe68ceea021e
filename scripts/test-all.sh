#!/usr/bin/env bash
# Every test, on a fresh Debian machine with the pinned Rust toolchain (README's second
# command; .ci/run calls it). Installs what the tests talk to, then runs:
#   1. cargo test --workspace --profile ci (unit, property, differential, real processes;
#                                           the ci profile is release without LTO: Cargo.toml)
#   2. scripts/safety-checks.sh all       (loom, valgrind, checked profile, fuzz; docs/testing.md)
#   3. scripts/prometheus-smoke.sh        (a real Prometheus and promtool against the exchange)
#   4. tests/http/run.sh                  (python-binance, ccxt + ccxt.pro, freqtrade, schemathesis, Playwright + chromium)
#   5. tests/python/run.sh                (the `peregrine` Python package: wheel built by maturin, pytest)
# Needs root for apt-get when a package is missing; everything else stays in the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
apt_install() {
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "missing $*: install them (apt-get install $*)" >&2
    exit 1
  fi
}
# QuickFIX C++ (the FIX tests' counterpart, built by the quickfix crate) needs cmake and
# g++; valgrind runs the memcheck step.
need=""
command -v cmake >/dev/null || need="$need cmake"
command -v g++ >/dev/null || need="$need g++"
command -v valgrind >/dev/null || need="$need valgrind"
# Prometheus and promtool (Debian's `prometheus`) for scripts/prometheus-smoke.sh.
command -v prometheus >/dev/null || need="$need prometheus"
# `ip` (iproute2) for the cluster's network-namespace partition test.
command -v ip >/dev/null || need="$need iproute2"
# Python with venv (the HTTP clients' suite, the FIX/Python scripts), curl (the smoke
# scripts), npm (peregrine-http's build fetches Lightweight Charts with `npm pack`).
command -v python3 >/dev/null || need="$need python3"
python3 -c 'import venv, ensurepip' 2>/dev/null || need="$need python3-venv"
command -v curl >/dev/null || need="$need curl"
command -v npm >/dev/null || need="$need npm"
[ -z "$need" ] || apt_install $need
# QuickFIX's own FIX 4.4 dictionary validates what we send (~40 s to fetch once).
# QuickFIX's FIX 4.4 dictionary (from PyPI, as the Python packages below): the FIX
# order-list test needs it, so a failed fetch fails the run.
scripts/quickfix-spec.sh
# PostgreSQL, chromium and the Python clients for the HTTP gateway's tests.
# shellcheck source=../tests/http/setup.sh
source tests/http/setup.sh
# A full run: tests that need a counterpart (network namespaces, ...) fail instead of
# skipping when it is missing (they read CI or PEREGRINE_CI).
export PEREGRINE_CI="${PEREGRINE_CI:-1}"
start=$(date +%s)
export TEST_PROFILE="${TEST_PROFILE:-ci}"
# The simulator's "random" seeds start at a fixed place in CI, so a CI result can be
# reproduced; exploring fresh seeds is `peregrine sim --seeds N` (docs/testing.md).
export PEREGRINE_SIM_FROM="${PEREGRINE_SIM_FROM:-1000000}"
df -h . || true
cargo test --workspace --profile "$TEST_PROFILE"
echo "cargo test: $(( $(date +%s) - start )) s"
df -h . || true
# The binary that build made, kept aside for the suites below that start it
# themselves (the sabotage build next replaces target/$TEST_PROFILE/peregrine).
cp "target/$TEST_PROFILE/peregrine" "target/$TEST_PROFILE/peregrine-tested"
export PEREGRINE_BIN="$PWD/target/$TEST_PROFILE/peregrine-tested"
# The negative controls (a venue that acknowledges before its results are durable):
# that code exists only in a build with the `sabotage` feature, never in what users
# run (issue 27, defect 5). Only the negative-control tests, on that build.
start=$(date +%s)
cargo test --profile "$TEST_PROFILE" -p peregrine-sim --features sabotage --test negative
cargo test --profile "$TEST_PROFILE" -p peregrine --features sabotage --test crash \
  --test exchange_cluster -- sabotage negative_control
echo "negative controls (sabotage build): $(( $(date +%s) - start )) s"
# 10 s per target keeps CI well inside its 90 minutes with 22 targets (each prints its
# inputs and inputs/s; docs/testing.md has what 10M inputs per target would take).
FUZZ_SECONDS="${FUZZ_SECONDS:-10}" scripts/safety-checks.sh all
start=$(date +%s)
scripts/prometheus-smoke.sh
echo "prometheus smoke: $(( $(date +%s) - start )) s"
bash tests/http/run.sh
# The Python package (docs/python.md): its wheel, built in the profile above (reusing
# its artifacts), and its pytest suite (replays, live strategies against `peregrine engine`).
# shellcheck source=../tests/python/setup.sh
source tests/python/setup.sh
bash tests/python/run.sh
