// The account: open orders (cancel one, cancel all, modify by cancel-replace), the
// order history, fills and balances, refreshed from the REST API whenever the
// user-data stream says something changed.

import { call, el, time, toUnits, fromUnits } from './api.js';

const $ = (id) => document.getElementById(id);

/** An order's type with its trigger (waiting or triggered) and iceberg display. */
function describe(o) {
  let t = o.type;
  if (o.trailingDelta) t += ` trail ${o.trailingDelta} bips`;
  else if (o.type.startsWith('STOP_LOSS') || o.type.startsWith('TAKE_PROFIT')) t += ` @ ${o.stopPrice}`;
  if (o.type !== 'LIMIT' && o.type !== 'MARKET' && o.type !== 'LIMIT_MAKER') t += o.isWorking ? ' (triggered)' : ' (waiting)';
  if (Number(o.icebergQty) > 0) t += ` show ${o.icebergQty}`;
  if (o.orderListId >= 0) t += ` list ${o.orderListId}`;
  return t;
}

export class Account {
  constructor(ctx) {
    this.ctx = ctx; // { sym(), rules(), say(text, ok), onOpen(orders) }
    this.open = [];
    this.balances = [];
    this.timer = null;
    this.editing = null; // the order id whose row is a modify form
    for (const b of document.querySelectorAll('.tab[data-tab]')) {
      b.addEventListener('click', () => this.tab(b.dataset.tab));
    }
    $('cancelall').addEventListener('click', () => this.cancelAll());
  }

  tab(name) {
    for (const b of document.querySelectorAll('.tab[data-tab]')) b.classList.toggle('on', b.dataset.tab === name);
    for (const t of document.querySelectorAll('table[data-pane]')) t.hidden = t.dataset.pane !== name;
  }

