// Order entry: side, type, price and quantity checked against tick and lot before
// anything is sent; the order's total (price × quantity, exact) and the quantity
// for a share of the available balance; a market order by total (quoteOrderQty).
// Stop and take-profit types take a stop price or a trailing offset (bips), limit
// types an iceberg display quantity. All amounts are BigInt units of the API's
// decimal strings.

import { call, validate, toUnits, fromUnits, decimals } from './api.js';

const $ = (id) => document.getElementById(id);
const pow10 = (n) => 10n ** BigInt(n);

/** A decimal text as [units, decimals], or null. */
function amount(text) {
  const t = String(text || '').trim();
  const u = toUnits(t, decimals(t));
  return u === null ? null : [u, decimals(t)];
}

/** Types with a limit price. */
const hasPrice = (t) => !['MARKET', 'STOP_LOSS', 'TAKE_PROFIT'].includes(t);
/** Stop and take-profit types. */
const isStop = (t) => t.startsWith('STOP_LOSS') || t.startsWith('TAKE_PROFIT') || t === 'OCO';

export class Entry {
  constructor(ctx) {
    this.ctx = ctx; // { sym(), info(), rules(), free(asset), say(text, ok), placed() }
    for (const id of ['type', 'price', 'qty', 'tif', 'stop', 'trail', 'iceberg', 'ocolimit']) $(id).addEventListener('input', () => this.changed(id));
    $('total').addEventListener('input', () => this.fromTotal());
    document.querySelectorAll('input[name=side]').forEach((r) => r.addEventListener('change', () => this.changed('side')));
    document.querySelectorAll('.pcts button').forEach((b) => b.addEventListener('click', () => this.percent(BigInt(b.dataset.pct))));
    $('order').addEventListener('submit', (e) => this.submit(e));
  }

  side() { return document.querySelector('input[name=side]:checked').value; }

  /** Sets the price (a click in the book). */
  pick(price) {
    if (!hasPrice($('type').value)) $('type').value = 'LIMIT';
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
    if (!r || !hasPrice($('type').value)) return;
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
    const stop = isStop(type);
    $('tifrow').style.display = hasPrice(type) && type !== 'LIMIT_MAKER' ? '' : 'none';
    $('pricerow').style.display = hasPrice(type) ? '' : 'none';
    $('stoprow').style.display = stop ? '' : 'none';
    $('trailrow').style.display = type.startsWith('STOP_LOSS') ? '' : 'none';
    $('icebergrow').style.display = hasPrice(type) && type !== 'OCO' ? '' : 'none';
    $('ocorow').style.display = type === 'OCO' ? '' : 'none';
    if (type === 'OCO') $('tifrow').style.display = 'none';
    $('order').className = this.side() === 'BUY' ? 'buy' : 'sell';
    $('avail').textContent = this.available();
    let msg = '';
    const byTotal = market && !$('qty').value.trim() && $('total').value.trim();
    if (byTotal) {
      const t = amount($('total').value);
      if (!t || t[0] === 0n || t[1] > r.pd + r.qd) msg = `Total must be a positive amount with at most ${r.pd + r.qd} decimals`;
    } else if ($('qty').value || $('price').value) {
      msg = validate(r, hasPrice(type) ? 'LIMIT' : 'MARKET', $('price').value, $('qty').value);
    }
    if (!msg && stop) msg = this.checkStop(r, type);
    if (!msg && type === 'OCO' && $('ocolimit').value.trim()) {
      const m = validate(r, 'LIMIT', $('ocolimit').value, fromUnits(r.minQty, r.qd));
      msg = m ? m.replace('Price', 'Stop limit price') : '';
    }
    if (!msg && hasPrice(type) && $('iceberg').value.trim()) msg = this.checkIceberg(r);
    $('check').textContent = msg;
    $('submit').disabled = !!msg;
    return !msg;
  }

