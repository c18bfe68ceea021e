"""Python strategies for the Peregrine trading stack (docs/python.md).

Write a subclass of :class:`Strategy`, then either

* run it live against an order engine: ``peregrine.run(MyStrategy(), name="py")``
  (the engine's config names the strategy and creates its shared-memory rings; the
  strategy runs in this process over them, like a Rust strategy), or
* replay recorded market data through Peregrine's exchange core with it attached:
  ``peregrine.replay(MyStrategy(), "day.itch", symbol="AAPL", plots="out/")``.

The same class runs in both. Callbacks get an :class:`Api` (send, cancel, replace,
read books, the kill switch) and the event, book or trade. Prices and quantities are
integers in the instrument's units, as in the Rust SDK.
"""

import importlib.util
import inspect
import json as _json
import os
import sys

from . import _native
from ._native import Api, Book, Event, Level, Trade

__all__ = [
    "Api",
    "Book",
    "Event",
    "Level",
    "Trade",
    "Report",
    "Strategy",
    "load_strategy",
    "main",
    "replay",
    "run",
]

#: Reject reason of the kill switch (risk code 103).
KILL_SWITCH = 103


class Strategy:
    """The callbacks of a strategy: the same as the Rust SDK's ``Strategy`` trait.

    Override the ones you need; the others are never called. Each gets the
    :class:`Api` first. Callbacks run one at a time and must not block. An exception
    stops the strategy: it is printed, the run ends, and ``run``/``replay`` raise it.
    """

    #: Period of :meth:`on_timer`, ns (live: checked between events; replay: in
    #: simulated time).
    timer_interval_ns = 1_000_000

    def on_start(self, api):
        """Once, after the rings are attached and before any event."""

    def on_ack(self, api, event):
        """The venue accepted an order."""

    def on_reject(self, api, event):
        """The engine or the venue refused an order (``event.reason``)."""

    def on_fill(self, api, event):
        """A fill (``event.price``, ``event.qty``, ``event.leaves``)."""

    def on_cancelled(self, api, event):
        """An order is cancelled (``event.leaves`` is what stays open, usually 0)."""

    def on_cancel_reject(self, api, event):
        """A cancel was refused."""

    def on_replaced(self, api, event):
        """A replace took effect."""

    def on_replace_reject(self, api, event):
        """A replace was refused; the order is unchanged."""

    def on_triggered(self, api, event):
        """A stop's trigger was reached at the venue (event.price: the trigger price,
        event.qty: the last trade price); its fills follow."""

    def on_list_status(self, api, event):
        """An order list's status (event.client_id: its leg 0's client id; event.qty:
        0 accepted, 1 rejected with event.reason, 2 done); see ``Api.send_list``."""

    def on_book(self, api, book):
        """A book the strategy subscribes to changed (:class:`Book`)."""

    def on_trade(self, api, trade):
        """A trade printed on a subscribed book (anyone's)."""

    def on_timer(self, api, now_ns):
        """Every ``timer_interval_ns``."""


def run(strategy, *, name, engine="main", dir=None, mode="batched", wait="spin-yield",
        duration=None, receipts=True, core=None, attach_timeout=5.0):
    """Runs ``strategy`` against a running engine until it stops, ``duration``
    seconds pass, or SIGINT/SIGTERM. ``name`` is the strategy's name in the engine
    config; ``engine`` the engine's name (rings in ``/dev/shm/peregrine-<engine>``) or
    ``dir`` the rings' directory. ``mode``: ``"batched"`` (one interpreter
    acquisition per batch of events) or ``"per_event"``. ``wait``: ``busy-spin``,
    ``spin-yield`` or ``park``. Returns the runner's summary (a dict)."""
    return _native.run(
        strategy,
        name=name,
        engine=engine,
        dir=dir,
        mode=mode,
        wait=wait,
        duration=duration,
        receipts=receipts,
        core=core,
        attach_timeout=attach_timeout,
    )


class Report:
    """What a replay measured: ``data`` is the JSON report as a dict (fills,
    position, PnL, latency segments, checks), ``text`` what ``peregrine replay``
    prints."""

    def __init__(self, json_text, text):
        self.data = _json.loads(json_text)
        self.text = text

    @property
    def strategy(self):
        """The strategy's part (fills, pnl, fills_hash, latency), or None."""
        return self.data.get("strategy")

    @property
    def fills(self):
        """Every fill: dicts with ts, client_id, side, price, qty, leaves, maker."""
        return self.data["fills"]

    @property
    def fills_hash(self):
        """Blake3 of the fills: the same data, settings and seed give the same."""
        s = self.strategy
        return s["fills_hash"] if s else None

    def __str__(self):
        return self.text


def _format_of(path):
    p = str(path).lower()
    if "message" in p and p.endswith((".csv", ".csv.gz")):
        return "lobster"
    if "incremental_book" in p:
        return "tardis"
    if p.endswith((".csv", ".csv.gz")):
        return "tardis"
    if "itch" in p:
        return "itch"
    return "binance"


