"""The web UI in a real browser: Debian's chromium driven by Playwright (PyPI)
pointed at /usr/bin/chromium (never a browser download), against a stack whose
order engine runs a maker and a taker at the exchange (a live book). A person's
session: place, see and cancel an order; click prices in the moving book; the price
chart with its time axis, volume and quiet periods; the 24 h statistics; order total
and share of the balance; modify, cancel all and the order history; price grouping;
the markets list; the operations page with decimals, the kill switch and its
release. A failing step leaves a screenshot (and the page's console) in
tests/http/artifacts/; `PEREGRINE_SCREENSHOTS=docs/img` also writes the pages'
screenshots shown in docs/http.md."""

import os
import re
import time

import pytest
from binance.client import Client
from playwright.sync_api import expect, sync_playwright

from stack import KEYS, Stack

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = os.path.join(os.path.dirname(__file__), "artifacts")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def stack():
    s = Stack(engine=True, tick=1, second_symbol=True).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def rest(stack):
    Client.API_URL = f"{stack.base}/api"
    return Client(*KEYS[1])


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, request):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    console = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    yield pg
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        os.makedirs(ARTIFACTS, exist_ok=True)
        pg.screenshot(path=os.path.join(ARTIFACTS, f"{request.node.name}.png"), full_page=True)
        with open(os.path.join(ARTIFACTS, f"{request.node.name}.console.txt"), "w") as f:
            f.write("\n".join(console))
    assert not [c for c in console if c.startswith("pageerror") or c.startswith("error")], console
    ctx.close()


def open_trade(page, stack):
    page.goto(stack.base + "/")
    expect(page.locator("#feed")).to_have_text("market live", timeout=15000)
    expect(page.locator("#user")).to_contain_text("account live", timeout=15000)
    # The maker's quotes are in the book.
    expect(page.locator("#bids tr[data-price]").first).to_be_visible(timeout=15000)


def test_place_see_and_cancel_an_order(page, stack):
    open_trade(page, stack)
    # Validation against tick and lot, before anything is sent.
    page.get_by_test_id("side-sell").check()
    page.get_by_test_id("price").fill("140.001")
    page.get_by_test_id("qty").fill("3")
    expect(page.get_by_test_id("order-check")).to_contain_text("at most 2 decimals")
    expect(page.get_by_test_id("submit")).to_be_disabled()
    page.get_by_test_id("price").fill("150.01")
    expect(page.get_by_test_id("order-check")).to_contain_text("between")

    page.get_by_test_id("price").fill("149.97")
    expect(page.get_by_test_id("order-check")).to_have_text("")
    expect(page.get_by_test_id("total")).to_have_value("449.91")
    page.get_by_test_id("submit").click()
    expect(page.get_by_test_id("order-result")).to_have_text(re.compile(r"order \d+ NEW"), timeout=10000)
    order_id = re.search(r"order (\d+)", page.get_by_test_id("order-result").inner_text()).group(1)

    # In the book (from the depth stream) and in open orders (from the user stream).
    ask = page.locator('#asks tr[data-price="149.97"]')
    expect(ask).to_have_count(1, timeout=10000)
    expect(ask.locator("td").nth(1)).to_have_text("3")
    row = page.locator(f'#open tr[data-order-id="{order_id}"]')
    expect(row).to_have_count(1, timeout=10000)
    expect(row).to_contain_text("NEW")

    page.get_by_test_id(f"cancel-{order_id}").click()
    expect(page.get_by_test_id("order-result")).to_have_text(f"order {order_id} cancelled", timeout=10000)
    expect(row).to_have_count(0, timeout=10000)
    expect(ask).to_have_count(0, timeout=10000)
    expect(page.locator("#tape tr").first).to_be_visible(timeout=20000)


