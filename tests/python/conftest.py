"""Fixtures of the Python package's tests: the `peregrine` binary, synthetic days,
and an order engine with a simulated market (its shared memory in a private
directory under /dev/shm, removed afterwards)."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("PEREGRINE_BIN", ROOT / "target" / "release" / "peregrine"))
EXAMPLE = ROOT / "crates" / "peregrine-py" / "python" / "peregrine" / "examples" / "joiner.py"


def peregrine(*args, check=True, timeout=120, **kw):
    """Runs the peregrine binary."""
    return subprocess.run([str(BIN), *map(str, args)], check=check, timeout=timeout,
                          capture_output=True, text=True, **kw)


@pytest.fixture(scope="session")
def itch_day(tmp_path_factory):
    """A synthetic ITCH 5.0 day of 30,000 messages (symbol SYNTH, seed 3)."""
    path = tmp_path_factory.mktemp("data") / "day.itch"
    peregrine("replay", "synth", "--format", "itch", "--events", 30000, "--seed", 3, "--out", path)
    return path


ENGINE_CONFIG = """
name = "{name}"
shm_dir = "{shm}"
stats_interval_ms = 200
instruments = [1]

[orchestrator]
wait = "park"

[liveness]
heartbeat_timeout_ms = 1000

[market_data]
thread = {{ wait = "park", idle_sleep_us = 500 }}

{strategies}

[[venues]]
name = "sim"
thread = {{ wait = "park", idle_sleep_us = 500 }}
sim = {{ delay_lo_ns = 20000, delay_hi_ns = 100000, model = {{ kind = "market" }}, seed = 7 }}
"""

STRATEGY = """
[[strategies]]
name = "{name}"
subscribe = [{{ venue = "sim", instrument = 1 }}]
[strategies.limits]
max_order_qty = 10
max_position = 40
"""


class Engine:
    """A running `peregrine engine`."""

    def __init__(self, strategies):
        self.shm = Path(tempfile.mkdtemp(prefix="peregrine-pytest-", dir="/dev/shm"))
        self.name = self.shm.name
        cfg = ENGINE_CONFIG.format(
            name=self.name, shm=self.shm,
            strategies="".join(STRATEGY.format(name=s) for s in strategies))
        self.config = self.shm.parent / f"{self.name}.toml"
        self.config.write_text(cfg)
        self.log = open(self.shm.parent / f"{self.name}.log", "w+")
        self.proc = subprocess.Popen([str(BIN), "engine", "--config", str(self.config)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while not (self.shm / "control.sock").exists():
            assert self.proc.poll() is None, self.text()
            assert time.time() < deadline, "the engine did not start"
            time.sleep(0.05)

    def alive(self):
        return self.proc.poll() is None

    def stats(self):
        return peregrine("engine", "--dir", self.shm, "stats", timeout=20).stdout

    def text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.alive():
            peregrine("engine", "--dir", self.shm, "shutdown", check=False, timeout=20)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.shm, ignore_errors=True)
        for p in (self.config, Path(self.log.name)):
            p.unlink(missing_ok=True)


@pytest.fixture
def engine_factory():
    started = []

    def start(strategies):
        e = Engine(strategies)
        started.append(e)
        return e

    yield start
    for e in started:
        e.stop()


def python_strategy(path, name, engine, *extra, duration=4):
    """A Python strategy process on `engine` (its stdout and stderr captured)."""
    return subprocess.Popen(
        [sys.executable, "-m", "peregrine", "run", str(path), "--name", name,
         "--dir", str(engine.shm), "--duration", str(duration), "--wait", "park", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
