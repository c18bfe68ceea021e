"""The exchange's stops, icebergs, OCO lists and fees (issue 31) through unchanged
python-binance and ccxt: a stop-limit that triggers and fills, an iceberg that shows
only its display quantity, an OCO whose limit leg fills and cancels the stop leg,
and nonzero commissions on an instrument that charges fees (docs/fees.md)."""

import time

import ccxt
import pytest
from binance.client import Client
from binance.exceptions import BinanceAPIException

from stack import KEYS, Stack
from test_ccxt import ccxt_config

SYM = "PGN-USD"


@pytest.fixture(scope="module")
def stack():
    s = Stack(fees=True).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def clients(stack):
    Client.API_URL = f"{stack.base}/api"
    return {a: Client(k, s) for a, (k, s) in KEYS.items()}


def eventually(fn, timeout=5.0):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(0.02)


def limit(c, side, qty, price):
    return c.create_order(symbol=SYM, side=side, type="LIMIT", timeInForce="GTC",
                          quantity=str(qty), price=price, newOrderRespType="FULL")


def test_commission_is_the_venues_fee(clients, stack):
    maker, taker = clients[1], clients[2]
    limit(maker, "SELL", 1, "100.00")
    buy = limit(taker, "BUY", 1, "100.00")
    assert buy["status"] == "FILLED"
    # 500 ppm of 100.00 USD for the taker, 100 ppm for the maker.
    assert [(f["commission"], f["commissionAsset"]) for f in buy["fills"]] == [("0.05", "USD")]
    mine = eventually(lambda: maker.get_my_trades(symbol=SYM))
    assert (mine[-1]["commission"], mine[-1]["commissionAsset"]) == ("0.01", "USD")
    rates = maker.get_account()["commissionRates"]
    assert (rates["maker"], rates["taker"]) == ("0.00010000", "0.00050000")
    ex = ccxt_config(stack.base, *KEYS[2])
    ex.load_markets()
    t = eventually(lambda: ex.fetch_my_trades("PGN/USD"))
    assert t[-1]["fee"]["cost"] == 0.05 and t[-1]["fee"]["currency"] == "USD"


def test_stop_limit_waits_then_triggers_and_fills(clients):
    owner, a, b = clients[1], clients[2], clients[3]
    with pytest.raises(BinanceAPIException) as e:
        owner.create_order(symbol=SYM, side="SELL", type="STOP_LOSS_LIMIT", timeInForce="GTC",
                           quantity="2", price="98.50", stopPrice="101.00")
    assert e.value.code == -2010 and "trigger immediately" in e.value.message
    stop = owner.create_order(symbol=SYM, side="SELL", type="STOP_LOSS_LIMIT", timeInForce="GTC",
                              quantity="2", price="98.50", stopPrice="99.00")
    got = owner.get_order(symbol=SYM, orderId=stop["orderId"])
    assert (got["type"], got["stopPrice"], got["isWorking"], got["workingTime"]) == ("STOP_LOSS_LIMIT", "99.00", False, -1)
    assert not owner.get_order_book(symbol=SYM)["asks"]
    limit(a, "BUY", 1, "99.00")
    limit(b, "SELL", 1, "99.00")
    assert eventually(lambda: owner.get_order(symbol=SYM, orderId=stop["orderId"])["isWorking"])
    assert eventually(lambda: ["98.50", "2"] in owner.get_order_book(symbol=SYM)["asks"])
    assert limit(a, "BUY", 2, "98.50")["status"] == "FILLED"
    assert owner.get_order(symbol=SYM, orderId=stop["orderId"])["status"] == "FILLED"


def test_iceberg_shows_its_display_quantity(clients):
    owner, taker = clients[1], clients[2]
    ice = owner.create_order(symbol=SYM, side="SELL", type="LIMIT", timeInForce="GTC",
                             quantity="10", price="105.00", icebergQty="2")
    assert eventually(lambda: owner.get_order_book(symbol=SYM)["asks"][:1] == [["105.00", "2"]])
    # Three taken: the shown two, then one of the refill.
    assert limit(taker, "BUY", 3, "105.00")["executedQty"] == "3"
    assert eventually(lambda: owner.get_order_book(symbol=SYM)["asks"][:1] == [["105.00", "1"]])
    got = owner.get_order(symbol=SYM, orderId=ice["orderId"])
    assert (got["icebergQty"], got["executedQty"], got["status"]) == ("2", "3", "PARTIALLY_FILLED")
    owner.cancel_order(symbol=SYM, orderId=ice["orderId"])


def test_oco_leg_fill_cancels_the_other(clients):
    owner, taker = clients[1], clients[2]
    oco = owner.create_oco_order(symbol=SYM, side="SELL", quantity="1",
                                 aboveType="LIMIT_MAKER", abovePrice="104.00",
                                 belowType="STOP_LOSS_LIMIT", belowStopPrice="90.00", belowPrice="89.00",
                                 belowTimeInForce="GTC")
    assert (oco["contingencyType"], oco["listOrderStatus"]) == ("OCO", "EXECUTING")
    legs = {o["type"]: o["orderId"] for o in oco["orderReports"]}
    assert set(legs) == {"LIMIT_MAKER", "STOP_LOSS_LIMIT"}
    assert [l["orderListId"] for l in owner.get_open_oco_orders()] == [oco["orderListId"]]
    assert limit(taker, "BUY", 1, "104.00")["status"] == "FILLED"
    assert eventually(lambda: owner.get_order(symbol=SYM, orderId=legs["STOP_LOSS_LIMIT"])["status"] == "EXPIRED")
    assert owner.get_order(symbol=SYM, orderId=legs["LIMIT_MAKER"])["status"] == "FILLED"
    done = owner._get("orderList", True, data={"orderListId": oco["orderListId"]})
    assert done["listOrderStatus"] == "ALL_DONE"
    assert owner.get_open_oco_orders() == []


def test_ccxt_stop_and_trailing_stop(stack):
    ex = ccxt_config(stack.base, *KEYS[3])
    ex.load_markets()
    o = ex.create_order("PGN/USD", "limit", "sell", 1, 84.0, {"stopLossPrice": 85.0})
    assert o["info"]["type"] == "STOP_LOSS_LIMIT"
    got = ex.fetch_order(o["id"], "PGN/USD")
    assert got["triggerPrice"] == 85.0 and got["status"] == "open"
    t = ex.create_order("PGN/USD", "market", "sell", 1, None,
                        {"trailingPercent": 0.5, "stopLossOrTakeProfit": "stopLoss"})
    got = ex.fetch_order(t["id"], "PGN/USD")
    assert got["info"]["type"] == "STOP_LOSS" and got["info"]["trailingDelta"] == 50
    for x in (o, t):
        ex.cancel_order(x["id"], "PGN/USD")
