"""A closed-loop latency probe, as the Rust SDK's pinger: one order in flight; the
next goes out from the callback that receives the previous one's answer. Pointed at a
venue index the engine does not have (9), the orchestrator answers every order
itself, so the loop measures strategy -> engine -> strategy through the Python
callback. Prints percentiles of the cycle: the send in one callback (t1) to the
callback that receives its answer.

    python -m peregrine.examples.pinger --name pinger --engine latency --count 200000
"""

import argparse

import peregrine


class Pinger(peregrine.Strategy):
    def __init__(self, count, venue=9, qty=1):
        self.count, self.venue, self.qty = count, venue, qty
        self.sent = 0
        self.cycles = []

    def fire(self, api):
        if self.sent >= self.count:
            api.stop()
            return
        if api.send(self.venue, 1, "buy", 10_000, self.qty) is not None:
            self.sent += 1

    def on_start(self, api):
        self.fire(api)

    def on_reject(self, api, ev):
        self.cycles.append(api.now_ns() - ev.timestamps[0])
        self.fire(api)

    on_ack = on_reject


def percentiles(values):
    v = sorted(values)
    if not v:
        return {}
    at = lambda q: v[min(len(v) - 1, int(q * len(v)))]
    return {"n": len(v), "p50": at(0.5), "p99": at(0.99), "p999": at(0.999), "max": v[-1]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--name", default="pinger")
    p.add_argument("--engine", default="latency")
    p.add_argument("--dir")
    p.add_argument("--count", type=int, default=200_000)
    p.add_argument("--venue", type=int, default=9)
    p.add_argument("--qty", type=int, default=1)
    p.add_argument("--mode", default="batched", choices=["batched", "per_event"])
    p.add_argument("--wait", default="busy-spin")
    p.add_argument("--core", type=int)
    p.add_argument("--duration", type=float, default=120)
    a = p.parse_args()
    s = Pinger(a.count, a.venue, a.qty)
    summary = peregrine.run(s, name=a.name, engine=a.engine, dir=a.dir, mode=a.mode,
                            wait=a.wait, core=a.core, duration=a.duration, receipts=False)
    print(summary["summary"], end="")
    c = percentiles(s.cycles[len(s.cycles) // 10:])  # the first tenth warms up
    print(f"python {a.mode}: t1 -> callback (send to the callback with its answer), ns: {c}")
    print(f"python: {summary['python_calls']} callbacks, {summary['gil_acquisitions']} interpreter acquisitions")


if __name__ == "__main__":
    main()
