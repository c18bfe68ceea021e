// The trading page: markets list and 24 h statistics, the book (book.js), the price
// chart (pricechart.js), the trade tape, order entry (entry.js) and the account
// (account.js). Market data comes from one combined stream (the book by Binance's
// documented snapshot-then-diff procedure); the account's changes from the
// user-data stream.

import { call, socket, currentKey, saveKey, forgetKey, loadKey, rules, el, time } from './api.js';
import { Book } from './book.js';
import { PriceChart } from './pricechart.js';
import { Entry } from './entry.js';
import { Account } from './account.js';

const $ = (id) => document.getElementById(id);
const state = {
  info: null, sym: null, symInfo: null, rules: null, lower: '', interval: '1m',
  trades: [], stream: null, user: null, listenKey: null, tickers: new Map(),
};

const say = (text, ok) => {
  $('result').textContent = text;
  $('result').className = ok ? 'ok' : 'error';
};
const book = new Book((price) => entry.pick(price));
window.peregrineBook = book; // for tests and the curious
const chart = new PriceChart($('candles'));
const account = new Account({
  sym: () => state.sym,
  rules: () => state.rules,
  say,
  onOpen: (open) => {
    book.mine = new Set(open.map((o) => `${o.side}:${o.price}`));
    book.render();
    entry.check();
  },
});
const entry = new Entry({
  sym: () => state.sym,
  info: () => state.symInfo,
  rules: () => state.rules,
  free: (asset) => account.free(asset),
  say,
  placed: () => account.refresh(),
});

// ---------- market data ----------

/** Runs `fn` at most once per animation frame, however often it is asked for. */
function perFrame(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; fn(); });
  };
}

function onTrade(t) {
  state.trades.unshift({ time: t.T, price: t.p, qty: t.q, sell: t.m });
  state.trades.length = Math.min(state.trades.length, 40);
  renderTape();
}

const renderTape = perFrame(() => {
  if (state.trades.length) $('last').textContent = state.trades[0].price;
  $('tape').replaceChildren(...state.trades.map((t) =>
    el('tr', { class: t.sell ? 's' : 'b' }, el('td', {}, time(t.time)), el('td', {}, t.price), el('td', {}, t.qty))));
});

/** The 24 h statistics in the header (REST answer or `@ticker` event). */
function showStats(s) {
  const pct = s.P ?? s.priceChangePercent;
  const change = s.p ?? s.priceChange;
  $('st-change').textContent = `${change} (${pct}%)`;
  $('st-change').className = String(change).startsWith('-') ? 'down' : 'up';
  $('st-high').textContent = s.h ?? s.highPrice;
  $('st-low').textContent = s.l ?? s.lowPrice;
  $('st-volume').textContent = `${s.v ?? s.volume} ${state.symInfo.baseAsset}`;
  $('st-quote').textContent = `${s.q ?? s.quoteVolume} ${state.symInfo.quoteAsset}`;
}

/** The markets list: every symbol's last price and 24 h change, one row per
 * symbol made once and updated in place (a row is never replaced under a click). */
const symbolRows = new Map();
const renderSymbols = perFrame(() => {
  if (!symbolRows.size) {
    $('symbols').replaceChildren(...state.info.symbols.map((s) => {
      const tr = el('tr', { 'data-symbol': s.symbol }, el('td', {}, s.symbol), el('td', {}, '–'), el('td', {}, ''));
      tr.addEventListener('pointerdown', () => selectSymbol(s.symbol));
      symbolRows.set(s.symbol, tr);
      return tr;
    }));
  }
  for (const [name, tr] of symbolRows) {
    const t = state.tickers.get(name) || {};
    const open = Number(t.o ?? t.openPrice);
    const last = t.c ?? t.lastPrice ?? '–';
    const pct = open > 0 ? (((Number(last) - open) / open) * 100).toFixed(2) : '0.00';
    tr.classList.toggle('on', name === state.sym);
    tr.children[1].textContent = last;
    tr.children[2].textContent = `${pct}%`;
    tr.children[2].className = pct.startsWith('-') ? 'down' : 'up';
  }
});

