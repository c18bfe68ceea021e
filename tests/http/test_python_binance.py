"""python-binance (from PyPI), unchanged, pointed at the gateway: only the base URLs
and the keys differ from talking to Binance."""

import asyncio
import time

import pytest
from binance import AsyncClient, BinanceSocketManager, DepthCacheManager
from binance.client import BaseClient, Client
from binance.exceptions import BinanceAPIException

from stack import KEYS

SYM = "PGN-USD"


@pytest.fixture(scope="module")
def clients(stack):
    Client.API_URL = f"{stack.base}/api"
    return {a: Client(k, s) for a, (k, s) in KEYS.items()}


def eventually(fn, timeout=5.0):
    """The book follows the market-data feed, which may trail an order's answer by
    a moment (as on Binance): poll until `fn()` is truthy."""
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(0.01)


def err(fn, *a, **kw):
    with pytest.raises(BinanceAPIException) as e:
        fn(*a, **kw)
    return e.value


def test_market_data_endpoints(clients):
    c = clients[1]
    assert c.ping() == {}
    assert abs(c.get_server_time()["serverTime"] - time.time() * 1000) < 5000
    info = c.get_symbol_info(SYM)
    pf = next(f for f in info["filters"] if f["filterType"] == "PRICE_FILTER")
    lot = next(f for f in info["filters"] if f["filterType"] == "LOT_SIZE")
    assert (pf["tickSize"], pf["minPrice"], pf["maxPrice"]) == ("0.05", "50.00", "150.00")
    assert (lot["stepSize"], lot["minQty"], lot["maxQty"]) == ("1", "1", "100000")
    assert info["baseAsset"] == "PGN" and info["quoteAsset"] == "USD"
    book = c.get_order_book(symbol=SYM, limit=10)
    assert set(book) == {"lastUpdateId", "bids", "asks"}


def test_place_query_fill_cancel(clients):
    maker, taker = clients[1], clients[2]
    before = {b["asset"]: b for b in maker.get_account()["balances"]}
    sell = maker.order_limit_sell(symbol=SYM, quantity="5", price="101.05", newClientOrderId="maker-sell-1")
    assert sell["status"] == "NEW" and sell["clientOrderId"] == "maker-sell-1"
    assert sell["price"] == "101.05" and sell["origQty"] == "5"
    assert eventually(lambda: ["101.05", "5"] in maker.get_order_book(symbol=SYM)["asks"])
    got = maker.get_order(symbol=SYM, origClientOrderId="maker-sell-1")
    assert got["orderId"] == sell["orderId"] and got["status"] == "NEW"
    assert [o["orderId"] for o in maker.get_open_orders(symbol=SYM)] == [sell["orderId"]]
    locked = {b["asset"]: b for b in maker.get_account()["balances"]}["PGN"]["locked"]
    assert int(locked) == int(before["PGN"]["locked"]) + 5

    buy = taker.order_limit_buy(symbol=SYM, quantity="2", price="101.50")
    assert buy["status"] == "FILLED" and buy["executedQty"] == "2"
    assert buy["cummulativeQuoteQty"] == "202.10"
    assert [(f["price"], f["qty"]) for f in buy["fills"]] == [("101.05", "2")]
    got = maker.get_order(symbol=SYM, orderId=sell["orderId"])
    assert got["status"] == "PARTIALLY_FILLED" and got["executedQty"] == "2"

    mine = taker.get_my_trades(symbol=SYM)
    assert mine[-1]["orderId"] == buy["orderId"] and mine[-1]["isBuyer"] and not mine[-1]["isMaker"]
    theirs = maker.get_my_trades(symbol=SYM, orderId=sell["orderId"])
    assert [(t["qty"], t["isMaker"], t["isBuyer"]) for t in theirs] == [("2", True, False)]
    assert theirs[0]["id"] == mine[-1]["id"]

    cancelled = maker.cancel_order(symbol=SYM, orderId=sell["orderId"])
    assert cancelled["status"] == "CANCELED" and cancelled["executedQty"] == "2"
    assert maker.get_open_orders(symbol=SYM) == []
    all_orders = maker.get_all_orders(symbol=SYM)
    assert any(o["orderId"] == sell["orderId"] and o["status"] == "CANCELED" for o in all_orders)
    after = {b["asset"]: b for b in maker.get_account()["balances"]}
    assert after["PGN"]["free"] == str(int(before["PGN"]["free"]) - 2)
    assert after["USD"]["free"] == f"{float(before['USD']['free']) + 202.10:.2f}"

    assert eventually(lambda: [t["price"] for t in maker.get_recent_trades(symbol=SYM)[-1:]] == ["101.05"])
    assert eventually(lambda: [k[4] for k in maker.get_klines(symbol=SYM, interval=Client.KLINE_INTERVAL_1MINUTE)[-1:]] == ["101.05"])
    assert maker.get_ticker(symbol=SYM)["lastPrice"] == "101.05"
    assert maker.get_avg_price(symbol=SYM)["price"] == "101.05"


