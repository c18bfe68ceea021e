// Two small canvas charts of our own: the depth chart and candlesticks. Numbers
// arrive as the API's decimal strings; they are turned into floats only to place
// pixels (never for anything that is sent back).

function fit(canvas) {
  const r = canvas.getBoundingClientRect();
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(r.width * dpr));
  const h = Math.max(1, Math.round(r.height * dpr));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w: r.width, h: r.height };
}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Cumulative depth: bids [[price, qty]] best first, asks best first. */
export function drawDepth(canvas, bids, asks) {
  const { ctx, w, h } = fit(canvas);
  ctx.clearRect(0, 0, w, h);
  const b = bids.map(([p, q]) => [+p, +q]);
  const a = asks.map(([p, q]) => [+p, +q]);
  if (!b.length && !a.length) {
    ctx.fillStyle = css('--muted');
    ctx.fillText('no orders', 8, 16);
    return;
  }
  const cum = (levels) => { let s = 0; return levels.map(([p, q]) => [p, (s += q)]); };
  const cb = cum(b);
  const ca = cum(a);
  const prices = [...cb, ...ca].map((x) => x[0]);
  const lo = Math.min(...prices);
  const hi = Math.max(...prices);
  const top = Math.max(1, ...cb.map((x) => x[1]), ...ca.map((x) => x[1]));
  const pad = 24;
  const x = (p) => pad + ((p - lo) / Math.max(hi - lo, 1e-12)) * (w - 2 * pad);
  const y = (v) => h - pad - (v / top) * (h - 2 * pad);
  const area = (pts, color) => {
    if (!pts.length) return;
    ctx.beginPath();
    ctx.moveTo(x(pts[0][0]), y(0));
    for (const [p, v] of pts) { ctx.lineTo(x(p), y(v)); }
    ctx.lineTo(x(pts[pts.length - 1][0]), y(0));
    ctx.closePath();
    ctx.globalAlpha = 0.25; ctx.fillStyle = color; ctx.fill();
    ctx.globalAlpha = 1; ctx.strokeStyle = color; ctx.lineWidth = 1.5; ctx.stroke();
  };
  area(cb, css('--buy'));
  area(ca, css('--sell'));
  ctx.fillStyle = css('--muted');
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText(bids.length ? bids[bids.length - 1][0] : '', pad, h - 6);
  const right = asks.length ? asks[asks.length - 1][0] : '';
  ctx.fillText(right, w - pad - ctx.measureText(right).width, h - 6);
  ctx.fillText(String(top), 4, pad);
}

/** Candlesticks: bars as the klines API returns them. */
export function drawCandles(canvas, bars) {
  const { ctx, w, h } = fit(canvas);
  ctx.clearRect(0, 0, w, h);
  ctx.font = '11px system-ui, sans-serif';
  if (!bars.length) {
    ctx.fillStyle = css('--muted');
    ctx.fillText('no trades yet', 8, 16);
    return;
  }
  const pad = { l: 8, r: 64, t: 10, b: 20 };
  const shown = bars.slice(-Math.max(10, Math.floor((w - pad.l - pad.r) / 7)));
  const hi = Math.max(...shown.map((b) => +b[2]));
  const lo = Math.min(...shown.map((b) => +b[3]));
  const span = Math.max(hi - lo, 1e-12);
  const y = (p) => pad.t + (1 - (p - lo) / span) * (h - pad.t - pad.b);
  const slot = (w - pad.l - pad.r) / shown.length;
  const body = Math.max(1, slot * 0.7);
  shown.forEach((b, i) => {
    const [o, hh, l, c] = [+b[1], +b[2], +b[3], +b[4]];
    const cx = pad.l + slot * i + slot / 2;
    const color = c >= o ? css('--buy') : css('--sell');
    ctx.strokeStyle = color; ctx.fillStyle = color;
    ctx.beginPath(); ctx.moveTo(cx, y(hh)); ctx.lineTo(cx, y(l)); ctx.stroke();
    const top = y(Math.max(o, c));
    ctx.fillRect(cx - body / 2, top, body, Math.max(1, y(Math.min(o, c)) - top));
  });
  ctx.fillStyle = css('--muted');
  ctx.fillText(shown.reduce((m, b) => (+b[2] === hi ? b[2] : m), ''), w - pad.r + 4, pad.t + 8);
  ctx.fillText(shown.reduce((m, b) => (+b[3] === lo ? b[3] : m), ''), w - pad.r + 4, h - pad.b);
  const last = shown[shown.length - 1][4];
  ctx.fillStyle = css('--fg');
  ctx.fillText(last, w - pad.r + 4, Math.min(h - pad.b, Math.max(pad.t + 20, y(+last) + 4)));
}
