#!/usr/bin/env bash
# The Python package's tests (pytest) against the `peregrine` binary of $PEREGRINE_BIN
# (test-all.sh exports the one its `cargo test --workspace --profile ci` built). Run
# after it with tests/python/setup.sh sourced.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PEREGRINE_BIN="${PEREGRINE_BIN:-$PWD/target/${TEST_PROFILE:-ci}/peregrine}"
start=$(date +%s)
"${PY_VENV:?source tests/python/setup.sh first}/bin/python" -m pytest -q -p no:cacheprovider tests/python
echo "python package tests: $(( $(date +%s) - start )) s"