def test_order_types_and_time_in_force(clients):
    a, b = clients[1], clients[2]
    a.order_limit_sell(symbol=SYM, quantity="3", price="103.00")
    ioc = b.create_order(symbol=SYM, side="BUY", type="LIMIT", timeInForce="IOC", quantity="5", price="103.00")
    assert (ioc["status"], ioc["executedQty"]) == ("EXPIRED", "3")
    a.order_limit_sell(symbol=SYM, quantity="1", price="103.50")
    fok = b.create_order(symbol=SYM, side="BUY", type="LIMIT", timeInForce="FOK", quantity="2", price="103.50")
    assert (fok["status"], fok["executedQty"]) == ("EXPIRED", "0")
    mkt = b.order_market_buy(symbol=SYM, quantity="1")
    assert (mkt["status"], mkt["type"], mkt["fills"][0]["price"]) == ("FILLED", "MARKET", "103.50")
    bid = a.order_limit_buy(symbol=SYM, quantity="1", price="60.00")
    e = err(b.create_order, symbol=SYM, side="SELL", type="LIMIT_MAKER", quantity="1", price="55.00")
    assert e.code == -2010 and "immediately match" in e.message
    a.cancel_order(symbol=SYM, orderId=bid["orderId"])
    lm = b.create_order(symbol=SYM, side="SELL", type="LIMIT_MAKER", quantity="1", price="149.95")
    assert lm["orderId"] > 0
    assert b.cancel_order(symbol=SYM, orderId=lm["orderId"])["status"] == "CANCELED"


def test_errors_are_binance_errors(clients, stack):
    c = clients[1]
    assert err(c.order_limit_buy, symbol="NOPE", quantity="1", price="100.00").code == -1121
    e = err(c.order_limit_buy, symbol=SYM, quantity="1", price="100.02")
    assert (e.code, e.message) == (-1013, "Filter failure: PRICE_FILTER")
    assert err(c.order_limit_buy, symbol=SYM, quantity="1", price="150.05").code == -1013
    assert err(c.order_limit_buy, symbol=SYM, quantity="0", price="100.00").code in (-1013, -1130)
    assert err(c.order_limit_buy, symbol=SYM, quantity="1.5", price="100.00").code == -1111
    assert err(c.order_limit_buy, symbol=SYM, quantity="1", price="100.001").code == -1111
    assert err(c.create_order, symbol=SYM, side="BUY", type="TRAILING_STOP_MARKET", quantity="1").code == -1116
    # A stop without its trigger (stops themselves: test_contingent.py).
    assert err(c.create_order, symbol=SYM, side="BUY", type="STOP_LOSS", quantity="1").code == -1102
    assert err(c.create_order, symbol=SYM, side="UP", type="LIMIT", timeInForce="GTC", quantity="1", price="100").code == -1117
    assert err(c.cancel_order, symbol=SYM, orderId=999999999).code == -2011
    assert err(c.get_order, symbol=SYM, orderId=999999999).code == -2013
    bad = Client(KEYS[1][0], "not-the-secret")
    assert err(bad.get_account).code == -1022
    unknown = Client("no-such-key-at-all", "x")
    e = err(unknown.get_account)
    assert (e.code, e.status_code) == (-2015, 401)
    stale = Client(*KEYS[1])
    stale.timestamp_offset = -120_000
    assert err(stale.get_account).code == -1021


