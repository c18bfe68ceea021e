"""ccxt (PyPI) with its `binance` class pointed at the gateway. Besides the URLs
and keys, three options keep ccxt to the spot API a venue has (it otherwise also
loads margin pairs and currency networks from Binance-only endpoints)."""

import ccxt
import pytest

from stack import KEYS


@pytest.fixture(scope="module")
def ex(stack):
    e = ccxt.binance({
        "apiKey": KEYS[1][0],
        "secret": KEYS[1][1],
        "options": {"fetchCurrencies": False, "fetchMargins": False, "fetchMarkets": {"types": ["spot"]}},
    })
    e.urls["api"]["public"] = e.urls["api"]["private"] = f"{stack.base}/api/v3"
    e.load_markets()
    return e


def test_markets_book_orders_balance(ex):
    m = ex.market("PGN/USD")
    assert m["id"] == "PGN-USD"
    assert m["precision"]["price"] == 0.05 and m["limits"]["price"] == {"min": 50.0, "max": 150.0}
    o = ex.create_limit_sell_order("PGN/USD", 2, 147.05)
    assert o["status"] == "open" and o["price"] == 147.05 and o["amount"] == 2.0
    assert o["id"] in [x["id"] for x in ex.fetch_open_orders("PGN/USD")]
    assert ex.fetch_order(o["id"], "PGN/USD")["status"] == "open"
    assert ex.cancel_order(o["id"], "PGN/USD")["status"] == "canceled"
    total = ex.fetch_balance()["total"]
    assert total["USD"] > 0 and total["PGN"] > 0
    book = ex.fetch_order_book("PGN/USD")
    assert "bids" in book and "asks" in book
