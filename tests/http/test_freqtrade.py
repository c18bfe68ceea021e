"""freqtrade (PyPI) against the gateway, configured exactly as docs/http.md says
(`freqtrade_config`), with its default WebSocket mode on: a short run in dry-run
mode and one in live mode (real orders on the exchange, through the gateway), each
with a strategy that enters and exits at once (tests/http/freqtrade/). Asserted
on freqtrade's own trade database and on the gateway's order history, and on a log
free of errors."""

import json
import os
import sqlite3
import subprocess
import time

import pytest

from stack import KEYS, Stack

HERE = os.path.dirname(os.path.abspath(__file__))


def freqtrade_bin():
    import sys
    return os.path.join(os.path.dirname(sys.executable), "freqtrade")


def freqtrade_config(base, key, secret, dry_run):
    """The configuration docs/http.md gives for freqtrade (keep the two in step)."""
    ws = base.replace("http://", "ws://")
    ccxt = {
        "options": {"fetchCurrencies": False, "fetchMargins": False, "fetchMarkets": {"types": ["spot"]}},
        "urls": {"api": {"public": f"{base}/api/v3", "private": f"{base}/api/v3",
                         "ws": {"spot": f"{ws}/ws", "ws-api": {"spot": f"{ws}/ws-api/v3"}}}},
    }
    return {
        "max_open_trades": 1,
        "stake_currency": "USD",
        "stake_amount": 250,
        "dry_run": dry_run,
        "dry_run_wallet": 100000,
        "trading_mode": "spot",
        "timeframe": "1m",
        "exchange": {
            "name": "binance",
            "key": key,
            "secret": secret,
            "ccxt_config": ccxt,
            "ccxt_async_config": ccxt,
            "pair_whitelist": ["PGN/USD"],
            "enable_ws": True,
        },
        "pairlists": [{"method": "StaticPairList"}],
        "entry_pricing": {"price_side": "other", "use_order_book": True, "order_book_top": 1},
        "exit_pricing": {"price_side": "other", "use_order_book": True, "order_book_top": 1},
        "unfilledtimeout": {"entry": 10, "exit": 10, "unit": "seconds"},
        "internals": {"process_throttle_secs": 1},
        "initial_state": "running",
        "bot_name": "peregrine-probe",
    }


@pytest.fixture(scope="module")
def stack():
    # The order engine's maker and taker keep a market going (candles, a book).
    s = Stack(engine=True, tick=1).start()
    yield s
    s.stop()


def run_bot(stack, dry_run, account):
    d = os.path.join(stack.dir, "freqtrade-" + ("dry" if dry_run else "live"))
    os.makedirs(d, exist_ok=True)
    cfg = os.path.join(d, "config.json")
    with open(cfg, "w") as f:
        json.dump(freqtrade_config(stack.base, *KEYS[account], dry_run), f)
    db = os.path.join(d, "trades.sqlite")
    log = os.path.join(d, "freqtrade.log")
    out = open(os.path.join(d, "stdout.txt"), "w")
    p = subprocess.Popen(
        [freqtrade_bin(), "trade", "--config", cfg, "--strategy", "PeregrineProbe",
         "--strategy-path", os.path.join(HERE, "freqtrade"), "--userdir", d, "--db-url", f"sqlite:///{db}",
         "--logfile", log],
        stdout=out, stderr=subprocess.STDOUT, cwd=d)
    closed = []
    try:
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None:
            time.sleep(1)
            if not os.path.exists(db):
                continue
            try:
                with sqlite3.connect(db) as c:
                    closed = c.execute(
                        "SELECT pair, open_rate, close_rate, amount, exit_reason FROM trades WHERE is_open = 0").fetchall()
            except sqlite3.Error:
                continue
            if closed:
                break
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    out.close()
    text = ""
    for path in (os.path.join(d, "stdout.txt"), log):
        if os.path.exists(path):
            with open(path) as f:
                text += f.read()
    return closed, text


def check(closed, log):
    assert closed, "no trade entered and exited; freqtrade's log:\n" + log[-4000:]
    pair, open_rate, close_rate, amount, reason = closed[0]
    assert pair == "PGN/USD" and reason == "probe_done"
    # Prices from the exchange's book: inside the instrument's band, on its tick.
    assert 50 <= open_rate <= 150 and 50 <= close_rate <= 150
    assert amount >= 1
    for bad in ("Invalid stream name", "-1121", "-1020", "-1000", "Traceback"):
        assert bad not in log, f"{bad!r} in freqtrade's log:\n" + log[-4000:]
    # The WebSocket mode ran (ccxt.pro watching the candles).
    assert "freqtrade.exchange.exchange_ws" in log, log[-2000:]


def test_freqtrade_dry_run(stack):
    closed, log = run_bot(stack, True, 2)
    check(closed, log)


def test_freqtrade_live(stack):
    closed, log = run_bot(stack, False, 3)
    check(closed, log)
    # The bot's orders went through the gateway to the exchange: account 3's history
    # holds a filled buy and a filled sell.
    from binance.client import Client
    Client.API_URL = f"{stack.base}/api"
    c = Client(*KEYS[3])
    orders = [o for o in c.get_all_orders(symbol="PGN-USD") if o["status"] == "FILLED"]
    assert {o["side"] for o in orders} == {"BUY", "SELL"}, orders
