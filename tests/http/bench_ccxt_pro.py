"""ccxt.pro against the gateway, measured (run by hand; docs/performance.md, "HTTP
gateway"): in one run, against one stack,

1. time to first book: a fresh ccxt.pro client's `watch_order_book` from the call
   to the first synchronised book (WebSocket connect, SUBSCRIBE, ccxt's REST
   snapshot, the documented sync), `--first N` times;
2. update lag against REST at the same update id: a driver changes the book at
   `--rate` changes a second while ccxt.pro watches it and a REST client polls
   `GET /api/v3/depth` as fast as it can; for every update id both saw, the time
   ccxt.pro had it minus the time REST first returned it (negative: the stream
   was first).

    source tests/http/setup.sh   # the venv
    cargo build --release -p peregrine
    $HTTP_VENV/bin/python tests/http/bench_ccxt_pro.py [--first 20] [--rate 20] [--seconds 20] [--json FILE]
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
import time

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stack import KEYS, Stack  # noqa: E402
from test_ccxt_pro import pro_config  # noqa: E402

SYM = "PGN/USD"


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def summary(name, xs):
    return {"name": name, "n": len(xs), "p50": pct(xs, 0.5), "p90": pct(xs, 0.9), "p99": pct(xs, 0.99),
            "max": max(xs) if xs else float("nan"), "mean": statistics.fmean(xs) if xs else float("nan")}


async def first_books(base, n):
    out = []
    for _ in range(n):
        ex = pro_config(base, *KEYS[1])
        await ex.load_markets()
        t0 = time.perf_counter()
        await asyncio.wait_for(ex.watch_order_book(SYM), 30)
        out.append((time.perf_counter() - t0) * 1000)
        await ex.close()
    return out


async def lag(base, rate, seconds, book_rate):
    seen_ws, seen_rest = {}, {}
    stop = asyncio.Event()
    watcher = pro_config(base, *KEYS[1])
    # ccxt.pro subscribes `@depth@<rate>ms`: 100 by default (as Binance), 0 is
    # Peregrine's every-packet stream.
    watcher.options["watchOrderBookRate"] = book_rate
    driver = pro_config(base, *KEYS[2])
    await watcher.load_markets()
    await driver.load_markets()

    async def watch():
        while not stop.is_set():
            ob = await watcher.watch_order_book(SYM)
            seen_ws.setdefault(ob["nonce"], time.perf_counter())

    async def poll():
        async with aiohttp.ClientSession() as s:
            while not stop.is_set():
                async with s.get(f"{base}/api/v3/depth", params={"symbol": "PGN-USD", "limit": 5}) as r:
                    body = await r.json()
                seen_rest.setdefault(body["lastUpdateId"], time.perf_counter())

    async def drive():
        i = 0
        gap = 1.0 / rate
        next_t = time.perf_counter()
        ids = []
        while not stop.is_set():
            price = 90 + (i % 20) * 0.05
            o = await driver.create_order(SYM, "limit", "buy", 1, price)
            ids.append(o["id"])
            if len(ids) > 10:
                await driver.cancel_order(ids.pop(0), SYM)
            i += 1
            next_t += gap
            await asyncio.sleep(max(0, next_t - time.perf_counter()))
        for oid in ids:
            await driver.cancel_order(oid, SYM)

    tasks = [asyncio.ensure_future(f()) for f in (watch, poll, drive)]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.sleep(1)
    for t in tasks:
        t.cancel()
    await watcher.close()
    await driver.close()
    both = sorted(set(seen_ws) & set(seen_rest))
    return [(seen_ws[u] - seen_rest[u]) * 1000 for u in both], len(seen_ws), len(seen_rest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--first", type=int, default=20)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--json")
    a = ap.parse_args()
    load = open("/proc/loadavg").read().strip()
    # The REST poller asks for the book as fast as it can: no weight limit to hit.
    s = Stack(weight=100_000_000).start()
    try:
        firsts = asyncio.run(first_books(s.base, a.first))
        runs = [(r, asyncio.run(lag(s.base, a.rate, a.seconds, r))) for r in ("100", "0")]
    finally:
        s.stop()
    rows = [summary("time to first book (ms)", firsts)]
    for r, (lags, n_ws, n_rest) in runs:
        rows.append(summary(f"@depth@{r}ms: ccxt.pro - REST, same id (ms)", lags))
        print(f"@depth@{r}ms: update ids seen by the stream {n_ws}, by REST {n_rest}, by both {len(lags)}")
    print(f"ccxt.pro against the gateway (load average {load}), {a.rate} book changes/s for {a.seconds} s each")
    print(f"{'':45} {'n':>5} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8} {'mean':>8}")
    for r in rows:
        print(f"{r['name']:45} {r['n']:>5} {r['p50']:>8.1f} {r['p90']:>8.1f} {r['p99']:>8.1f} {r['max']:>8.1f} {r['mean']:>8.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"loadavg": load, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