  /** A stop price on the tick, or a trailing offset in bips (not both). */
  checkStop(r, type) {
    const sp = $('stop').value.trim();
    const tr = $('trail').value.trim();
    if (type === 'OCO') return sp ? (validate(r, 'LIMIT', sp, fromUnits(r.minQty, r.qd)) || '').replace('Price', 'Stop price') : 'An OCO needs a stop price';
    if (sp && tr) return 'Give a stop price or a trailing offset, not both';
    if (tr) {
      if (type.startsWith('TAKE_PROFIT')) return 'Trailing take-profit orders are not offered';
      return /^[1-9][0-9]{0,3}$/.test(tr) && Number(tr) <= 10000 ? '' : 'Trailing offset must be 1 to 10000 bips';
    }
    if (!sp) return 'A stop order needs a stop price or a trailing offset';
    const m = validate(r, 'LIMIT', sp, fromUnits(r.minQty, r.qd));
    return m ? m.replace('Price', 'Stop price') : '';
  }

  /** An iceberg's display quantity: on the lot, at least the minimum, below the quantity. */
  checkIceberg(r) {
    const d = toUnits($('iceberg').value, r.qd);
    const q = toUnits($('qty').value, r.qd);
    if (d === null || d === 0n || d % r.step !== 0n || d < r.minQty) {
      return `Display quantity must be a multiple of ${fromUnits(r.step, r.qd)} and at least ${fromUnits(r.minQty, r.qd)}`;
    }
    if (q !== null && d >= q) return 'Display quantity must be below the quantity';
    if (['IOC', 'FOK'].includes($('tif').value)) return 'An iceberg must be GTC';
    return '';
  }

  /** An OCO: a limit-maker leg at the price and a stop leg at the stop price (a
   * stop-limit with the stop limit price, else a stop-market); for a sell the
   * limit leg is above, for a buy below. */
  async submitOco() {
    const sell = this.side() === 'SELL';
    const [lim, stp] = sell ? ['above', 'below'] : ['below', 'above'];
    const params = { symbol: this.ctx.sym(), side: this.side(), quantity: $('qty').value.trim() };
    params[`${lim}Type`] = 'LIMIT_MAKER';
    params[`${lim}Price`] = $('price').value.trim();
    params[`${stp}StopPrice`] = $('stop').value.trim();
    const sl = $('ocolimit').value.trim();
    if (sl) {
      params[`${stp}Type`] = 'STOP_LOSS_LIMIT';
      params[`${stp}Price`] = sl;
      params[`${stp}TimeInForce`] = 'GTC';
    } else {
      params[`${stp}Type`] = 'STOP_LOSS';
    }
    try {
      const r = await call('POST', '/api/v3/orderList/oco', params, true);
      this.ctx.say(`list ${r.orderListId} ${r.listOrderStatus}`, true);
    } catch (err) {
      this.ctx.say(err.message, false);
    }
    this.ctx.placed();
  }

  async submit(e) {
    e.preventDefault();
    if (!this.check()) return;
    const type = $('type').value;
    if (type === 'OCO') { await this.submitOco(); return; }
    const params = { symbol: this.ctx.sym(), side: this.side(), type, newOrderRespType: 'RESULT' };
    const qty = $('qty').value.trim();
    if (type === 'MARKET' && !qty) params.quoteOrderQty = $('total').value.trim();
    else params.quantity = qty;
    if (hasPrice(type)) params.price = $('price').value.trim();
    if (hasPrice(type) && type !== 'LIMIT_MAKER') params.timeInForce = $('tif').value;
    if (isStop(type)) {
      if ($('trail').value.trim()) params.trailingDelta = $('trail').value.trim();
      else params.stopPrice = $('stop').value.trim();
    }
    if (hasPrice(type) && $('iceberg').value.trim()) params.icebergQty = $('iceberg').value.trim();
    try {
      const r = await call('POST', '/api/v3/order', params, true);
      this.ctx.say(`order ${r.orderId} ${r.status || 'accepted'}`, true);
    } catch (err) {
      this.ctx.say(err.message, false);
    }
    this.ctx.placed();
  }
}
