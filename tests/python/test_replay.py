"""A Python strategy replayed through the exchange core (peregrine.replay and
`peregrine replay --python`): fills, determinism, plots, and a strategy that raises."""

import json
import sys

import pytest

import peregrine
from conftest import EXAMPLE, ROOT, peregrine as run_bin


class Joiner(peregrine.Strategy):
    """Joins the touch with 100 shares per side; counts its own fills."""

    def on_start(self, api):
        self.orders = {}
        self.fills = 0
        self.position = 0
        self.trades = 0

    def on_book(self, api, book):
        for side, best in (("buy", book.best_bid), ("sell", book.best_ask)):
            if best is not None and side not in self.orders:
                cid = api.send(book.venue, book.instrument, side, best.price, 100, type="post_only")
                assert cid is not None
                self.orders[side] = cid

    def on_fill(self, api, ev):
        self.fills += 1
        self.position += ev.qty if ev.side == "buy" else -ev.qty
        assert api.now_ns() >= 34_200_000_000_000, "simulated time, since midnight"
        if ev.leaves == 0:
            self.orders = {s: c for s, c in self.orders.items() if c != ev.client_id}

    def on_reject(self, api, ev):
        self.orders = {s: c for s, c in self.orders.items() if c != ev.client_id}

    def on_trade(self, api, trade):
        self.trades += 1


def test_replay_fills_and_determinism(itch_day, tmp_path):
    runs = []
    for _ in range(2):
        s = Joiner()
        r = peregrine.replay(s, itch_day, symbol="SYNTH", entry_latency_us=40,
                             response_latency_us=30, feed_latency_us=20)
        runs.append((s, r))
    (s, r), (_, r2) = runs
    assert s.fills > 10
    assert r.strategy["fills"] == s.fills == len(r.fills)
    assert r.strategy["trades_seen"] == s.trades > 0
    net = sum(f["qty"] if f["side"] == "Buy" else -f["qty"] for f in r.fills)
    assert net == s.position
    assert r.fills_hash == r2.fills_hash, "same data, settings and seed"
    assert "fills hash" in r.text


def test_cli_replays_a_python_file_with_plots(itch_day, tmp_path):
    # --python-bin: this interpreter (the venv's), not whichever python3 is on PATH.
    out = run_bin("replay", "itch", itch_day, "--symbol", "SYNTH", "--python", EXAMPLE,
                  "--python-bin", sys.executable, "--entry-latency-us", 50, "--json", tmp_path / "r.json", "--plots", tmp_path)
    assert "strategy:" in out.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["strategy"]["fills"] > 0
    for name in ("equity.svg", "inventory.svg", "fills.svg"):
        svg = (tmp_path / name).read_text()
        assert svg.startswith("<svg") and "polyline" in svg


class Raises(peregrine.Strategy):
    def on_book(self, api, book):
        if book.seq > 50:
            raise ValueError("boom at version %d" % book.seq)


def test_a_strategy_that_raises_stops_the_replay_with_its_exception(itch_day):
    with pytest.raises(ValueError, match="boom at version 51"):
        peregrine.replay(Raises(), itch_day, symbol="SYNTH")


def test_api_outside_a_callback_is_refused(itch_day):
    kept = []

    class Keeps(peregrine.Strategy):
        def on_start(self, api):
            kept.append(api)

    peregrine.replay(Keeps(), itch_day, symbol="SYNTH")
    with pytest.raises(RuntimeError, match="only inside a callback"):
        kept[0].send(0, 1, "buy", 1, 1)


def test_bad_orders_are_value_errors(itch_day):
    seen = []

    class Bad(peregrine.Strategy):
        def on_start(self, api):
            for kw in ({"side": "up"}, {"type": "stop"}, {"tif": "day"}, {"stp": "x"}):
                args = {"side": "buy", **kw}
                side = args.pop("side")
                try:
                    api.send(0, 1, side, 1_500_000, 1, **args)
                except ValueError as e:
                    seen.append(str(e))

    peregrine.replay(Bad(), itch_day, symbol="SYNTH")
    assert len(seen) == 4


def test_load_strategy_finds_the_one_subclass():
    s = peregrine.load_strategy(EXAMPLE)
    assert type(s).__name__ == "Joiner" and isinstance(s, peregrine.Strategy)
    with pytest.raises(AttributeError):
        peregrine.load_strategy(f"{EXAMPLE}:Missing")


DOCS_EXAMPLE = '''
import peregrine

class Joiner(peregrine.Strategy):
    """Joins the best bid with one lot; joins again when filled."""
    def on_start(self, api):
        self.order = None
    def on_book(self, api, book):
        if self.order is None and book.best_bid:
            self.order = api.send(book.venue, book.instrument, "buy", book.best_bid.price, 1, type="post_only")
    def on_fill(self, api, ev):
        if ev.leaves == 0: self.order = None
    on_cancelled = on_reject = on_fill

if __name__ == "__main__":
    peregrine.main(Joiner())
'''


def test_the_ten_line_strategy_of_docs_python_md_replays(itch_day, tmp_path):
    path = tmp_path / "joiner.py"
    path.write_text(DOCS_EXAMPLE)
    docs = (ROOT / "docs" / "python.md").read_text()
    assert DOCS_EXAMPLE.strip() in docs, "the test runs the example docs/python.md shows"
    r = peregrine.replay(peregrine.load_strategy(path), itch_day, symbol="SYNTH",
                         entry_latency_us=50, response_latency_us=50, plots=tmp_path / "out")
    assert r.strategy["fills"] > 0
    assert (tmp_path / "out" / "equity.svg").exists()


def test_binance_sample_under_queue_models():
    sample = ROOT / "samples" / "binance-ethusdt-20240808-60s.gz"
    ahead = {}
    for model in ("risk-averse", "power:2"):
        s = Joiner()
        r = peregrine.replay(s, sample, queue_model=model, entry_latency_us=2000,
                             response_latency_us=2000, feed_latency_us=1000)
        assert r.data["l2"]["trades"] > 500
        assert s.fills > 0
        ahead[model] = r.data["l2"]["removed_ahead"]
    # The model decides how much of the cancelled quantity was ahead of the order.
    assert ahead["risk-averse"] < ahead["power:2"]
