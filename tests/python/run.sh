#!/usr/bin/env bash
# The Python package's tests (pytest) against the release `peregrine` binary. Run
# after `cargo test --workspace --release` with tests/python/setup.sh sourced.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PEREGRINE_BIN="${PEREGRINE_BIN:-$PWD/target/release/peregrine}"
start=$(date +%s)
"${PY_VENV:?source tests/python/setup.sh first}/bin/python" -m pytest -q -p no:cacheprovider tests/python
echo "python package tests: $(( $(date +%s) - start )) s"
