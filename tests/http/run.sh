#!/usr/bin/env bash
# The HTTP gateway against real clients: python-binance, ccxt and ccxt.pro, freqtrade,
# schemathesis, and Debian's
# chromium driven by Playwright. Run after `cargo test --workspace --release` (which
# builds target/release/peregrine) with tests/http/setup.sh sourced.
set -euo pipefail
cd "$(dirname "$0")"
export PEREGRINE_BIN="${PEREGRINE_BIN:-$PWD/../../target/release/peregrine}"
start=$(date +%s)
"${HTTP_VENV:?source tests/http/setup.sh first}/bin/python" -m pytest -q -p no:warnings -p no:cacheprovider .
echo "http client tests: $(( $(date +%s) - start )) s"
