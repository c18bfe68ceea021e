// The trading page: book ladder and depth chart, candles, trade tape, order entry
// checked against tick and lot, open orders with cancel, fills, balances. Market
// data comes from one combined stream; the book follows Binance's documented
// snapshot-then-diff procedure; the account's changes from the user-data stream.

import { call, socket, currentKey, saveKey, forgetKey, loadKey, rules, validate, toUnits, el, time } from './api.js';
import { drawDepth, drawCandles } from './charts.js';

const $ = (id) => document.getElementById(id);
const LEVELS = 12;
const state = {
  info: null, sym: null, rules: null, lower: '',
  book: { bids: new Map(), asks: new Map(), lastUpdateId: 0, synced: false, buffer: [], fetching: false },
  bars: [], interval: '1m', trades: [], open: [], stream: null, user: null, listenKey: null,
};

// ---------- market data ----------

function sortedLevels(map, desc) {
  const d = state.rules.pd;
  return [...map.entries()]
    .map(([p, q]) => [p, q, toUnits(p, d)])
    .sort((a, b) => (desc ? (b[2] > a[2] ? 1 : -1) : (a[2] > b[2] ? 1 : -1)))
    .map(([p, q]) => [p, q]);
}

function applyLevels(side, levels) {
  for (const [p, q] of levels) {
    if (Number(q) === 0) side.delete(p); else side.set(p, q);
  }
}

async function resyncBook() {
  const b = state.book;
  if (b.fetching) return;
  b.fetching = true;
  b.synced = false;
  try {
    const snap = await call('GET', '/api/v3/depth', { symbol: state.sym, limit: 1000 });
    b.bids = new Map(snap.bids);
    b.asks = new Map(snap.asks);
    b.lastUpdateId = snap.lastUpdateId;
    b.synced = true;
    const pending = b.buffer.filter((e) => e.u > b.lastUpdateId);
    b.buffer = [];
    let first = true;
    for (const e of pending) {
      if (first && !(e.U <= b.lastUpdateId + 1 && e.u >= b.lastUpdateId + 1)) { b.fetching = false; return resyncBook(); }
      first = false;
      if (!onDiff(e)) return;
    }
  } catch (e) {
    setTimeout(resyncBook, 1000);
  } finally {
    b.fetching = false;
  }
  renderBook();
}

/** Applies one diff event; false (and a resync) if it does not follow on. */
function onDiff(e) {
  const b = state.book;
  if (!b.synced) { b.buffer.push(e); return true; }
  if (e.u <= b.lastUpdateId) return true;
  if (e.U !== b.lastUpdateId + 1) { b.buffer = [e]; resyncBook(); return false; }
  applyLevels(b.bids, e.b);
  applyLevels(b.asks, e.a);
  b.lastUpdateId = e.u;
  return true;
}

let bookQueued = false;
function renderBook() {
  if (bookQueued) return;
  bookQueued = true;
  requestAnimationFrame(() => {
    bookQueued = false;
    const bids = sortedLevels(state.book.bids, true);
    const asks = sortedLevels(state.book.asks, false);
    const mine = new Set(state.open.map((o) => `${o.side}:${o.price}`));
    const rows = (levels, cls, side) => {
      let total = 0;
      const out = levels.slice(0, LEVELS).map(([p, q]) => {
        total += Number(q);
        const tr = el('tr', { class: `${cls}${mine.has(`${side}:${p}`) ? ' mine' : ''}`, 'data-price': p },
          el('td', {}, p), el('td', {}, q), el('td', {}, total.toLocaleString()));
        tr.addEventListener('click', () => { $('price').value = p; check(); });
        return tr;
      });
      return out;
    };
    $('asks').replaceChildren(...rows(asks, 'ask', 'SELL').reverse());
    $('bids').replaceChildren(...rows(bids, 'bid', 'BUY'));
    const spread = bids.length && asks.length ? `spread ${(Number(asks[0][0]) - Number(bids[0][0])).toFixed(state.rules.pd)}` : 'no spread';
    $('spread').replaceChildren(el('tr', { class: 'spread' }, el('td', { colspan: 3 }, spread)));
    drawDepth($('depth'), bids.slice(0, 50), asks.slice(0, 50));
  });
}

