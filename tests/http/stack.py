"""A real Peregrine stack for the HTTP tests: `peregrine exchange` (with balances),
optionally `peregrine engine` + two strategies trading at the exchange, and
`peregrine gateway http` in front, each its own process on free local ports."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("PEREGRINE_BIN", os.path.join(ROOT, "target", "release", "peregrine"))

KEYS = {
    1: ("test-key-one", "test-secret-one"),
    2: ("test-key-two", "test-secret-two"),
    3: ("test-key-three", "test-secret-three"),
}


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


EXCHANGE = """
{top}
listen = "127.0.0.1:0"
recovery_listen = "127.0.0.1:{recovery}"
wait = "park"
accounts_file = "{accounts_file}"
[market_data]
target = "127.0.0.1:{feed}"
[balances]
enabled = true
{initial}
[[assets]]
id = 1
symbol = "PGN"
decimals = 0
[[assets]]
id = 2
symbol = "USD"
decimals = 2
{more_assets}
[[instruments]]
id = 1
symbol = "PGN-USD"
price_decimals = 2
qty_decimals = 0
tick_size = {tick}
lot_size = 1
min_qty = 1
max_qty = 100000
reference_price = 10000
band = 5000
status = "active"
base = "PGN"
quote = "USD"
{fees}
{more_instruments}
"""

# Stack(fees=True): PGN-USD charges fees (docs/fees.md), paid to account 4.
FEES = """
[instruments.fees]
maker_ppm = 100
taker_ppm = 500
"""

# A second market for the pages' markets list (Stack(second_symbol=True)).
XYZ_ASSET = """
[[assets]]
id = 3
symbol = "XYZ"
decimals = 1
"""
XYZ_INSTRUMENT = """
[[instruments]]
id = 2
symbol = "XYZ-USD"
price_decimals = 1
qty_decimals = 1
tick_size = 1
lot_size = 1
min_qty = 1
max_qty = 100000
reference_price = 200
band = 100
status = "active"
base = "XYZ"
quote = "USD"
"""

GATEWAY = """
listen = "127.0.0.1:0"
[exchange]
config = "{exchange_toml}"
order_entry = "{order_entry}"
keys = "{keys_file}"
[history]
url = "{history}"
[limits]
request_weight_per_minute = {weight}
orders_per_10s = 1000
[ui]
prefill_api_key = "test-key-one"
{engine}
{keys}
"""

ENGINE = """
name = "{name}"
shm_dir = "{shm}"
ring_capacity = 4096
stats_interval_ms = 200
instruments = [1]
[orchestrator]
wait = "park"
[liveness]
heartbeat_timeout_ms = 2000
on_dead = "cancel"
[global_limits]
max_open_orders = 1000
max_order_qty = 1000
[[strategies]]
name = "maker"
[strategies.limits]
max_order_qty = 10
max_position = 50
max_open_orders = 20
price_collar = 1000
[[strategies]]
name = "taker"
[strategies.limits]
max_order_qty = 10
max_position = 50
max_open_orders = 50
[[venues]]
name = "px"
thread = {{ wait = "park" }}
exchange = {{ addr = "{exchange}", account = 4, key_file = "{keys}" }}
"""


class Stack:
    def __init__(self, engine=False, history_url=None, weight=6000, tick=5, second_symbol=False, fees=False):
        self.second_symbol = second_symbol
        self.fees = fees
        self.tick = tick
        self.dir = tempfile.mkdtemp(prefix="peregrine-http-test-")
        self.procs = []
        self.engine = engine
        self.history_url = history_url or f"sqlite://{self.dir}/history.db"
        self.weight = weight

    def _spawn(self, name, args):
        log = open(os.path.join(self.dir, f"{name}.log"), "w")
        p = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=log, text=True, cwd=self.dir)
        self.procs.append((name, p))
        return p

    def _first_line(self, p, prefix, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = p.stdout.readline()
            if line.startswith(prefix):
                return line[len(prefix):].strip()
            if not line and p.poll() is not None:
                break
        raise RuntimeError(f"no {prefix!r} line; logs in {self.dir}")

    def start(self):
        # Protocol v2: account keys (the gateway's) and their stored hashes (the
        # exchange's), from `peregrine keygen`.
        self.keys_file = os.path.join(self.dir, "keys.toml")
        accounts_file = os.path.join(self.dir, "accounts.toml")
        subprocess.run([BIN, "keygen", "--accounts", "1-4", "--keys-out", self.keys_file,
                        "--accounts-out", accounts_file], check=True, capture_output=True)
        initial = "\n".join(
            f'[[balances.initial]]\naccount = {a}\nasset = "{asset}"\namount = "{amt}"'
            for a in range(1, 5)
            for asset, amt in (("USD", "10000000.00"), ("PGN", "100000")) + ((("XYZ", "5000.0"),) if self.second_symbol else ())
        )
        exchange_toml = os.path.join(self.dir, "exchange.toml")
        self.feed_port = free_port(socket.SOCK_DGRAM)
        with open(exchange_toml, "w") as f:
            f.write(EXCHANGE.format(top="fee_account = 4" if self.fees else "", fees=FEES if self.fees else "",
                                    recovery=free_port(), feed=self.feed_port, initial=initial, accounts_file=accounts_file, tick=self.tick,
                                    more_assets=XYZ_ASSET if self.second_symbol else "",
                                    more_instruments=XYZ_INSTRUMENT if self.second_symbol else ""))
        ex = self._spawn("exchange", ["exchange", "--config", exchange_toml])
        self.exchange_addr = self._first_line(ex, "listening on ")
        engine_section = ""
        if self.engine:
            name = f"httptest-{os.getpid()}-{int(time.time() * 1000) % 100000}"
            self.shm = f"/dev/shm/peregrine-{name}"
            engine_toml = os.path.join(self.dir, "engine.toml")
            with open(engine_toml, "w") as f:
                f.write(ENGINE.format(name=name, shm=self.shm, exchange=self.exchange_addr, keys=self.keys_file))
            self._spawn("engine", ["engine", "--config", engine_toml])
            sock = os.path.join(self.shm, "control.sock")
            deadline = time.time() + 20
            while not os.path.exists(sock) and time.time() < deadline:
                time.sleep(0.05)
            for kind, seed in (("maker", 1), ("taker", 2)):
                self._spawn(kind, ["strategy", kind, "--dir", self.shm, "--name", kind, "--venue", "0",
                                   "--instrument", "1", "--mid", "10000", "--seed", str(seed),
                                   "--interval-us", "20000", "--wait", "park"])
            engine_section = f'[engine]\ncontrol_socket = "{sock}"'
        keys = "\n".join(
            f'[[api_keys]]\naccount = {a}\napi_key = "{k}"\nsecret_key = "{s}"\noperator = {"true" if a == 1 else "false"}'
            for a, (k, s) in KEYS.items()
        )
        gateway_toml = os.path.join(self.dir, "gateway.toml")
        with open(gateway_toml, "w") as f:
            f.write(GATEWAY.format(exchange_toml=exchange_toml, order_entry=self.exchange_addr, keys_file=self.keys_file,
                                   history=self.history_url, weight=self.weight, engine=engine_section, keys=keys))
        gw = self._spawn("gateway", ["gateway", "http", "--config", gateway_toml])
        self.base = self._first_line(gw, "http gateway on ")
        self.host = self.base[len("http://"):]
        self.wait_ready()
        return self

    def status(self):
        with urllib.request.urlopen(self.base + "/peregrine/status", timeout=5) as r:
            return json.load(r)

    def wait_ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                s = self.status()
                if all(x["up"] for x in s["sessions"]) and all(f["synced"] for f in s["feed"]):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"gateway not ready; logs in {self.dir}")

    def log(self, name):
        with open(os.path.join(self.dir, f"{name}.log")) as f:
            return f.read()

    def stop(self):
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for _, p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.engine:
            shutil.rmtree(self.shm, ignore_errors=True)
        if not os.environ.get("PEREGRINE_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)