  soon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 30);
  }

  async refresh() {
    const sym = this.ctx.sym();
    if (!sym) return;
    try {
      const [open, history, fills, acct] = await Promise.all([
        call('GET', '/api/v3/openOrders', { symbol: sym }, true),
        call('GET', '/api/v3/allOrders', { symbol: sym, limit: 50 }, true),
        call('GET', '/api/v3/myTrades', { symbol: sym, limit: 30 }, true),
        call('GET', '/api/v3/account', {}, true),
      ]);
      this.open = open;
      this.balances = acct.balances;
      this.renderOpen();
      this.renderHistory(history);
      $('fills').replaceChildren(...fills.reverse().map((t) => el('tr', {},
        el('td', {}, time(t.time)), el('td', {}, t.id), el('td', {}, t.orderId), el('td', {}, t.isBuyer ? 'BUY' : 'SELL'),
        el('td', {}, t.price), el('td', {}, t.qty), el('td', {}, t.isMaker ? 'maker' : 'taker'))));
      $('balances').replaceChildren(...(acct.balances.length ? acct.balances.map((b) =>
        el('tr', { 'data-asset': b.asset }, el('td', {}, b.asset), el('td', {}, b.free), el('td', {}, b.locked)))
        : [el('tr', {}, el('td', { colspan: 3, class: 'muted' }, 'the exchange keeps no balances'))]));
      this.ctx.onOpen(open);
    } catch (e) {
      $('user').textContent = `account: ${e.message}`;
      $('user').className = 'pill down';
    }
  }

  /** Free balance of `asset` as text, or null when the exchange keeps none. */
  free(asset) {
    const b = this.balances.find((x) => x.asset === asset);
    return b ? b.free : null;
  }

  /** Open orders; a row being modified is left as it is (a refresh does not take
   * the form away from under the person typing in it). */
  renderOpen() {
    const editing = this.editing && document.querySelector(`#open tr[data-order-id="${this.editing}"]`);
    $('open').replaceChildren(...this.open.map((o) => (editing && o.orderId === this.editing ? editing : el('tr', { 'data-order-id': o.orderId },
      el('td', {}, time(o.time)), el('td', {}, o.orderId), el('td', {}, o.clientOrderId), el('td', {}, o.side),
      el('td', { 'data-testid': `type-${o.orderId}` }, describe(o)), el('td', { class: 'oprice' }, o.price), el('td', { class: 'oqty' }, o.origQty),
      el('td', {}, o.executedQty), el('td', {}, o.status),
      el('td', {},
        ...(o.type === 'LIMIT' || o.type === 'LIMIT_MAKER'
          ? [el('button', { 'data-testid': `modify-${o.orderId}`, onclick: () => this.editRow(o) }, 'modify')] : []),
        el('button', { 'data-testid': `cancel-${o.orderId}`, onclick: () => this.cancel(o.orderId) }, 'cancel'))))));
  }

  renderHistory(history) {
    const r = this.ctx.rules();
    $('history').replaceChildren(...history.slice().reverse().map((o) => {
      const filled = toUnits(o.executedQty, r.qd);
      const quote = toUnits(o.cummulativeQuoteQty, r.pd + r.qd);
      const avg = filled && quote !== null && filled > 0n ? fromUnits(quote / filled, r.pd) : '–';
      return el('tr', { 'data-order-id': o.orderId, class: `st-${o.status}` },
        el('td', {}, time(o.updateTime || o.time)), el('td', {}, o.orderId), el('td', {}, o.side), el('td', {}, o.type),
        el('td', {}, o.price), el('td', {}, o.origQty), el('td', {}, o.executedQty), el('td', {}, avg), el('td', {}, o.status));
    }));
  }

  /** Turns an open order's row into a small form: new price and quantity. */
  editRow(o) {
    const row = document.querySelector(`#open tr[data-order-id="${o.orderId}"]`);
    if (!row) return;
    this.editing = o.orderId;
    const price = el('input', { value: o.price, 'data-testid': `modify-price-${o.orderId}`, size: 8 });
    const qty = el('input', { value: o.origQty, 'data-testid': `modify-qty-${o.orderId}`, size: 6 });
    row.querySelector('.oprice').replaceChildren(price);
    row.querySelector('.oqty').replaceChildren(qty);
    const save = el('button', { 'data-testid': `modify-save-${o.orderId}` }, 'save');
    save.addEventListener('click', () => this.modify(o, price.value.trim(), qty.value.trim()));
    row.lastChild.replaceChildren(save, el('button', { onclick: () => { this.editing = null; this.renderOpen(); } }, 'keep'));
  }

  /** Binance's cancel-replace: the order is cancelled and a new one placed (a new
   * order id); nothing is placed when the cancel fails. */
  async modify(o, price, qty) {
    this.editing = null;
    const params = {
      symbol: o.symbol, side: o.side, type: o.type, quantity: qty, cancelReplaceMode: 'STOP_ON_FAILURE',
      cancelOrderId: o.orderId, newOrderRespType: 'RESULT',
    };
    if (o.type !== 'MARKET') params.price = price;
    if (o.type === 'LIMIT') params.timeInForce = o.timeInForce;
    try {
      const r = await call('POST', '/api/v3/order/cancelReplace', params, true);
      this.ctx.say(`order ${o.orderId} replaced by ${r.newOrderResponse.orderId}`, true);
    } catch (e) {
      this.ctx.say(e.message, false);
    }
    this.refresh();
  }

  async cancel(orderId) {
    try {
      await call('DELETE', '/api/v3/order', { symbol: this.ctx.sym(), orderId }, true);
      this.ctx.say(`order ${orderId} cancelled`, true);
    } catch (e) {
      this.ctx.say(e.message, false);
    }
    this.refresh();
  }

  async cancelAll() {
    try {
      const r = await call('DELETE', '/api/v3/openOrders', { symbol: this.ctx.sym() }, true);
      this.ctx.say(`${r.length} orders cancelled`, true);
    } catch (e) {
      this.ctx.say(e.message, false);
    }
    this.refresh();
  }
}
