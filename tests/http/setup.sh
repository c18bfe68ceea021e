# Sourced by .ci/run before the Rust tests: installs and starts what the HTTP
# gateway's tests talk to (docs/http.md, "Tests"). Idempotent; needs root for apt.
#   - PostgreSQL (Debian), started with pg_ctlcluster; exports PEREGRINE_TEST_POSTGRES
#   - Chromium (Debian) for Playwright; never a browser download
#   - a Python venv with python-binance, ccxt (and ccxt.pro), freqtrade, schemathesis,
#     pytest, Playwright (PyPI)
http_setup_start=$(date +%s)
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  need=""
  command -v pg_ctlcluster >/dev/null || need="$need postgresql"
  command -v chromium >/dev/null || need="$need chromium"
  if [ -n "$need" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
  fi
fi
if command -v pg_ctlcluster >/dev/null; then
  pg_version=$(ls /etc/postgresql | sort -n | tail -1)
  pg_ctlcluster "$pg_version" main start 2>/dev/null || true
  su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'peregrine'\"" >/dev/null
  export PEREGRINE_TEST_POSTGRES="postgres://postgres:peregrine@127.0.0.1:5432/postgres"
fi
HTTP_VENV="${HTTP_VENV:-$PWD/target/http-venv}"
if [ ! -x "$HTTP_VENV/bin/pytest" ]; then
  python3 -m venv "$HTTP_VENV"
fi
pip_start=$(date +%s)
"$HTTP_VENV/bin/pip" install -q -r tests/http/requirements.txt
echo "http test venv (pip): $(( $(date +%s) - pip_start )) s"
export HTTP_VENV
echo "http test setup: $(( $(date +%s) - http_setup_start )) s"