def test_a_key_reaches_only_its_own_account(clients):
    a, b = clients[1], clients[2]
    o = a.order_limit_sell(symbol=SYM, quantity="1", price="140.00")
    assert err(b.get_order, symbol=SYM, orderId=o["orderId"]).code == -2013
    assert err(b.cancel_order, symbol=SYM, orderId=o["orderId"]).code == -2011
    assert all(x["orderId"] != o["orderId"] for x in b.get_open_orders(symbol=SYM))
    assert all(x["orderId"] != o["orderId"] for x in b.get_all_orders(symbol=SYM))
    assert a.get_order(symbol=SYM, orderId=o["orderId"])["status"] == "NEW"
    assert a.cancel_order(symbol=SYM, orderId=o["orderId"])["status"] == "CANCELED"


def test_cancel_all_open_orders(clients):
    c = clients[3]
    ids = {c.order_limit_buy(symbol=SYM, quantity="1", price=p)["orderId"] for p in ("90.00", "90.05", "90.10")}
    done = c._delete("openOrders", True, data={"symbol": SYM})
    assert {o["orderId"] for o in done} == ids and all(o["status"] == "CANCELED" for o in done)
    assert c.get_open_orders(symbol=SYM) == []


def test_streams_user_data_depth_and_klines(stack):
    async def run():
        AsyncClient.API_URL = f"{stack.base}/api"
        BaseClient.WS_API_URL = f"ws://{stack.host}/ws-api/v3"
        BinanceSocketManager.STREAM_URL = f"ws://{stack.host}/"
        a = await AsyncClient.create(*KEYS[1])
        b = await AsyncClient.create(*KEYS[2])
        try:
            bm = BinanceSocketManager(a)
            async with bm.user_socket() as user, bm.depth_socket(SYM, interval=100) as depth, \
                    bm.kline_socket(SYM, interval="1m") as kl, bm.trade_socket(SYM) as trades:
                o = await a.order_limit_sell(symbol=SYM, quantity="4", price="120.00")
                ev = await asyncio.wait_for(user.recv(), 10)
                while ev.get("e") != "executionReport":
                    ev = await asyncio.wait_for(user.recv(), 10)
                assert (ev["x"], ev["X"], ev["i"], ev["p"], ev["q"]) == ("NEW", "NEW", o["orderId"], "120.00", "4")
                d = await asyncio.wait_for(depth.recv(), 10)
                assert d["e"] == "depthUpdate" and d["U"] <= d["u"]
                await b.order_market_buy(symbol=SYM, quantity="1")
                t = await asyncio.wait_for(trades.recv(), 10)
                assert (t["e"], t["m"]) == ("trade", False)
                seen = []
                while not any(e.get("x") == "TRADE" for e in seen):
                    seen.append(await asyncio.wait_for(user.recv(), 10))
                trade = next(e for e in seen if e.get("x") == "TRADE")
                assert (trade["X"], trade["l"], trade["z"], trade["m"]) == ("PARTIALLY_FILLED", "1", "1", True)
                k = await asyncio.wait_for(kl.recv(), 10)
                assert k["e"] == "kline" and k["k"]["i"] == "1m"
                await a.cancel_order(symbol=SYM, orderId=o["orderId"])
        finally:
            await a.close_connection()
            await b.close_connection()
    asyncio.run(run())


def test_depth_cache_matches_the_book(stack, clients):
    """python-binance's DepthCacheManager follows the documented U/u procedure."""
    async def run():
        AsyncClient.API_URL = f"{stack.base}/api"
        BinanceSocketManager.STREAM_URL = f"ws://{stack.host}/"
        a = await AsyncClient.create(*KEYS[1])
        try:
            async with DepthCacheManager(a, symbol=SYM, refresh_interval=0, ws_interval=100) as dcm:
                for p in ("91.00", "91.05", "91.10"):
                    await a.order_limit_buy(symbol=SYM, quantity="2", price=p)
                deadline = time.time() + 10
                while True:
                    cache = await asyncio.wait_for(dcm.recv(), 10)
                    rest = await a.get_order_book(symbol=SYM, limit=1000)
                    got = [[f"{p:.2f}", f"{q:g}"] for p, q in cache.get_bids()]
                    if got == rest["bids"] or time.time() > deadline:
                        assert got == rest["bids"]
                        break
            await a._delete("openOrders", True, data={"symbol": SYM})
        finally:
            await a.close_connection()
    asyncio.run(run())
