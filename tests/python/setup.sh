# Sourced by scripts/test-all.sh after its `cargo test --workspace`: builds the
# `peregrine` Python package's wheel (maturin, in $TEST_PROFILE, `ci` by default: it
# reuses the artifacts of test-all.sh's `cargo test --workspace --profile ci`) and installs it with pytest into a
# virtual environment.
# Exports PY_VENV. Idempotent.
py_setup_start=$(date +%s)
PY_VENV="${PY_VENV:-$PWD/target/py-venv}"
if [ ! -x "$PY_VENV/bin/pytest" ]; then
  python3 -m venv "$PY_VENV"
fi
"$PY_VENV/bin/pip" install -q -r tests/python/requirements.txt
rm -f target/wheels/peregrine-*.whl
"$PY_VENV/bin/maturin" build --profile "${TEST_PROFILE:-ci}" -m crates/peregrine-py/Cargo.toml --interpreter "$PY_VENV/bin/python"
"$PY_VENV/bin/pip" install -q --force-reinstall --no-deps target/wheels/peregrine-*.whl
export PY_VENV
echo "python package setup (venv, wheel build, install): $(( $(date +%s) - py_setup_start )) s"
