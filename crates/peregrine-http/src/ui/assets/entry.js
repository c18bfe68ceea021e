// Order entry: side, type, price and quantity checked against tick and lot before
// anything is sent; the order's total (price × quantity, exact) and the quantity
// for a share of the available balance; a market order by total (quoteOrderQty).
// All amounts are BigInt units of the API's decimal strings.

import { call, validate, toUnits, fromUnits, decimals } from './api.js';

const $ = (id) => document.getElementById(id);
const pow10 = (n) => 10n ** BigInt(n);

/** A decimal text as [units, decimals], or null. */
function amount(text) {
  const t = String(text || '').trim();
  const u = toUnits(t, decimals(t));
  return u === null ? null : [u, decimals(t)];
}

export class Entry {
  constructor(ctx) {
    this.ctx = ctx; // { sym(), info(), rules(), free(asset), say(text, ok), placed() }
    for (const id of ['type', 'price', 'qty', 'tif']) $(id).addEventListener('input', () => this.changed(id));
    $('total').addEventListener('input', () => this.fromTotal());
    document.querySelectorAll('input[name=side]').forEach((r) => r.addEventListener('change', () => this.changed('side')));
    document.querySelectorAll('.pcts button').forEach((b) => b.addEventListener('click', () => this.percent(BigInt(b.dataset.pct))));
    $('order').addEventListener('submit', (e) => this.submit(e));
  }

  side() { return document.querySelector('input[name=side]:checked').value; }

  /** Sets the price (a click in the book). */
  pick(price) {
    if ($('type').value === 'MARKET') $('type').value = 'LIMIT';
    $('price').value = price;
    this.changed('price');
  }

  changed(what) {
    if (what !== 'total') this.showTotal();
    this.check();
  }

  /** Total = price × quantity, exact (a market order's total is what the user typed). */
  showTotal() {
    const r = this.ctx.rules();
    if (!r || $('type').value === 'MARKET') return;
    const p = toUnits($('price').value, r.pd);
    const q = toUnits($('qty').value, r.qd);
    $('total').value = p !== null && q !== null ? fromUnits(p * q, r.pd + r.qd) : '';
  }

  /** Quantity from a total: the most lots the total pays for at the price. */
  fromTotal() {
    const r = this.ctx.rules();
    if ($('type').value === 'MARKET') { $('qty').value = ''; this.check(); return; }
    const t = amount($('total').value);
    const p = toUnits($('price').value, r.pd);
    if (!t || !p) { this.check(); return; }
    const q = (t[0] * pow10(r.pd + r.qd)) / (p * pow10(t[1]));
    $('qty').value = fromUnits((q / r.step) * r.step, r.qd);
    this.check();
  }

  /** A share of the available balance: of the quote asset for a buy (at the price,
   * or as the total of a market order), of the base asset for a sell. */
  percent(pct) {
    const r = this.ctx.rules();
    const info = this.ctx.info();
    const buy = this.side() === 'BUY';
    const free = amount(this.ctx.free(buy ? info.quoteAsset : info.baseAsset));
    if (!free) { this.ctx.say('no balance known for this account', false); return; }
    const share = [(free[0] * pct) / 100n, free[1]];
    if (!buy) {
      const q = (share[0] * pow10(r.qd)) / pow10(share[1]);
      $('qty').value = fromUnits((q / r.step) * r.step, r.qd);
      this.changed('qty');
      return;
    }
    if ($('type').value === 'MARKET') {
      $('qty').value = '';
      $('total').value = fromUnits(share[0], share[1]);
      this.check();
      return;
    }
    $('total').value = fromUnits(share[0], share[1]);
    this.fromTotal();
  }

  available() {
    const info = this.ctx.info();
    if (!info) return '';
    const asset = this.side() === 'BUY' ? info.quoteAsset : info.baseAsset;
    const free = this.ctx.free(asset);
    return free === null ? '' : `available ${free} ${asset}`;
  }

  check() {
    const r = this.ctx.rules();
    if (!r) return false;
    const type = $('type').value;
    const market = type === 'MARKET';
    $('tifrow').style.display = type === 'LIMIT' ? '' : 'none';
    $('pricerow').style.display = market ? 'none' : '';
    $('order').className = this.side() === 'BUY' ? 'buy' : 'sell';
    $('avail').textContent = this.available();
    let msg = '';
    const byTotal = market && !$('qty').value.trim() && $('total').value.trim();
    if (byTotal) {
      const t = amount($('total').value);
      if (!t || t[0] === 0n || t[1] > r.pd + r.qd) msg = `Total must be a positive amount with at most ${r.pd + r.qd} decimals`;
    } else if ($('qty').value || $('price').value) {
      msg = validate(r, type, $('price').value, $('qty').value);
    }
    $('check').textContent = msg;
    $('submit').disabled = !!msg;
    return !msg;
  }

  async submit(e) {
    e.preventDefault();
    if (!this.check()) return;
    const type = $('type').value;
    const params = { symbol: this.ctx.sym(), side: this.side(), type, newOrderRespType: 'RESULT' };
    const qty = $('qty').value.trim();
    if (type === 'MARKET' && !qty) params.quoteOrderQty = $('total').value.trim();
    else params.quantity = qty;
    if (type !== 'MARKET') params.price = $('price').value.trim();
    if (type === 'LIMIT') params.timeInForce = $('tif').value;
    try {
      const r = await call('POST', '/api/v3/order', params, true);
      this.ctx.say(`order ${r.orderId} ${r.status || 'accepted'}`, true);
    } catch (err) {
      this.ctx.say(err.message, false);
    }
    this.ctx.placed();
  }
}
