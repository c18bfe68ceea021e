// The order book: kept in step with the diff stream by Binance's documented
// snapshot-then-diff procedure, shown as a ladder grouped by a chosen price step.
// The ladder's rows are made once and updated in place (a row under the pointer is
// never replaced), and a press on a row is read on `pointerdown`: on a live book a
// click lands on the price it started on.

import { call, toUnits, fromUnits, el } from './api.js';
import { drawDepth } from './charts.js';

export const LEVELS = 12;

export class Book {
  constructor(onPick) {
    this.onPick = onPick;
    this.reset(null, null);
    this.mine = new Set();
    this.group = 1n;
    this.rows = { asks: [], bids: [] };
    this.queued = false;
  }

  reset(sym, rules) {
    this.sym = sym;
    this.rules = rules;
    this.bids = new Map();
    this.asks = new Map();
    this.lastUpdateId = 0;
    this.synced = false;
    this.buffer = [];
    this.fetching = false;
  }

  /** Builds the ladder's rows once, and the grouping choices for this symbol. */
  mount(groupSelect) {
    for (const [id, cls] of [['asks', 'ask'], ['bids', 'bid']]) {
      const body = document.getElementById(id);
      this.rows[id] = Array.from({ length: LEVELS }, () =>
        el('tr', { class: cls }, el('td', {}), el('td', {}), el('td', {})));
      body.replaceChildren(...this.rows[id]);
      body.addEventListener('pointerdown', (e) => {
        const tr = e.target.closest('tr[data-price]');
        if (tr) this.onPick(tr.dataset.price);
      });
    }
    this.groupSelect = groupSelect;
    groupSelect.addEventListener('change', () => { this.group = BigInt(groupSelect.value); this.render(); });
  }

  setRules(rules) {
    this.rules = rules;
    this.group = 1n;
    this.groupSelect.replaceChildren(...[1n, 10n, 100n, 1000n].map((m) =>
      el('option', { value: String(m) }, fromUnits(rules.tick * m, rules.pd))));
  }

  async resync() {
    if (this.fetching || !this.sym) return;
    this.fetching = true;
    this.synced = false;
    const sym = this.sym;
    try {
      const snap = await call('GET', '/api/v3/depth', { symbol: sym, limit: 1000 });
      if (sym !== this.sym) return;
      this.bids = new Map(snap.bids);
      this.asks = new Map(snap.asks);
      this.lastUpdateId = snap.lastUpdateId;
      this.synced = true;
      const pending = this.buffer.filter((e) => e.u > this.lastUpdateId);
      this.buffer = [];
      if (pending.length && !(pending[0].U <= this.lastUpdateId + 1 && pending[0].u >= this.lastUpdateId + 1)) {
        this.fetching = false;
        return this.resync();
      }
      for (const e of pending) if (!this.diff(e)) return;
    } catch (_) {
      setTimeout(() => this.resync(), 1000);
    } finally {
      this.fetching = false;
    }
    this.render();
  }

  /** Applies one diff event; false (and a resync) if it does not follow on. */
  diff(e) {
    if (!this.synced) { this.buffer.push(e); return true; }
    if (e.u <= this.lastUpdateId) return true;
    if (e.U !== this.lastUpdateId + 1) { this.buffer = [e]; this.resync(); return false; }
    for (const [side, levels] of [[this.bids, e.b], [this.asks, e.a]]) {
      for (const [p, q] of levels) if (Number(q) === 0) side.delete(p); else side.set(p, q);
    }
    this.lastUpdateId = e.u;
    return true;
  }

  /** Levels of one side, best first, grouped to the chosen step (bids down, asks
   * up), as [priceText, qtyUnits]. */
  levels(side) {
    const r = this.rules;
    const step = r.tick * this.group;
    const buy = side === this.bids;
    const out = new Map();
    for (const [p, q] of side) {
      const u = toUnits(p, r.pd);
      const g = buy ? (u / step) * step : ((u + step - 1n) / step) * step;
      out.set(g, (out.get(g) || 0n) + toUnits(q, r.qd));
    }
    return [...out.entries()]
      .sort((a, b) => (buy ? (b[0] > a[0] ? 1 : -1) : (a[0] > b[0] ? 1 : -1)))
      .map(([g, q]) => [fromUnits(g, r.pd), q]);
  }

  render() {
    if (this.queued || !this.rules) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      const r = this.rules;
      const bids = this.levels(this.bids);
      const asks = this.levels(this.asks);
      const fill = (rows, levels, side, reversed) => {
        let total = 0n;
        const shown = levels.slice(0, LEVELS).map(([p, q]) => [p, q, (total += q)]);
        rows.forEach((tr, i) => {
          const lvl = shown[reversed ? LEVELS - 1 - i : i];
          const cells = tr.children;
          if (!lvl) {
            tr.removeAttribute('data-price');
            tr.classList.remove('mine');
            for (const c of cells) c.textContent = '';
            return;
          }
          const [p, q, t] = lvl;
          if (tr.dataset.price !== p) tr.dataset.price = p;
          tr.classList.toggle('mine', this.mine.has(`${side}:${p}`) && this.group === 1n);
          cells[0].textContent = p;
          cells[1].textContent = fromUnits(q, r.qd);
          cells[2].textContent = fromUnits(t, r.qd);
        });
      };
      fill(this.rows.asks, asks, 'SELL', true);
      fill(this.rows.bids, bids, 'BUY', false);
      const spread = bids.length && asks.length
        ? `spread ${fromUnits(toUnits(asks[0][0], r.pd) - toUnits(bids[0][0], r.pd), r.pd)}`
        : 'no spread';
      document.getElementById('spread').replaceChildren(el('tr', { class: 'spread' }, el('td', { colspan: 3 }, spread)));
      const plain = (lv) => lv.slice(0, 50).map(([p, q]) => [p, fromUnits(q, r.qd)]);
      drawDepth(document.getElementById('depth'), plain(bids), plain(asks));
    });
  }
}