function onTrade(t) {
  state.trades.unshift({ time: t.T, price: t.p, qty: t.q, sell: t.m });
  state.trades.length = Math.min(state.trades.length, 40);
  $('last').textContent = t.p;
  renderTape();
}

function renderTape() {
  $('tape').replaceChildren(...state.trades.map((t) =>
    el('tr', { class: t.sell ? 's' : 'b' }, el('td', {}, time(t.time)), el('td', {}, t.price), el('td', {}, t.qty))));
}

function onKline(k) {
  if (k.i !== state.interval) return;
  const bar = [k.t, k.o, k.h, k.l, k.c, k.v, k.T];
  const last = state.bars[state.bars.length - 1];
  if (last && last[0] === k.t) state.bars[state.bars.length - 1] = bar;
  else if (!last || k.t > last[0]) state.bars.push(bar);
  state.bars = state.bars.slice(-300);
  drawCandles($('candles'), state.bars);
}

async function loadHistory() {
  const [bars, trades] = await Promise.all([
    call('GET', '/api/v3/klines', { symbol: state.sym, interval: state.interval, limit: 200 }),
    call('GET', '/api/v3/trades', { symbol: state.sym, limit: 40 }),
  ]);
  state.bars = bars;
  drawCandles($('candles'), state.bars);
  state.trades = trades.reverse().map((t) => ({ time: t.time, price: t.price, qty: t.qty, sell: t.isBuyerMaker }));
  if (state.trades.length) $('last').textContent = state.trades[0].price;
  renderTape();
}

function connectMarket() {
  state.stream && state.stream.close();
  const s = state.lower;
  const streams = [`${s}@depth@100ms`, `${s}@trade`, `${s}@kline_${state.interval}`].join('/');
  state.book.synced = false;
  state.book.buffer = [];
  state.stream = socket(`/stream?streams=${streams}`, (m) => {
    const d = m.data;
    if (d.e === 'depthUpdate') { if (onDiff(d)) renderBook(); }
    else if (d.e === 'trade') onTrade(d);
    else if (d.e === 'kline') onKline(d.k);
  }, () => { resyncBook(); loadHistory(); }, (up) => {
    $('feed').textContent = up ? 'market live' : 'market reconnecting';
    $('feed').className = `pill ${up ? 'up' : 'down'}`;
  });
}

// ---------- account ----------

async function refreshAccount() {
  if (!loadKey()) return;
  try {
    const [open, fills, acct] = await Promise.all([
      call('GET', '/api/v3/openOrders', { symbol: state.sym }, true),
      call('GET', '/api/v3/myTrades', { symbol: state.sym, limit: 30 }, true),
      call('GET', '/api/v3/account', {}, true),
    ]);
    state.open = open;
    $('open').replaceChildren(...open.map((o) => el('tr', { 'data-order-id': o.orderId },
      el('td', {}, o.orderId), el('td', {}, o.clientOrderId), el('td', {}, o.side), el('td', {}, o.type),
      el('td', {}, o.price), el('td', {}, o.origQty), el('td', {}, o.executedQty), el('td', {}, o.status),
      el('td', {}, el('button', { 'data-testid': `cancel-${o.orderId}`, onclick: () => cancel(o.orderId) }, 'cancel')))));
    $('fills').replaceChildren(...fills.reverse().map((t) => el('tr', {},
      el('td', {}, time(t.time)), el('td', {}, t.id), el('td', {}, t.orderId), el('td', {}, t.isBuyer ? 'BUY' : 'SELL'),
      el('td', {}, t.price), el('td', {}, t.qty), el('td', {}, t.isMaker ? 'maker' : 'taker'))));
    $('balances').replaceChildren(...(acct.balances.length ? acct.balances.map((b) =>
      el('tr', {}, el('td', {}, b.asset), el('td', {}, b.free), el('td', {}, b.locked)))
      : [el('tr', {}, el('td', { colspan: 3, class: 'muted' }, 'the exchange keeps no balances'))]));
    renderBook();
  } catch (e) {
    $('user').textContent = `account: ${e.message}`;
    $('user').className = 'pill down';
  }
}

let refreshTimer = null;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refreshAccount, 30);
}

