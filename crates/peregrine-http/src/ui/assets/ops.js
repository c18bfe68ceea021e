// The operations page: the order engine's summary (strategies, positions and PnL,
// the 7-segment latency table, venues, rejects) every second, its risk limits, and
// the kill switch behind a typed confirmation. Needs an operator API key.

import { call, currentKey, el } from './api.js';

const $ = (id) => document.getElementById(id);
const num = (v) => (v === null || v === undefined ? '–' : Number(v).toLocaleString());

async function refresh() {
  try {
    const s = await call('GET', '/ops/api/summary', {}, true);
    $('engine').textContent = `engine ${s.engine} up ${Math.round(s.up_ms / 1000)} s`;
    $('engine').className = 'pill up';
    $('totals').textContent = `orders ${num(s.orders)} · acks ${num(s.acks)} · fills ${num(s.fills)} · cancels ${num(s.cancels)} · rejects ${num(s.rejects)} · open ${num(s.open_orders)}`;
    $('strategies').replaceChildren(...s.strategies.map((x) => el('tr', { 'data-strategy': x.name },
      el('td', {}, x.name), el('td', {}, x.state), el('td', {}, x.pid ?? '–'), el('td', {}, x.open),
      el('td', { class: x.killed ? 'killed' : '' }, x.killed ? 'ON' : 'off'))));
    $('positions').replaceChildren(...s.positions.map((p) => el('tr', {},
      el('td', {}, p.strategy), el('td', {}, p.instrument), el('td', {}, num(p.net)), el('td', {}, num(p.fills)),
      el('td', {}, num(p.avg)), el('td', {}, num(p.realized)), el('td', {}, num(p.unrealized)), el('td', {}, num(p.total)))));
    $('latency').replaceChildren(...s.latency.map((r) => el('tr', {},
      el('td', {}, r.name), el('td', {}, num(r.n)), el('td', {}, num(r.p50)), el('td', {}, num(r.p99)),
      el('td', {}, num(r.p999)), el('td', {}, num(r.max)))));
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

async function main() {
  await currentKey();
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