def replay(strategy, data, *, format=None, symbol=None, book=None, trades=None,
           entry_latency_us=0.0, response_latency_us=0.0, latency_file=None,
           jitter_us=0.0, feed_latency_us=0.0, seed=1, check=False,
           queue_model="risk-averse", sample_ms=1000.0, json=None, plots=None):
    """Replays recorded ``data`` through Peregrine's exchange core in simulated time
    with ``strategy`` attached (or None), and returns a :class:`Report`.

    ``format``: ``itch`` (needs ``symbol``), ``lobster`` (``book``: its order book
    file), ``binance`` or ``tardis`` (``trades``: its trades file); guessed from the
    file name if not given. Latencies in microseconds (``latency_file``: recorded
    ``req_ts,exch_ts,resp_ts`` rows to interpolate instead). ``queue_model`` (L2):
    ``risk-averse``, ``power:N`` or ``log``. ``json``: write the report there;
    ``plots``: write equity, inventory and fills SVGs into that directory."""
    fmt = format or _format_of(data)
    cfg = {
        "format": fmt,
        "file": os.fspath(data),
        "symbol": symbol,
        "book": os.fspath(book) if book else None,
        "trades": os.fspath(trades) if trades else None,
        "entry_latency_ns": int(round(entry_latency_us * 1000)),
        "response_latency_ns": int(round(response_latency_us * 1000)),
        "latency_file": os.fspath(latency_file) if latency_file else None,
        "jitter_ns": int(round(jitter_us * 1000)),
        "feed_latency_ns": int(round(feed_latency_us * 1000)),
        "seed": seed,
        "check": check,
        "queue_model": queue_model,
        "sample_every_ns": max(1, int(round(sample_ms * 1_000_000))),
    }
    return replay_config(strategy, _json.dumps(cfg), json=json, plots=plots)


def replay_config(strategy, config_json, *, json=None, plots=None):
    """:func:`replay` from a replay config as JSON (what ``peregrine replay
    --python`` passes)."""
    text, rendered = _native.replay(
        strategy,
        config_json,
        json=os.fspath(json) if json else None,
        plots=os.fspath(plots) if plots else None,
    )
    return Report(text, rendered)


def load_strategy(spec):
    """An instance of the strategy class in a Python file: ``path.py`` (its one
    :class:`Strategy` subclass) or ``path.py:ClassName``. The class is built with no
    arguments. The file's ``if __name__ == "__main__":`` block does not run."""
    path, _, cls_name = str(spec).partition(":")
    mod_name = "peregrine_user_" + os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[mod_name] = module
    module_spec.loader.exec_module(module)
    if cls_name:
        return getattr(module, cls_name)()
    found = [
        c for _, c in inspect.getmembers(module, inspect.isclass)
        if issubclass(c, Strategy) and c is not Strategy and c.__module__ == mod_name
    ]
    if len(found) != 1:
        names = [c.__name__ for c in found]
        raise ValueError(f"{path}: expected one Strategy subclass, found {names}: name one as {path}:Class")
    return found[0]()


def _die_with_peregrine_up():
    """Started by ``peregrine up`` (``PEREGRINE_UP_PID`` set): SIGTERM when it dies,
    even by ``kill -9``, as its Rust children get (``prctl(PR_SET_PDEATHSIG)``)."""
    parent = os.environ.get("PEREGRINE_UP_PID")
    if not parent or not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    if str(os.getppid()) != parent:  # up was gone before the call above
        sys.exit("peregrine: the `peregrine up` that started this process is gone; exiting")


def main(strategy, argv=None):
    """The command line of a strategy file run as a script: it runs ``strategy``
    live. ``--name`` (default: the file's name), ``--engine``, ``--dir``, ``--mode``,
    ``--wait``, ``--duration``, ``--core``, ``--no-receipts``."""
    import argparse

    default_name = os.path.splitext(os.path.basename(sys.argv[0] or "strategy"))[0]
    p = argparse.ArgumentParser(description="Run this strategy against a Peregrine engine.")
    p.add_argument("--name", default=default_name)
    p.add_argument("--engine", default="main")
    p.add_argument("--dir")
    p.add_argument("--mode", default="batched", choices=["batched", "per_event"])
    p.add_argument("--wait", default="spin-yield")
    p.add_argument("--duration", type=float)
    p.add_argument("--core", type=int)
    p.add_argument("--no-receipts", action="store_true")
    a = p.parse_args(argv)
    _die_with_peregrine_up()
    summary = run(
        strategy,
        name=a.name,
        engine=a.engine,
        dir=a.dir,
        mode=a.mode,
        wait=a.wait,
        duration=a.duration,
        receipts=not a.no_receipts,
        core=a.core,
    )
    print(summary["summary"], end="")
    print(f"python: {summary['python_calls']} callbacks, {summary['gil_acquisitions']} interpreter acquisitions")
    return summary