async function connectUser() {
  state.user && state.user.close();
  const key = loadKey();
  if (!key) {
    $('user').textContent = 'no API key';
    $('user').className = 'pill down';
    return;
  }
  try {
    const { listenKey } = await call('POST', '/api/v3/userDataStream', {}, 'key');
    state.listenKey = listenKey;
    state.user = socket(`/ws/${listenKey}`, (ev) => {
      if (ev.e === 'executionReport' || ev.e === 'outboundAccountPosition') refreshSoon();
    }, refreshAccount, (up) => {
      $('user').textContent = up ? `account live (${key.apiKey})` : 'account reconnecting';
      $('user').className = `pill ${up ? 'up' : 'down'}`;
    });
  } catch (e) {
    $('user').textContent = `account: ${e.message}`;
    $('user').className = 'pill down';
  }
}

async function cancel(orderId) {
  try {
    await call('DELETE', '/api/v3/order', { symbol: state.sym, orderId }, true);
    $('result').textContent = `order ${orderId} cancelled`;
    $('result').className = 'ok';
  } catch (e) {
    $('result').textContent = e.message;
    $('result').className = 'error';
  }
  refreshAccount();
}

// ---------- order entry ----------

function side() { return document.querySelector('input[name=side]:checked').value; }

function check() {
  const type = $('type').value;
  $('tifrow').style.display = type === 'LIMIT' ? '' : 'none';
  $('pricerow').style.display = type === 'MARKET' ? 'none' : '';
  $('order').className = side() === 'BUY' ? 'buy' : 'sell';
  const msg = ($('qty').value || $('price').value) ? validate(state.rules, type, $('price').value, $('qty').value) : '';
  $('check').textContent = msg;
  $('submit').disabled = !!msg;
  return !msg;
}

async function submit(e) {
  e.preventDefault();
  if (!check()) return;
  const type = $('type').value;
  const params = { symbol: state.sym, side: side(), type, quantity: $('qty').value.trim(), newOrderRespType: 'RESULT' };
  if (type !== 'MARKET') params.price = $('price').value.trim();
  if (type === 'LIMIT') params.timeInForce = $('tif').value;
  try {
    const r = await call('POST', '/api/v3/order', params, true);
    $('result').textContent = `order ${r.orderId} ${r.status || 'accepted'}`;
    $('result').className = 'ok';
  } catch (err) {
    $('result').textContent = err.message;
    $('result').className = 'error';
  }
  refreshAccount();
}

// ---------- start ----------

function selectSymbol(name) {
  state.sym = name;
  const info = state.info.symbols.find((s) => s.symbol === name);
  state.rules = rules(info);
  state.lower = name.toLowerCase();
  const pf = info.filters.find((f) => f.filterType === 'PRICE_FILTER');
  const lf = info.filters.find((f) => f.filterType === 'LOT_SIZE');
  $('rules').textContent = `tick ${pf.tickSize} · price ${pf.minPrice}–${pf.maxPrice} · lot ${lf.stepSize} · qty ${lf.minQty}–${lf.maxQty}`;
  connectMarket();
  refreshAccount();
  check();
}

async function main() {
  state.info = await call('GET', '/api/v3/exchangeInfo');
  $('symbol').replaceChildren(...state.info.symbols.map((s) => el('option', {}, s.symbol)));
  $('symbol').addEventListener('change', (e) => selectSymbol(e.target.value));
  $('interval').addEventListener('change', (e) => { state.interval = e.target.value; connectMarket(); });
  for (const id of ['type', 'price', 'qty']) $(id).addEventListener('input', check);
  document.querySelectorAll('input[name=side]').forEach((r) => r.addEventListener('change', check));
  $('order').addEventListener('submit', submit);
  $('keyform').addEventListener('submit', (e) => {
    e.preventDefault();
    saveKey($('apikey').value.trim(), $('secret').value.trim(), false);
    connectUser();
  });
  $('forget').addEventListener('click', () => { forgetKey(); connectUser(); });
  const key = await currentKey();
  if (key) $('apikey').value = key.apiKey;
  selectSymbol(state.info.symbols[0].symbol);
  connectUser();
  setInterval(refreshAccount, 5000);
  setInterval(() => {
    if (state.listenKey) call('PUT', '/api/v3/userDataStream', { listenKey: state.listenKey }, 'key').catch(() => {});
  }, 30 * 60 * 1000);
  window.addEventListener('resize', () => { renderBook(); drawCandles($('candles'), state.bars); });
}

main().catch((e) => { $('feed').textContent = `error: ${e.message}`; $('feed').className = 'pill down'; });
