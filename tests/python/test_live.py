"""Python strategies live against `peregrine engine` over its shared-memory rings:
both callback modes trade, and a strategy that raises is reported and stopped while
the engine and the other strategies go on; `peregrine up --python` runs one beside the
Rust strategies."""

import sys

import pytest

from conftest import EXAMPLE, peregrine as run_bin, python_strategy

RAISES = '''
import peregrine

class Raises(peregrine.Strategy):
    def on_book(self, api, book):
        raise RuntimeError("strategy bug")
'''

LIST = '''
import peregrine

class Lists(peregrine.Strategy):
    def on_start(self, api):
        take = api.order(0, 1, "sell", 10100, 1)
        stop = api.order(0, 1, "sell", 9700, 1, stop_price=9800)
        try:
            api.send_list("oco", [take])
        except ValueError as e:
            print("VALUE_ERROR", e, flush=True)
        print("IDS", api.send_list("oco", [take, stop]), flush=True)

    def on_reject(self, api, event):
        print("REJECT", event.client_id, event.reason, flush=True)
'''


@pytest.mark.parametrize("mode", ["batched", "per_event"])
def test_python_strategy_trades_live(engine_factory, mode):
    engine = engine_factory(["py"])
    p = python_strategy(EXAMPLE, "py", engine, "--mode", mode, duration=3)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "python:" in out and "callbacks" in out
    acks = int(out.split("events: ack ")[1].split()[0])
    assert acks > 0, out
    assert engine.alive()


def test_a_raising_strategy_is_stopped_and_the_engine_goes_on(engine_factory, tmp_path):
    engine = engine_factory(["bad", "good"])
    bad_file = tmp_path / "bad.py"
    bad_file.write_text(RAISES)
    good = python_strategy(EXAMPLE, "good", engine, duration=6)
    bad = python_strategy(bad_file, "bad", engine, duration=6)
    out, err = bad.communicate(timeout=60)
    assert bad.returncode != 0
    assert "RuntimeError: strategy bug" in err and "Traceback" in err
    assert engine.alive()
    gout, gerr = good.communicate(timeout=60)
    assert good.returncode == 0, gerr
    assert int(gout.split("events: ack ")[1].split()[0]) > 0
    assert engine.alive()
    assert "bad" in engine.stats()


def test_up_runs_the_python_strategy_beside_the_rust_ones(tmp_path):
    """`peregrine up --python FILE`: the file trades on the simulated venue as strategy
    `py`, the summary shows it like any other, and it is stopped cleanly at the end."""
    out = run_bin("up", "--python", EXAMPLE, "--python-bin", sys.executable,
                  "--duration", 3, "--quiet", "--plain", "--dir", tmp_path / "run",
                  timeout=180).stdout
    rows = [l.split() for l in out.splitlines() if l.startswith("py ")]
    assert rows, out
    # strategy venue state open net fills ...
    name, venue, state, _open, _net, fills = rows[0][:6]
    assert (venue, state) == ("sim", "alive"), out
    assert int(fills.replace(",", "")) > 0, out
    assert any(l.split()[:3] == ["py", "exit", "0"] for l in out.splitlines()), out
    assert "no child process left" in out, out


def test_an_order_list_from_python_is_refused_by_a_venue_without_lists(engine_factory, tmp_path):
    """`Api.order` + `Api.send_list`: an OCO to the simulated venue (no lists) is
    refused leg by leg (reason 209), never sent as two orders; a list with the wrong
    number of legs is a ValueError, nothing sent."""
    engine = engine_factory(["lists"])
    path = tmp_path / "lists.py"
    path.write_text(LIST)
    p = python_strategy(path, "lists", engine, duration=2)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "VALUE_ERROR" in out, out
    ids = [int(x) for x in out.split("IDS [")[1].split("]")[0].split(",")]
    assert len(ids) == 2 and ids[1] == ids[0] + 1, out
    for i in ids:
        assert f"REJECT {i} 209" in out, out
    assert engine.alive()