async function loadHistory() {
  const sym = state.sym;
  const [bars, trades, stats] = await Promise.all([
    call('GET', '/api/v3/klines', { symbol: sym, interval: state.interval, limit: 500 }),
    call('GET', '/api/v3/trades', { symbol: sym, limit: 40 }),
    call('GET', '/api/v3/ticker/24hr', { symbol: sym }),
  ]);
  if (sym !== state.sym) return;
  chart.load(state.rules, state.interval, bars);
  state.trades = trades.reverse().map((t) => ({ time: t.time, price: t.price, qty: t.qty, sell: t.isBuyerMaker }));
  renderTape();
  showStats(stats);
}

function connectMarket() {
  state.stream && state.stream.close();
  const s = state.lower;
  const streams = [`${s}@depth@100ms`, `${s}@trade`, `${s}@kline_${state.interval}`, `${s}@ticker`, '!miniTicker@arr'].join('/');
  book.reset(state.sym, state.rules);
  state.stream = socket(`/stream?streams=${streams}`, (m) => {
    const d = m.data;
    if (m.stream === '!miniTicker@arr') {
      for (const t of d) state.tickers.set(t.s, t);
      renderSymbols();
    } else if (d.e === 'depthUpdate') { if (book.diff(d)) book.render(); }
    else if (d.e === 'trade') onTrade(d);
    else if (d.e === 'kline') chart.update(d.k);
    else if (d.e === '24hrTicker') showStats(d);
  }, () => { book.resync(); loadHistory(); }, (up) => {
    $('feed').textContent = up ? 'market live' : 'market reconnecting';
    $('feed').className = `pill ${up ? 'up' : 'down'}`;
  });
}

// ---------- account ----------

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
      if (ev.e === 'executionReport' || ev.e === 'outboundAccountPosition') account.soon();
    }, () => account.refresh(), (up) => {
      $('user').textContent = up ? `account live (${key.apiKey})` : 'account reconnecting';
      $('user').className = `pill ${up ? 'up' : 'down'}`;
    });
  } catch (e) {
    $('user').textContent = `account: ${e.message}`;
    $('user').className = 'pill down';
  }
}

// ---------- start ----------

function selectSymbol(name) {
  if (name === state.sym) return;
  state.sym = name;
  const info = state.info.symbols.find((s) => s.symbol === name);
  state.symInfo = info;
  state.rules = rules(info);
  state.lower = name.toLowerCase();
  $('symname').textContent = name;
  book.setRules(state.rules);
  const pf = info.filters.find((f) => f.filterType === 'PRICE_FILTER');
  const lf = info.filters.find((f) => f.filterType === 'LOT_SIZE');
  $('rules').textContent = `tick ${pf.tickSize} · price ${pf.minPrice}–${pf.maxPrice} · lot ${lf.stepSize} · qty ${lf.minQty}–${lf.maxQty}`;
  renderSymbols();
  connectMarket();
  account.refresh();
  entry.check();
}

async function main() {
  state.info = await call('GET', '/api/v3/exchangeInfo');
  book.mount($('group'));
  $('interval').addEventListener('change', (e) => { state.interval = e.target.value; connectMarket(); });
  $('keyform').addEventListener('submit', (e) => {
    e.preventDefault();
    saveKey($('apikey').value.trim(), $('secret').value.trim(), false);
    connectUser();
  });
  $('forget').addEventListener('click', () => { forgetKey(); connectUser(); });
  const key = await currentKey();
  if (key) $('apikey').value = key.apiKey;
  for (const t of await call('GET', '/api/v3/ticker/24hr', { type: 'MINI' })) state.tickers.set(t.symbol, t);
  selectSymbol(state.info.symbols[0].symbol);
  connectUser();
  setInterval(() => account.refresh(), 5000);
  setInterval(() => {
    if (state.listenKey) call('PUT', '/api/v3/userDataStream', { listenKey: state.listenKey }, 'key').catch(() => {});
  }, 30 * 60 * 1000);
  window.addEventListener('resize', () => { book.render(); chart.resize(); });
}

main().catch((e) => { $('feed').textContent = `error: ${e.message}`; $('feed').className = 'pill down'; });
