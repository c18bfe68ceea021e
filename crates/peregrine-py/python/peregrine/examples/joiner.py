"""Joins the best bid and the best ask with one order each (post-only, `QTY` units),
and cancels an order the touch has left (it is joined again at the new touch).

Live:   python -m peregrine run joiner.py --name py --engine main
Replay: peregrine replay itch day.itch --symbol AAPL --python joiner.py --plots out/
"""

import peregrine

QTY = 1


class Joiner(peregrine.Strategy):
    def on_start(self, api):
        self.orders = {}  # side -> [client_id, price, cancelling]

    def on_book(self, api, book):
        for side, best in (("buy", book.best_bid), ("sell", book.best_ask)):
            mine = self.orders.get(side)
            if best is None:
                continue
            if mine is None:
                cid = api.send(book.venue, book.instrument, side, best.price, QTY, type="post_only")
                if cid is not None:
                    self.orders[side] = [cid, best.price, False]
            elif mine[1] != best.price and not mine[2]:
                mine[2] = api.cancel(mine[0])

    def done(self, ev):
        if ev.leaves == 0:
            self.orders = {s: o for s, o in self.orders.items() if o[0] != ev.client_id}

    on_fill = on_cancelled = lambda self, api, ev: self.done(ev)

    def on_reject(self, api, ev):
        self.orders = {s: o for s, o in self.orders.items() if o[0] != ev.client_id}


if __name__ == "__main__":
    peregrine.main(Joiner())
