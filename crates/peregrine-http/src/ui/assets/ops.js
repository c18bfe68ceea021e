// The operations page: the order engine's summary (strategies, positions and PnL,
// the 7-segment latency table, venues, rejects) every second, its risk limits, and
// the kill switch behind a typed confirmation, and its release. Needs an operator
// API key. Prices and PnL are shown with the instrument's decimals and currency
// (the engine reports integer units).

import { call, currentKey, el, fromUnits } from './api.js';

const $ = (id) => document.getElementById(id);
const num = (v) => (v === null || v === undefined ? '–' : Number(v).toLocaleString());
const instruments = new Map();
/** Integer units with `dec` decimals, grouped, exact. */
const units = (v, dec) => {
  if (v === null || v === undefined) return '–';
  const t = fromUnits(BigInt(v), dec);
  const [i, f] = t.split('.');
  const neg = i.startsWith('-');
  const g = (neg ? i.slice(1) : i).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${g}${f ? `.${f}` : ''}`;
};
const us = (ns) => (ns === null || ns === undefined ? '–' : (Number(ns) / 1000).toFixed(1));

async function refresh() {
  try {
    const s = await call('GET', '/ops/api/summary', {}, true);
    $('engine').textContent = `engine ${s.engine} up ${Math.round(s.up_ms / 1000)} s`;
    $('engine').className = 'pill up';
    $('totals').textContent = `orders ${num(s.orders)} · acks ${num(s.acks)} · fills ${num(s.fills)} · cancels ${num(s.cancels)} · rejects ${num(s.rejects)} · open ${num(s.open_orders)}`;
    $('strategies').replaceChildren(...s.strategies.map((x) => el('tr', { 'data-strategy': x.name },
      el('td', {}, x.name), el('td', {}, x.state), el('td', {}, x.pid ?? '–'), el('td', {}, x.open),
      el('td', { class: x.killed ? 'killed' : '' }, x.killed ? 'ON' : 'off'),
      el('td', {}, x.killed ? el('button', { 'data-testid': `release-${x.name}`, onclick: () => release(x.name) }, 'release') : ''))));
    $('positions').replaceChildren(...s.positions.map((p) => {
      const i = instruments.get(p.instrument);
      const pd = i ? i.priceDecimals : 0;
      const qd = i ? i.qtyDecimals : 0;
      const money = (v) => `${units(v, pd + qd)}${i ? ` ${i.quote}` : ''}`;
      return el('tr', { 'data-position': p.strategy },
        el('td', {}, p.strategy), el('td', {}, i ? i.symbol : p.instrument), el('td', {}, units(p.net, qd)),
        el('td', {}, num(p.fills)), el('td', {}, p.avg === null ? '–' : units(p.avg, pd)),
        el('td', {}, money(p.realized)), el('td', {}, money(p.unrealized)),
        el('td', { class: String(p.total).startsWith('-') ? 'down' : 'up' }, money(p.total)));
    }));
    $('latency').replaceChildren(...s.latency.map((r) => el('tr', {},
      el('td', {}, r.name), el('td', {}, num(r.n)), el('td', {}, us(r.p50)), el('td', {}, us(r.p99)),
      el('td', {}, us(r.p999)), el('td', {}, us(r.max)))));
    $('venues').replaceChildren(...s.venues.map((v) => el('tr', {},
      el('td', {}, v.name), el('td', {}, num(v.open)), el('td', {}, num(v.tally.orders ?? v.tally.routed)),
      el('td', {}, num(v.tally.fills)), el('td', {}, num(v.tally.rejects)))));
    $('rejects').replaceChildren(...[...s.risk_rejects, ...s.engine_rejects].map((r) => el('tr', {},
      el('td', {}, r.code), el('td', {}, r.name), el('td', {}, num(r.count)))));
    const scope = $('kscope');
    const names = s.strategies.map((x) => x.name);
    if (scope.options.length !== names.length + 1) {
      scope.replaceChildren(el('option', { value: '*' }, 'all strategies'), ...names.map((n) => el('option', { value: n }, n)));
    }
  } catch (e) {
    $('engine').textContent = `engine: ${e.message}`;
    $('engine').className = 'pill down';
  }
}

async function loadLimits() {
  try {
    const r = await call('GET', '/ops/api/limits', {}, true);
    $('limits').textContent = r.reply;
  } catch (e) {
    $('limits').textContent = e.message;
  }
}

async function setLimits(e) {
  e.preventDefault();
  try {
    const r = await call('POST', '/ops/api/limits', { strategy: $('lstrategy').value.trim(), set: $('lset').value.trim() }, true);
    $('lresult').textContent = r.reply;
    $('lresult').className = r.ok ? 'ok' : 'error';
    loadLimits();
  } catch (err) {
    $('lresult').textContent = err.message;
    $('lresult').className = 'error';
  }
}

function killDialog() {
  $('kconfirm').value = '';
  $('kgo').disabled = true;
  $('kresult').textContent = '';
  $('modal').hidden = false;
  $('kconfirm').focus();
}

async function engage() {
  $('kgo').disabled = true;
  $('kresult').textContent = 'engaging: waiting for the venues to confirm every cancel…';
  try {
    const r = await call('POST', '/ops/api/kill', { strategy: $('kscope').value, confirm: 'KILL' }, true);
    $('kresult').textContent = r.reply;
    $('kresult').className = r.ok ? 'ok' : 'error';
  } catch (e) {
    $('kresult').textContent = e.message;
    $('kresult').className = 'error';
  }
  refresh();
}

async function release(strategy) {
  try {
    const r = await call('POST', '/ops/api/release', strategy ? { strategy } : {}, true);
    $('rresult').textContent = r.reply;
    $('rresult').className = r.ok ? 'ok' : 'error';
  } catch (e) {
    $('rresult').textContent = e.message;
    $('rresult').className = 'error';
  }
  refresh();
}

async function main() {
  await currentKey();
  const cfg = await (await fetch('/ui/config.json')).json();
  for (const i of cfg.instruments || []) instruments.set(i.id, i);
  $('release').addEventListener('click', () => release(null));
  $('kill').addEventListener('click', killDialog);
  $('kcancel').addEventListener('click', () => { $('modal').hidden = true; });
  $('kconfirm').addEventListener('input', () => { $('kgo').disabled = $('kconfirm').value !== 'KILL'; });
  $('kgo').addEventListener('click', engage);
  $('limitform').addEventListener('submit', setLimits);
  refresh();
  loadLimits();
  setInterval(refresh, 1000);
}

main();
