"""The web UI in a real browser: Debian's chromium driven by Playwright (PyPI)
pointed at /usr/bin/chromium (never a browser download). A person's session:
place an order from the page, see it in the book and in open orders, cancel it,
then engage the kill switch on the operations page. A failing step leaves a
screenshot (and the page's console) in tests/http/artifacts/."""

import os
import re

import pytest
from playwright.sync_api import expect, sync_playwright

from stack import Stack

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = os.path.join(os.path.dirname(__file__), "artifacts")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def stack():
    s = Stack(engine=True, tick=1).start()
    yield s
    s.stop()


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
    assert not [c for c in console if c.startswith("pageerror")], console
    ctx.close()


def test_place_see_and_cancel_an_order(page, stack):
    page.goto(stack.base + "/")
    expect(page.locator("#feed")).to_have_text("market live", timeout=15000)
    expect(page.locator("#user")).to_contain_text("account live", timeout=15000)

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

    # The strategies trade at the exchange: the tape and the chart fill in.
    expect(page.locator("#tape tr").first).to_be_visible(timeout=20000)


def test_kill_switch_on_the_operations_page(page, stack):
    page.goto(stack.base + "/ops")
    expect(page.get_by_test_id("engine-state")).to_contain_text("engine", timeout=15000)
    strategies = page.get_by_test_id("strategies")
    expect(strategies.locator('tr[data-strategy="maker"]')).to_have_count(1, timeout=15000)
    expect(strategies.locator('tr[data-strategy="maker"]')).to_contain_text("alive", timeout=15000)
    expect(page.get_by_test_id("latency").locator("tr").first).to_be_visible(timeout=15000)

    page.get_by_test_id("kill-switch").click()
    dialog = page.get_by_test_id("kill-dialog")
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("kill-go")).to_be_disabled()
    page.get_by_test_id("kill-confirm").fill("KILL")
    page.get_by_test_id("kill-go").click()
    expect(page.get_by_test_id("kill-result")).to_have_text(re.compile(r"^ok"), timeout=15000)
    for name in ("maker", "taker"):
        expect(strategies.locator(f'tr[data-strategy="{name}"] td').nth(4)).to_have_text("ON", timeout=10000)
