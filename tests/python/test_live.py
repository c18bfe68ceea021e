"""Python strategies live against `peregrine engine` over its shared-memory rings:
both callback modes trade, and a strategy that raises is reported and stopped while
the engine and the other strategies go on."""

import pytest

from conftest import EXAMPLE, python_strategy

RAISES = '''
import peregrine

class Raises(peregrine.Strategy):
    def on_book(self, api, book):
        raise RuntimeError("strategy bug")
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