def test_clicking_a_price_in_the_live_book_uses_it(page, stack):
    open_trade(page, stack)
    # What the pointer pressed on, recorded before the page's own handler.
    page.evaluate("""() => {
        window.pressed = [];
        document.addEventListener('pointerdown', (e) => {
            const tr = e.target.closest('tr[data-price]');
            window.pressed.push(tr ? tr.dataset.price : null);
        }, true);
    }""")
    consistent = priced = 0
    for i in range(10):
        side = "#bids" if i % 2 else "#asks"
        rows = page.locator(f"{side} tr[data-price]")
        expect(rows.first).to_be_visible(timeout=20000)
        page.get_by_test_id("price").fill("")
        rows.nth(min(i % 3, rows.count() - 1)).click(timeout=20000)
        pressed = page.evaluate("window.pressed[window.pressed.length - 1]")
        value = page.get_by_test_id("price").input_value()
        # The price pressed on is the price used (a level that vanished under the
        # pointer leaves an empty row: nothing is used).
        consistent += value == (pressed or "")
        priced += bool(pressed)
        time.sleep(0.15)
    assert consistent == 10, f"{consistent}/10 clicks on a live book used the price pressed on"
    assert priced >= 7, f"only {priced}/10 clicks landed on a price"


def test_price_chart_has_a_time_axis_volume_and_keeps_quiet_periods(page, stack):
    open_trade(page, stack)
    page.wait_for_function("window.peregrineChart && window.peregrineChart.bars.length > 0", timeout=15000)
    info = page.evaluate("""() => {
        const c = window.peregrineChart;
        return { lib: !!c.lib, timeVisible: c.chart.options().timeScale.timeVisible,
                 candles: c.candles.data().length, volume: c.volume.data().length,
                 canvases: document.querySelectorAll('#candles canvas').length };
    }""")
    assert info["lib"], "Lightweight Charts was not built in (npm during the build)"
    assert info["timeVisible"] and info["candles"] > 0 and info["volume"] == info["candles"]
    assert info["canvases"] >= 2, info
    # A bar at 10:00 and the next at 10:05 (1m): four empty minutes stay on the axis.
    gaps = page.evaluate("""async () => {
        const { points } = await import('/ui/pricechart.js');
        const t = Date.UTC(2026, 0, 1, 10, 0, 0);
        const bar = (ms) => [ms, '1.00', '1.00', '1.00', '1.00', '2', ms + 59999];
        const p = points([bar(t), bar(t + 5 * 60000)], '1m');
        return p.candles.map((c) => [c.time, 'open' in c]);
    }""")
    start = 1767261600
    assert gaps == [[start, True], [start + 60, False], [start + 120, False], [start + 180, False],
                    [start + 240, False], [start + 300, True]], gaps
    # 1 s bars follow the live market.
    page.get_by_test_id("interval").select_option("1s")
    page.wait_for_function("window.peregrineChart.interval === '1s' && window.peregrineChart.bars.length > 0", timeout=15000)


def test_24h_statistics_match_the_rest_ticker(page, stack, rest):
    open_trade(page, stack)
    expect(page.get_by_test_id("stat-change")).to_contain_text("%", timeout=10000)
    for _ in range(20):
        t = rest.get_ticker(symbol="PGN-USD")
        shown = (page.get_by_test_id("stat-high").inner_text(), page.get_by_test_id("stat-low").inner_text())
        if shown == (t["highPrice"], t["lowPrice"]):
            break
        time.sleep(0.5)
    assert shown == (t["highPrice"], t["lowPrice"])
    expect(page.get_by_test_id("stat-volume")).to_contain_text("PGN")
    expect(page.get_by_test_id("stat-quote")).to_contain_text("USD")


