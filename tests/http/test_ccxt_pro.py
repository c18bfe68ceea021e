"""ccxt.pro (part of ccxt on PyPI), its `binance` class configured as docs/http.md
says (`pro_config`): the public watchers, the private ones (user data through the
WebSocket API) and order entry over the WebSocket API, asserted on results."""

import asyncio

import ccxt.pro as ccxtpro
import pytest

from stack import KEYS

SYM = "PGN/USD"
WAIT = 15


def pro_config(base, key, secret):
    """The configuration docs/http.md gives for ccxt.pro (keep the two in step)."""
    ex = ccxtpro.binance({
        "apiKey": key,
        "secret": secret,
        "options": {"fetchCurrencies": False, "fetchMargins": False, "fetchMarkets": {"types": ["spot"]}},
    })
    ws = base.replace("http://", "ws://")
    ex.urls["api"]["public"] = ex.urls["api"]["private"] = f"{base}/api/v3"
    ex.urls["api"]["ws"]["spot"] = f"{ws}/ws"
    ex.urls["api"]["ws"]["ws-api"]["spot"] = f"{ws}/ws-api/v3"
    return ex


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


async def until(fn, pred):
    """Calls the watcher `fn` until its result satisfies `pred` (each call bounded)."""
    while True:
        v = await asyncio.wait_for(fn(), WAIT)
        if pred(v):
            return v


def test_public_watchers(stack):
    async def go():
        a = pro_config(stack.base, *KEYS[1])
        b = pro_config(stack.base, *KEYS[2])
        try:
            await a.load_markets()
            await b.load_markets()
            # A quiet market: the state streams still answer at once.
            book = await asyncio.wait_for(a.watch_order_book(SYM), WAIT)
            assert book["symbol"] == SYM
            ba = await asyncio.wait_for(a.watch_bids_asks([SYM]), WAIT)
            assert SYM in ba
            t0 = await asyncio.wait_for(a.watch_ticker(SYM), WAIT)
            assert t0["symbol"] == SYM

            # A watcher answers with the next update after the call: start them first.
            book_task = asyncio.ensure_future(until(lambda: a.watch_order_book(SYM), lambda o: [101.0, 5.0] in o["asks"]))
            ba_task = asyncio.ensure_future(until(lambda: a.watch_bids_asks([SYM]), lambda t: t[SYM]["ask"] == 101.0))
            await asyncio.sleep(0.5)
            sell = await a.create_order_ws(SYM, "limit", "sell", 5, 101.0)
            assert sell["status"] == "open" and sell["price"] == 101.0
            book = await book_task
            assert book["nonce"] > 0
            ba = await ba_task
            assert ba[SYM]["askVolume"] == 5.0

            trades_task = asyncio.ensure_future(until(lambda: a.watch_trades(SYM), lambda ts: any(t["amount"] == 2.0 for t in ts)))
            ohlcv_task = asyncio.ensure_future(until(lambda: a.watch_ohlcv(SYM, "1m"), lambda c: c and c[-1][4] == 101.0))
            await asyncio.sleep(0.5)
            buy = await b.create_order_ws(SYM, "limit", "buy", 2, 101.0)
            assert buy["status"] == "closed" and buy["filled"] == 2.0
            trades = await trades_task
            assert [t for t in trades if t["amount"] == 2.0][-1]["price"] == 101.0
            candles = await ohlcv_task
            assert candles[-1][5] >= 2.0
            ticker = await until(lambda: a.watch_ticker(SYM), lambda t: t["last"] == 101.0)
            assert ticker["baseVolume"] >= 2.0 and ticker["high"] == 101.0, ticker["info"]
            tickers = await until(lambda: a.watch_tickers([SYM]), lambda t: SYM in t and t[SYM]["last"] == 101.0)
            assert tickers[SYM]["close"] == 101.0
            await a.cancel_order_ws(sell["id"], SYM)
        finally:
            await a.close()
            await b.close()

    run(go())


def test_private_watchers_and_order_entry(stack):
    async def go():
        a = pro_config(stack.base, *KEYS[1])
        b = pro_config(stack.base, *KEYS[3])
        try:
            await a.load_markets()
            await b.load_markets()
            pgn_before = (await a.fetch_balance())["PGN"]["total"]
            orders_task = asyncio.ensure_future(until(lambda: a.watch_orders(SYM), lambda os: any(o["status"] == "closed" for o in os)))
            mine_task = asyncio.ensure_future(until(lambda: a.watch_my_trades(SYM), lambda ts: len(ts) > 0))
            bal_task = asyncio.ensure_future(asyncio.wait_for(a.watch_balance(), 30))
            await asyncio.sleep(1.0)

            o = await a.create_order_ws(SYM, "limit", "sell", 3, 120.0)
            assert o["status"] == "open" and o["amount"] == 3.0
            got = await a.fetch_order_ws(o["id"], SYM)
            assert got["id"] == o["id"] and got["status"] == "open"
            opened = await a.fetch_open_orders_ws(SYM)
            assert o["id"] in [x["id"] for x in opened]
            edited = await a.edit_order_ws(o["id"], SYM, "limit", "sell", 2, 119.0)
            assert edited["id"] != o["id"] and edited["price"] == 119.0 and edited["amount"] == 2.0
            assert (await a.fetch_order_ws(o["id"], SYM))["status"] == "canceled"
            cancelled = await a.cancel_order_ws(edited["id"], SYM)
            assert cancelled["status"] == "canceled"

            fill = await a.create_order_ws(SYM, "limit", "sell", 1, 100.5)
            await b.create_order_ws(SYM, "limit", "buy", 1, 100.5)
            orders = await orders_task
            assert fill["id"] in [x["id"] for x in orders if x["status"] == "closed"]
            trades = await mine_task
            assert trades[-1]["order"] == fill["id"] and trades[-1]["price"] == 100.5
            bal = await bal_task
            assert "PGN" in bal and "USD" in bal, bal
            # account.status answers as Binance does; ccxt 4.5.90 reads a spot answer
            # as a futures one (no currencies), so the raw answer is checked.
            snapshot = await a.fetch_balance_ws()
            pgn = [x for x in snapshot["info"]["balances"] if x["asset"] == "PGN"][0]
            assert int(pgn["free"]) + int(pgn["locked"]) == pgn_before - 1

            rest = await a.create_order_ws(SYM, "limit", "buy", 1, 60.0)
            gone = await a.cancel_all_orders_ws(SYM)
            assert rest["id"] in [x["id"] for x in gone] or gone
            assert await a.fetch_open_orders_ws(SYM) == []
        finally:
            await a.close()
            await b.close()

    run(go())


def test_websocket_api_errors_are_binance_errors(stack):
    async def go():
        a = pro_config(stack.base, *KEYS[1])
        try:
            await a.load_markets()
            with pytest.raises((ccxtpro.InvalidOrder, ccxtpro.BadRequest)) as e:
                await a.create_order_ws(SYM, "limit", "sell", 2, 150.05)
            assert "-1013" in str(e.value)
            with pytest.raises(ccxtpro.OrderNotFound):
                await a.cancel_order_ws("999999999", SYM)
            bad = pro_config(stack.base, KEYS[1][0], "wrong-secret")
            bad.markets, bad.markets_by_id, bad.symbols = a.markets, a.markets_by_id, a.symbols
            try:
                with pytest.raises(ccxtpro.AuthenticationError):
                    await bad.create_order_ws(SYM, "limit", "sell", 2, 140.0)
            finally:
                await bad.close()
        finally:
            await a.close()

    run(go())
