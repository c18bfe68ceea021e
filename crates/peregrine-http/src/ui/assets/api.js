// The gateway's own API, as the pages use it: signed REST requests (HMAC-SHA256
// in the browser with WebCrypto, like any Binance client), streams, and exact
// decimal arithmetic on the API's decimal strings (BigInt, never floats).

const KEY_STORE = 'peregrine.apiKey';

export function loadKey() {
  try {
    const k = JSON.parse(localStorage.getItem(KEY_STORE) || 'null');
    if (k && k.apiKey && k.secretKey) return k;
  } catch (_) { /* a bad stored value is no key */ }
  return null;
}

export function saveKey(apiKey, secretKey, operator) {
  localStorage.setItem(KEY_STORE, JSON.stringify({ apiKey, secretKey, operator: !!operator }));
}

export function forgetKey() {
  localStorage.removeItem(KEY_STORE);
}

/** The key to use: the stored one, else the one the gateway offers for a demo. */
export async function currentKey() {
  const stored = loadKey();
  if (stored) return stored;
  const cfg = await (await fetch('/ui/config.json')).json();
  if (cfg.prefill) {
    saveKey(cfg.prefill.apiKey, cfg.prefill.secretKey, cfg.prefill.operator);
    return loadKey();
  }
  return null;
}

const hex = (buf) => Array.from(new Uint8Array(buf)).map((b) => b.toString(16).padStart(2, '0')).join('');

async function hmac(secret, text) {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', key, enc.encode(text)));
}

export class ApiError extends Error {
  constructor(status, code, msg) {
    super(`${msg} (${code})`);
    this.status = status;
    this.code = code;
  }
}

/** One request. `auth`: false (public), 'key' (API key header only) or true
 * (SIGNED: key, timestamp and signature). */
export async function call(method, path, params = {}, auth = false) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.append(k, String(v));
  const headers = {};
  if (auth) {
    const key = loadKey();
    if (!key) throw new ApiError(401, -2014, 'No API key: enter one at the top of the page');
    headers['X-MBX-APIKEY'] = key.apiKey;
    if (auth === true) {
      q.append('timestamp', String(Date.now()));
      q.append('signature', await hmac(key.secretKey, q.toString()));
    }
  }
  const url = q.toString() ? `${path}?${q}` : path;
  const r = await fetch(url, { method, headers });
  const body = await r.json().catch(() => ({ code: -1000, msg: `HTTP ${r.status}` }));
  if (!r.ok) throw new ApiError(r.status, body.code, body.msg);
  return body;
}

/** A WebSocket that reconnects; `onOpen` runs on every (re)connection. */
export function socket(url, onMessage, onOpen, onState) {
  let ws = null;
  let closed = false;
  let wait = 250;
  const open = () => {
    const full = url.startsWith('ws') ? url : `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${url}`;
    ws = new WebSocket(full);
    ws.onopen = () => { wait = 250; onState && onState(true); onOpen && onOpen(); };
    ws.onmessage = (e) => onMessage(JSON.parse(e.data));
    ws.onclose = () => {
      onState && onState(false);
      if (!closed) setTimeout(open, wait = Math.min(wait * 2, 5000));
    };
  };
  open();
  return { close() { closed = true; ws && ws.close(); } };
}

// ---- exact decimals ----

/** "12.34" with `dec` decimals → BigInt units, or null if not a positive exact amount. */
export function toUnits(text, dec) {
  const t = String(text).trim();
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(t)) return null;
  let [i, f = ''] = t.split('.');
  f = f.replace(/0+$/, '');
  if (f.length > dec) return null;
  return BigInt((i || '0') + f.padEnd(dec, '0'));
}

/** BigInt units → decimal text with `dec` decimals. */
export function fromUnits(u, dec) {
  const neg = u < 0n;
  let s = (neg ? -u : u).toString().padStart(dec + 1, '0');
  if (dec > 0) s = `${s.slice(0, -dec)}.${s.slice(-dec)}`;
  return (neg ? '-' : '') + s;
}

export const decimals = (text) => (String(text).split('.')[1] || '').length;

/** The symbol's trading rules from exchangeInfo, as BigInt units. */
export function rules(symbolInfo) {
  const pf = symbolInfo.filters.find((f) => f.filterType === 'PRICE_FILTER');
  const lf = symbolInfo.filters.find((f) => f.filterType === 'LOT_SIZE');
  const pd = decimals(pf.tickSize);
  const qd = decimals(lf.stepSize);
  return {
    pd, qd,
    tick: toUnits(pf.tickSize, pd), minPrice: toUnits(pf.minPrice, pd), maxPrice: toUnits(pf.maxPrice, pd),
    step: toUnits(lf.stepSize, qd), minQty: toUnits(lf.minQty, qd), maxQty: toUnits(lf.maxQty, qd),
  };
}

/** Checks an order against tick and lot; returns an error text or ''. */
export function validate(r, type, price, qty) {
  const q = toUnits(qty, r.qd);
  if (q === null || q === 0n) return `Quantity must be a positive number with at most ${r.qd} decimals`;
  if (q % r.step !== 0n) return `Quantity must be a multiple of the lot size ${fromUnits(r.step, r.qd)}`;
  if (q < r.minQty || q > r.maxQty) return `Quantity must be between ${fromUnits(r.minQty, r.qd)} and ${fromUnits(r.maxQty, r.qd)}`;
  if (type === 'MARKET') return '';
  const p = toUnits(price, r.pd);
  if (p === null || p === 0n) return `Price must be a positive number with at most ${r.pd} decimals`;
  if (p % r.tick !== 0n) return `Price must be a multiple of the tick size ${fromUnits(r.tick, r.pd)}`;
  if (p < r.minPrice || p > r.maxPrice) return `Price must be between ${fromUnits(r.minPrice, r.pd)} and ${fromUnits(r.maxPrice, r.pd)}`;
  return '';
}

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

export const time = (ms) => new Date(ms).toISOString().slice(11, 23);