def test_order_total_share_of_balance_and_market_by_total(page, stack, rest):
    open_trade(page, stack)
    page.get_by_test_id("side-buy").check()
    page.get_by_test_id("price").fill("80.00")
    page.get_by_test_id("qty").fill("3")
    expect(page.get_by_test_id("total")).to_have_value("240.00")
    # A total gives the lots it pays for at the price.
    page.get_by_test_id("total").fill("1000.00")
    expect(page.get_by_test_id("qty")).to_have_value("12")
    # 25% of the free USD at 80.00.
    free = page.locator('#balances tr[data-asset="USD"] td').nth(1).inner_text()
    expect(page.get_by_test_id("available")).to_contain_text(f"available {free} USD")
    page.locator('.pcts button[data-pct="25"]').click()
    cents = int(free.replace(".", "")) * 25 // 100
    expect(page.get_by_test_id("qty")).to_have_value(str(cents // 8000))
    # A market buy for a total: quoteOrderQty.
    page.get_by_test_id("type").select_option("MARKET")
    page.get_by_test_id("qty").fill("")
    page.get_by_test_id("total").fill("250.00")
    expect(page.get_by_test_id("submit")).to_be_enabled()
    page.get_by_test_id("submit").click()
    expect(page.get_by_test_id("order-result")).to_have_text(re.compile(r"order \d+ (FILLED|EXPIRED)"), timeout=10000)
    order_id = int(re.search(r"order (\d+)", page.get_by_test_id("order-result").inner_text()).group(1))
    o = rest.get_order(symbol="PGN-USD", orderId=order_id)
    assert o["origQuoteOrderQty"] == "250.00" and float(o["cummulativeQuoteQty"]) <= 250.0, o


def test_a_stop_limit_and_an_iceberg_through_the_ticket(page, stack, rest):
    open_trade(page, stack)
    page.get_by_test_id("side-sell").check()
    page.get_by_test_id("type").select_option("STOP_LOSS_LIMIT")
    expect(page.get_by_test_id("stop-price")).to_be_visible()
    expect(page.get_by_test_id("trailing-delta")).to_be_visible()
    page.get_by_test_id("price").fill("59.00")
    page.get_by_test_id("qty").fill("2")
    expect(page.get_by_test_id("order-check")).to_contain_text("stop price or a trailing offset")
    page.get_by_test_id("stop-price").fill("60.001")
    expect(page.get_by_test_id("order-check")).to_contain_text("Stop price must be")
    expect(page.get_by_test_id("submit")).to_be_disabled()
    page.get_by_test_id("stop-price").fill("60.00")
    expect(page.get_by_test_id("order-check")).to_have_text("")
    page.get_by_test_id("submit").click()
    expect(page.get_by_test_id("order-result")).to_have_text(re.compile(r"order \d+ NEW"), timeout=10000)
    stop_id = int(re.search(r"order (\d+)", page.get_by_test_id("order-result").inner_text()).group(1))
    # Waiting for its trigger: in open orders, not in the book.
    row = page.locator(f'#open tr[data-order-id="{stop_id}"]')
    expect(row).to_contain_text("STOP_LOSS_LIMIT @ 60.00 (waiting)", timeout=10000)
    got = rest.get_order(symbol="PGN-USD", orderId=stop_id)
    assert (got["type"], got["stopPrice"], got["price"], got["isWorking"]) == ("STOP_LOSS_LIMIT", "60.00", "59.00", False)
    expect(page.locator('#asks tr[data-price="59.00"]')).to_have_count(0)
    # An iceberg: the display quantity is checked and sent.
    page.get_by_test_id("type").select_option("LIMIT")
    expect(page.get_by_test_id("stop-price")).to_be_hidden()
    page.get_by_test_id("side-sell").check()
    page.get_by_test_id("price").fill("148.00")
    page.get_by_test_id("qty").fill("5")
    page.get_by_test_id("iceberg-qty").fill("5")
    expect(page.get_by_test_id("order-check")).to_contain_text("below the quantity")
    page.get_by_test_id("iceberg-qty").fill("2")
    expect(page.get_by_test_id("order-check")).to_have_text("")
    page.get_by_test_id("submit").click()
    # (The stop's answer is still there until the iceberg's arrives.)
    expect(page.get_by_test_id("order-result")).not_to_have_text(f"order {stop_id} NEW", timeout=10000)
    expect(page.get_by_test_id("order-result")).to_have_text(re.compile(r"order \d+ NEW"), timeout=10000)
    ice_id = int(re.search(r"order (\d+)", page.get_by_test_id("order-result").inner_text()).group(1))
    assert rest.get_order(symbol="PGN-USD", orderId=ice_id)["icebergQty"] == "2"
    expect(page.locator(f'#open tr[data-order-id="{ice_id}"]')).to_contain_text("show 2", timeout=10000)
    ask = page.locator('#asks tr[data-price="148.00"]')
    expect(ask.locator("td").nth(1)).to_have_text("2", timeout=10000)
    page.get_by_test_id("iceberg-qty").fill("")
    # An OCO: a limit-maker leg above and a stop-limit leg below; cancelling one
    # leg ends the list.
    page.get_by_test_id("type").select_option("OCO")
    expect(page.get_by_test_id("iceberg-qty")).to_be_hidden()
    page.get_by_test_id("price").fill("147.00")
    page.get_by_test_id("qty").fill("1")
    page.get_by_test_id("stop-price").fill("61.00")
    page.get_by_test_id("oco-stop-limit").fill("60.50")
    expect(page.get_by_test_id("order-check")).to_have_text("")
    page.get_by_test_id("submit").click()
    expect(page.get_by_test_id("order-result")).to_have_text(re.compile(r"list \d+ EXECUTING"), timeout=10000)
    list_id = int(re.search(r"list (\d+)", page.get_by_test_id("order-result").inner_text()).group(1))
    legs = page.locator("#open tr", has_text=f"list {list_id}")
    expect(legs).to_have_count(2, timeout=10000)
    assert sorted(o["type"] for o in rest.get_open_orders(symbol="PGN-USD") if o["orderListId"] == list_id) == \
        ["LIMIT_MAKER", "STOP_LOSS_LIMIT"]
    page.get_by_test_id(f"cancel-{list_id}").click()
    expect(legs).to_have_count(0, timeout=10000)
    page.get_by_test_id("type").select_option("LIMIT")
    for oid in (stop_id, ice_id):
        page.get_by_test_id(f"cancel-{oid}").click()
        expect(page.locator(f'#open tr[data-order-id="{oid}"]')).to_have_count(0, timeout=10000)


def test_modify_cancel_all_and_the_order_history(page, stack, rest):
    open_trade(page, stack)
    a = rest.order_limit_buy(symbol="PGN-USD", quantity="1", price="60.00")["orderId"]
    b = rest.order_limit_buy(symbol="PGN-USD", quantity="1", price="61.00")["orderId"]
    expect(page.locator(f'#open tr[data-order-id="{b}"]')).to_have_count(1, timeout=10000)
    page.get_by_test_id(f"modify-{a}").click()
    page.get_by_test_id(f"modify-price-{a}").fill("62.00")
    page.get_by_test_id(f"modify-qty-{a}").fill("2")
    page.get_by_test_id(f"modify-save-{a}").click()
    expect(page.get_by_test_id("order-result")).to_have_text(re.compile(rf"order {a} replaced by \d+"), timeout=10000)
    new = int(re.search(r"replaced by (\d+)", page.get_by_test_id("order-result").inner_text()).group(1))
    row = page.locator(f'#open tr[data-order-id="{new}"]')
    expect(row).to_contain_text("62.00", timeout=10000)
    expect(row.locator(".oqty")).to_have_text("2")
    expect(page.locator(f'#open tr[data-order-id="{a}"]')).to_have_count(0)
    page.get_by_test_id("cancel-all").click()
    expect(page.get_by_test_id("order-result")).to_have_text("2 orders cancelled", timeout=10000)
    expect(page.locator("#open tr")).to_have_count(0, timeout=10000)
    page.get_by_test_id("tab-history").click()
    for oid in (a, b, new):
        expect(page.locator(f'#history tr[data-order-id="{oid}"]')).to_contain_text("CANCELED", timeout=10000)
    assert rest.get_open_orders(symbol="PGN-USD") == []


def test_price_grouping_sums_the_levels(page, stack, rest):
    ids = [rest.order_limit_sell(symbol="PGN-USD", quantity=q, price=p)["orderId"]
           for p, q in (("120.01", "2"), ("120.50", "3"), ("121.20", "1"))]
    try:
        open_trade(page, stack)
        expect(page.locator('#asks tr[data-price="120.50"]')).to_have_count(1, timeout=10000)
        page.get_by_test_id("group").select_option("100")
        # Asks round up to the step: 120.01 and 120.50 make 121.00, 121.20 makes 122.00.
        expect(page.locator('#asks tr[data-price="121.00"] td').nth(1)).to_have_text("5", timeout=10000)
        expect(page.locator('#asks tr[data-price="122.00"] td').nth(1)).to_have_text("1")
        prices = page.locator("#asks tr[data-price], #bids tr[data-price]").evaluate_all("rs => rs.map(r => r.dataset.price)")
        assert prices and all(p.endswith(".00") for p in prices), prices
        page.get_by_test_id("group").select_option("1")
        expect(page.locator('#asks tr[data-price="120.50"]')).to_have_count(1, timeout=10000)
    finally:
        for oid in ids:
            rest.cancel_order(symbol="PGN-USD", orderId=oid)


def test_the_markets_list_switches_symbols(page, stack):
    open_trade(page, stack)
    rows = page.locator("#symbols tr[data-symbol]")
    expect(rows).to_have_count(2)
    expect(page.locator('#symbols tr[data-symbol="PGN-USD"] td').nth(1)).to_have_text(re.compile(r"\d+\.\d\d"), timeout=10000)
    page.locator('#symbols tr[data-symbol="XYZ-USD"]').click()
    expect(page.get_by_test_id("symbol-name")).to_have_text("XYZ-USD")
    expect(page.locator("#rules")).to_contain_text("lot 0.1")
    expect(page.locator("#asks tr[data-price]")).to_have_count(0, timeout=10000)
    page.locator('#symbols tr[data-symbol="PGN-USD"]').click()
    expect(page.locator("#bids tr[data-price]").first).to_be_visible(timeout=10000)


def test_operations_page_units_kill_switch_and_release(page, stack):
    page.goto(stack.base + "/ops")
    expect(page.get_by_test_id("engine-state")).to_contain_text("engine", timeout=15000)
    strategies = page.get_by_test_id("strategies")
    expect(strategies.locator('tr[data-strategy="maker"]')).to_contain_text("alive", timeout=15000)
    expect(page.get_by_test_id("latency").locator("tr").first).to_be_visible(timeout=15000)
    # Prices with the instrument's decimals, PnL with its currency.
    maker = page.locator('#positions tr[data-position="maker"]')
    expect(maker).to_contain_text("PGN-USD", timeout=15000)
    expect(maker.locator("td").nth(7)).to_have_text(re.compile(r"^-?[\d,]+\.\d{2} USD$"))

    page.get_by_test_id("kill-switch").click()
    expect(page.get_by_test_id("kill-dialog")).to_be_visible()
    expect(page.get_by_test_id("kill-go")).to_be_disabled()
    page.get_by_test_id("kill-confirm").fill("KILL")
    page.get_by_test_id("kill-go").click()
    expect(page.get_by_test_id("kill-result")).to_have_text(re.compile(r"^ok"), timeout=15000)
    for name in ("maker", "taker"):
        expect(strategies.locator(f'tr[data-strategy="{name}"] td').nth(4)).to_have_text("ON", timeout=10000)
    page.locator("#kcancel").click()
    page.get_by_test_id("release-all").click()
    expect(page.get_by_test_id("release-result")).to_have_text(re.compile(r"^ok released"), timeout=10000)
    for name in ("maker", "taker"):
        expect(strategies.locator(f'tr[data-strategy="{name}"] td').nth(4)).to_have_text("off", timeout=10000)
    # One strategy killed, and released from its row.
    page.get_by_test_id("kill-switch").click()
    page.get_by_test_id("kill-scope").select_option("taker")
    page.get_by_test_id("kill-confirm").fill("KILL")
    page.get_by_test_id("kill-go").click()
    expect(page.get_by_test_id("kill-result")).to_have_text(re.compile(r"^ok"), timeout=15000)
    page.locator("#kcancel").click()
    expect(strategies.locator('tr[data-strategy="taker"] td').nth(4)).to_have_text("ON", timeout=10000)
    expect(strategies.locator('tr[data-strategy="maker"] td').nth(4)).to_have_text("off")
    page.get_by_test_id("release-taker").click()
    expect(strategies.locator('tr[data-strategy="taker"] td').nth(4)).to_have_text("off", timeout=10000)


def test_screenshots(page, stack, rest):
    """The pages as docs/http.md shows them (with a person's orders in the book)."""
    out = os.environ.get("PEREGRINE_SCREENSHOTS", ARTIFACTS)
    os.makedirs(out, exist_ok=True)
    ids = [rest.order_limit_buy(symbol="PGN-USD", quantity="2", price="99.00")["orderId"]]
    try:
        open_trade(page, stack)
        page.get_by_test_id("price").fill("99.50")
        page.get_by_test_id("qty").fill("4")
        time.sleep(3)
        page.screenshot(path=os.path.join(out, "http-trade.png"))
        page.goto(stack.base + "/ops")
        expect(page.locator('#positions tr[data-position="maker"]')).to_contain_text("USD", timeout=15000)
        time.sleep(1.5)
        page.screenshot(path=os.path.join(out, "http-ops.png"))
    finally:
        for oid in ids:
            rest.cancel_order(symbol="PGN-USD", orderId=oid)
