// The price chart: candles and volume on a time axis (UTC), with TradingView's
// Lightweight Charts when the build brought it in (window.LightweightCharts), else
// the page's own canvas candles. Periods without trades are kept on the axis as
// empty slots (whitespace), so a quiet hour shows as an hour, not as nothing.

import { drawCandles } from './charts.js';

const SECONDS = { '1s': 1, '1m': 60, '3m': 180, '5m': 300, '15m': 900, '30m': 1800, '1h': 3600,
  '2h': 7200, '4h': 14400, '6h': 21600, '8h': 28800, '12h': 43200, '1d': 86400 };
/** Empty slots inserted at most, per gap (a very long gap is cut short). */
const MAX_GAP = 600;

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Bars (klines as the API returns them) to candle and volume points, with the
 * empty periods between them as whitespace. */
export function points(bars, interval) {
  const step = SECONDS[interval];
  const candles = [];
  const volume = [];
  let prev = null;
  for (const b of bars) {
    const t = Math.floor(b[0] / 1000);
    if (step && prev !== null) {
      const missing = Math.min((t - prev) / step - 1, MAX_GAP);
      for (let i = missing; i >= 1; i--) {
        const gap = t - i * step;
        candles.push({ time: gap });
        volume.push({ time: gap });
      }
    }
    const [o, h, l, c, v] = [+b[1], +b[2], +b[3], +b[4], +b[5]];
    candles.push({ time: t, open: o, high: h, low: l, close: c });
    volume.push({ time: t, value: v, color: c >= o ? css('--buy-dim') : css('--sell-dim') });
    prev = t;
  }
  return { candles, volume };
}

export class PriceChart {
  constructor(container) {
    this.container = container;
    this.bars = [];
    this.interval = '1m';
    this.lib = window.LightweightCharts && window.LightweightCharts.createChart ? window.LightweightCharts : null;
    if (this.lib) this.build();
    else {
      this.canvas = document.createElement('canvas');
      this.canvas.className = 'chart';
      container.replaceChildren(this.canvas);
    }
    // For tests and the curious: the chart's state.
    window.peregrineChart = this;
  }

  build() {
    const L = this.lib;
    this.chart = L.createChart(this.container, {
      autoSize: true,
      layout: { background: { color: css('--panel') }, textColor: css('--muted'), attributionLogo: true },
      grid: { vertLines: { color: css('--line') }, horzLines: { color: css('--line') } },
      timeScale: { timeVisible: true, secondsVisible: false, borderColor: css('--line') },
      rightPriceScale: { borderColor: css('--line') },
      crosshair: { mode: 0 },
    });
    this.candles = this.chart.addSeries(L.CandlestickSeries, {
      upColor: css('--buy'), downColor: css('--sell'), borderVisible: false,
      wickUpColor: css('--buy'), wickDownColor: css('--sell'),
    });
    this.volume = this.chart.addSeries(L.HistogramSeries, {
      priceFormat: { type: 'volume' }, priceScaleId: 'volume', lastValueVisible: false, priceLineVisible: false,
    });
    this.volume.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
    this.candles.priceScale().applyOptions({ scaleMargins: { top: 0.1, bottom: 0.25 } });
  }

  /** A new symbol or interval: its rules (for the price format) and its bars. */
  load(rules, interval, bars) {
    this.interval = interval;
    this.bars = bars.slice(-500);
    if (this.lib) {
      const minMove = Number(rules.tick) / 10 ** rules.pd;
      this.candles.applyOptions({ priceFormat: { type: 'price', precision: rules.pd, minMove } });
      this.chart.applyOptions({ timeScale: { secondsVisible: interval === '1s' } });
      const { candles, volume } = points(this.bars, interval);
      this.candles.setData(candles);
      this.volume.setData(volume);
      this.chart.timeScale().scrollToRealTime();
    } else {
      drawCandles(this.canvas, this.bars);
    }
  }

  /** A kline event's bar (`k` of the stream). */
  update(k) {
    if (k.i !== this.interval) return;
    const bar = [k.t, k.o, k.h, k.l, k.c, k.v, k.T];
    const last = this.bars[this.bars.length - 1];
    if (last && last[0] === k.t) this.bars[this.bars.length - 1] = bar;
    else if (!last || k.t > last[0]) this.bars.push(bar);
    else return;
    this.bars = this.bars.slice(-500);
    if (!this.lib) { drawCandles(this.canvas, this.bars); return; }
    // A bar after a quiet stretch: redraw with the gap (setData); else update.
    const prev = this.bars[this.bars.length - 2];
    const step = (SECONDS[this.interval] || 0) * 1000;
    if (prev && step && k.t - prev[0] > step && last && last[0] !== k.t) {
      const { candles, volume } = points(this.bars, this.interval);
      this.candles.setData(candles);
      this.volume.setData(volume);
      return;
    }
    const { candles, volume } = points([bar], this.interval);
    this.candles.update(candles[0]);
    this.volume.update(volume[0]);
  }

  resize() {
    if (!this.lib) drawCandles(this.canvas, this.bars);
  }
}
