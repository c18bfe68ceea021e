"""ccxt (PyPI) with its `binance` class pointed at the gateway, configured exactly as
docs/http.md says (`ccxt_config`): every REST call a bot makes, asserted on what it
returns."""

import time

import ccxt
import pytest

from stack import KEYS

SYM = "PGN/USD"


def ccxt_config(base, key, secret):
    """The configuration docs/http.md gives for ccxt (keep the two in step)."""
    ex = ccxt.binance({
        "apiKey": key,
        "secret": secret,
        "options": {"fetchCurrencies": False, "fetchMargins": False, "fetchMarkets": {"types": ["spot"]}},
    })
    ex.urls["api"]["public"] = ex.urls["api"]["private"] = f"{base}/api/v3"
    return ex


@pytest.fixture(scope="module")
def accounts(stack):
    out = {}
    for a in (1, 2):
        e = ccxt_config(stack.base, *KEYS[a])
        e.load_markets()
        out[a] = e
    return out


def eventually(fn, timeout=5.0):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(0.05)


def test_markets_book_orders_balance(accounts):
    ex = accounts[1]
    m = ex.market(SYM)
    assert m["id"] == "PGN-USD" and m["spot"] and m["active"]
    assert m["precision"]["price"] == 0.05 and m["limits"]["price"] == {"min": 50.0, "max": 150.0}
    assert m["limits"]["amount"]["min"] == 1.0
    assert ex.fetch_time() > 0
    o = ex.create_limit_sell_order(SYM, 2, 147.05)
    assert o["status"] == "open" and o["price"] == 147.05 and o["amount"] == 2.0
    assert o["id"] in [x["id"] for x in ex.fetch_open_orders(SYM)]
    assert ex.fetch_order(o["id"], SYM)["status"] == "open"
    book = eventually(lambda: (b := ex.fetch_order_book(SYM)) and [147.05, 2.0] in b["asks"] and b)
    assert book and book["nonce"] > 0
    assert ex.cancel_order(o["id"], SYM)["status"] == "canceled"
    bal = ex.fetch_balance()
    assert bal["USD"]["total"] == 10_000_000.0 and bal["PGN"]["free"] == 100_000.0


def test_edit_order_is_a_cancel_replace(accounts):
    ex = accounts[1]
    o = ex.create_limit_buy_order(SYM, 3, 60.05)
    edited = ex.edit_order(o["id"], SYM, "limit", "buy", 4, 60.10)
    assert edited["id"] != o["id"] and edited["price"] == 60.10 and edited["amount"] == 4.0
    assert edited["status"] == "open"
    assert ex.fetch_order(o["id"], SYM)["status"] == "canceled"
    assert [x["id"] for x in ex.fetch_open_orders(SYM)] == [edited["id"]]
    # The cancel fails (already cancelled): nothing new is placed (STOP_ON_FAILURE).
    with pytest.raises(ccxt.BaseError) as e:
        ex.edit_order(o["id"], SYM, "limit", "buy", 4, 60.15)
    assert "-2022" in str(e.value) or "cancel-replace" in str(e.value).lower()
    assert [x["id"] for x in ex.fetch_open_orders(SYM)] == [edited["id"]]
    cancelled = ex.cancel_all_orders(SYM)
    assert [c["id"] for c in cancelled] == [edited["id"]]
    assert ex.fetch_open_orders(SYM) == []


def test_a_trade_reaches_every_view(accounts):
    maker, taker = accounts[1], accounts[2]
    sell = maker.create_limit_sell_order(SYM, 5, 100.00)
    # A buy by cost is priced from the gateway's book, which follows the feed.
    assert eventually(lambda: [100.0, 5.0] in taker.fetch_order_book(SYM)["asks"])
    # Market buy by cost (quoteOrderQty): 300.00 buys 3 at 100.00.
    buy = taker.create_market_buy_order_with_cost(SYM, 300)
    assert buy["status"] == "closed" and buy["filled"] == 3.0 and buy["cost"] == 300.0
    assert buy["info"]["origQuoteOrderQty"] == "300.00"
    buy2 = taker.create_market_buy_order(SYM, 1)
    assert buy2["filled"] == 1.0 and buy2["average"] == 100.0
    assert maker.fetch_order(sell["id"], SYM)["filled"] == 4.0

    trades = eventually(lambda: (t := taker.fetch_trades(SYM)) and len(t) >= 2 and t)
    assert [(t["price"], t["amount"], t["side"]) for t in trades[-2:]] == [(100.0, 3.0, "buy"), (100.0, 1.0, "buy")]
    mine = taker.fetch_my_trades(SYM)
    assert {t["order"] for t in mine} >= {buy["id"], buy2["id"]}
    assert all(t["takerOrMaker"] == "taker" for t in mine)
    theirs = maker.fetch_my_trades(SYM)
    assert sum(t["amount"] for t in theirs if t["order"] == sell["id"]) == 4.0

    ticker = eventually(lambda: (t := taker.fetch_ticker(SYM)) and t["last"] == 100.0 and t)
    assert ticker["baseVolume"] >= 4.0 and ticker["high"] >= 100.0
    assert taker.fetch_tickers([SYM])[SYM]["last"] == 100.0
    ohlcv = eventually(lambda: taker.fetch_ohlcv(SYM, "1m", limit=5))
    assert ohlcv[-1][4] == 100.0 and ohlcv[-1][5] >= 4.0
    ba = taker.fetch_bids_asks([SYM])[SYM]
    assert ba["ask"] == 100.0
    closed = taker.fetch_closed_orders(SYM)
    assert {o["id"] for o in closed} >= {buy["id"], buy2["id"]}
    everything = maker.fetch_orders(SYM)
    assert sell["id"] in [o["id"] for o in everything]
    maker.cancel_order(sell["id"], SYM)


def test_errors_map_to_ccxt_exceptions(accounts):
    ex = accounts[1]
    with pytest.raises(ccxt.InvalidOrder):
        ex.create_limit_sell_order(SYM, 2, 150.05)  # outside the band
    with pytest.raises(ccxt.OrderNotFound):
        ex.fetch_order("999999999", SYM)
    with pytest.raises(ccxt.OrderNotFound):
        ex.cancel_order("999999999", SYM)
    bad = ccxt_config(ex.urls["api"]["public"][: -len("/api/v3")], KEYS[1][0], "wrong-secret")
    bad.markets, bad.markets_by_id, bad.symbols = ex.markets, ex.markets_by_id, ex.symbols
    with pytest.raises(ccxt.AuthenticationError):
        bad.fetch_balance()
