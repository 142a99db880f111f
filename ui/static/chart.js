// A small SVG line chart for time series, shared by the console's pages.
//
//   const svg = lineChart([{name: 'bytes in', points: [[t_ms, v], ...]}],
//                         {title: 'Throughput', yFormat: fmtBytes, height: 180});
//   parent.append(svg);
//   svg.update(newSeries);   // redraw in place (keeps the element, so a
//                            // polling page does not flicker)
//
// It draws at the element's real pixel width (a ResizeObserver redraws it
// when the layout changes), so text and lines stay crisp instead of being
// scaled by a viewBox. No dependencies, nothing fetched.

const NS = 'http://www.w3.org/2000/svg';

// Colours chosen to stay distinguishable for the common colour-vision
// deficiencies (Okabe–Ito order, darkest first).
export const palette = ['#1f6feb', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#6e40c9', '#8c6d1f', '#0b7285', '#999999'];

function el(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

// niceStep rounds a raw step up to 1, 2, 2.5 or 5 × 10^k (whole steps
// of 1, 2 or 5 × 10^k, at least 1, when integer).
function niceStep(raw, integer) {
  if (integer && raw < 1) return 1;
  if (!(raw > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of integer && p < 10 ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]) {
    if (raw <= m * p) return m * p;
  }
  return 10 * p;
}

// yTicks covers [lo, hi] with about n round ticks.
// binary (byte values) makes the steps round in KiB, MiB, ... instead.
function yTicks(lo, hi, n, integer, binary) {
  if (hi === lo) { hi = lo + 1; }
  let step;
  if (binary) {
    // Steps of 1, 2, 2.5, 5 × 10^k of the largest value's unit.
    const top = Math.max(Math.abs(lo), Math.abs(hi));
    const unit = top >= 1024 ? Math.pow(1024, Math.floor(Math.log(top) / Math.log(1024))) : 1;
    step = niceStep((hi - lo) / n / unit, unit === 1) * unit;
  } else {
    step = niceStep((hi - lo) / n, integer);
  }
  const start = Math.floor(lo / step) * step;
  const ticks = [];
  for (let v = start; v <= hi + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  if (ticks[ticks.length - 1] < hi) ticks.push(+(ticks[ticks.length - 1] + step).toPrecision(12));
  return ticks;
}

// Time steps a tick can fall on, in ms.
const timeSteps = [1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 21600e3, 43200e3, 86400e3];

function timeTicks(t0, t1, n) {
  const span = Math.max(t1 - t0, 1);
  let step = timeSteps[timeSteps.length - 1];
  for (const s of timeSteps) { if (span / s <= n) { step = s; break; } }
  // Align to local time so ticks land on :00, :15, ... of the wall clock.
  const off = new Date(t0).getTimezoneOffset() * 60e3;
  const ticks = [];
  for (let t = Math.ceil((t0 - off) / step) * step + off; t <= t1; t += step) ticks.push(t);
  return { ticks, step };
}

function pad2(n) { return String(n).padStart(2, '0'); }

function fmtTime(t, step) {
  const d = new Date(t);
  const hm = pad2(d.getHours()) + ':' + pad2(d.getMinutes());
  if (step >= 86400e3) return (d.getMonth() + 1) + '/' + d.getDate();
  return step < 60e3 ? hm + ':' + pad2(d.getSeconds()) : hm;
}

function fmtClock(t) {
  const d = new Date(t);
  return pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
}

function defaultFormat(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(1) + 'G';
  if (a >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (a >= 1e4) return (v / 1e3).toFixed(1) + 'k';
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(a < 10 ? 2 : 1);
}

// lineChart returns an <svg class="line-chart"> drawing series, each
// {name, points: [[t_ms, value], ...]} (points sorted by time; null
// values leave a gap). opts: {title, yFormat(v) → string, height (px,
// default 180), integer (whole-number y ticks, for counts such as lag),
// binary (ticks round in KiB/MiB, for byte values),
// empty (the text shown without data)}. The element has update(series)
// to redraw with new data.
export function lineChart(series, opts) {
  opts = opts || {};
  const height = opts.height || 180;
  const fmt = opts.yFormat || defaultFormat;
  const svg = el('svg', { class: 'line-chart', role: 'img', height: String(height) });
  // Inline size so the chart works whatever the page's CSS says.
  svg.style.width = '100%';
  svg.style.height = height + 'px';
  svg.style.display = 'block';
  svg.style.overflow = 'visible';
  let data = series || [];
  let width = 0;

  function draw() {
    const w = Math.max(Math.round(svg.getBoundingClientRect().width) || 0, 0) || 600;
    width = w;
    svg.setAttribute('viewBox', `0 0 ${w} ${height}`);
    svg.replaceChildren();
    if (opts.title) svg.append(el('title', {}, opts.title));

    const shown = data.filter((s) => s && Array.isArray(s.points));
    const all = [];
    for (const s of shown) for (const p of s.points) if (p && p[1] !== null && p[1] !== undefined && !Number.isNaN(+p[1])) all.push(p);

    // Layout: title row, legend row, plot, time labels.
    const top = opts.title ? 20 : 6;
    const legendH = shown.length > 0 ? 18 : 0;
    let y = 14;
    if (opts.title) {
      svg.append(el('text', { x: 4, y, class: 'chart-title', 'font-weight': 600, 'font-size': 13, fill: 'currentColor' }, opts.title));
    }

    // Legend: coloured swatch + name, wrapped onto one row (names cut to fit).
    const lg = el('g', { class: 'chart-legend', 'font-size': 11, fill: 'currentColor' });
    let lx = 4;
    const ly = top + 10;
    shown.forEach((s, i) => {
      const name = String(s.name ?? '');
      const label = name.length > 28 ? name.slice(0, 27) + '…' : name;
      const approx = 16 + label.length * 6.2 + 12;
      if (lx + approx > w && lx > 4) return; // out of room: the tooltip still names it
      lg.append(el('rect', { x: lx, y: ly - 8, width: 10, height: 10, rx: 2, fill: palette[i % palette.length] }));
      lg.append(el('text', { x: lx + 14, y: ly + 1 }, label));
      lx += approx;
    });
    svg.append(lg);

    const left = 56;
    const right = 10;
    const plotTop = top + legendH + 4;
    const bottom = height - 18;
    const pw = Math.max(w - left - right, 10);
    const ph = Math.max(bottom - plotTop, 10);

    if (all.length === 0) {
      svg.append(el('rect', { x: left, y: plotTop, width: pw, height: ph, fill: 'none', stroke: '#dde1e7' }));
      svg.append(el('text', { x: left + pw / 2, y: plotTop + ph / 2 + 4, 'text-anchor': 'middle', 'font-size': 12, fill: '#5d6878' }, opts.empty || 'No data yet'));
      return;
    }

    let t0 = Infinity, t1 = -Infinity, lo = Infinity, hi = -Infinity;
    for (const [t, v] of all) {
      if (t < t0) t0 = t;
      if (t > t1) t1 = t;
      if (+v < lo) lo = +v;
      if (+v > hi) hi = +v;
    }
    if (t1 === t0) { t0 -= 30e3; t1 += 30e3; }
    lo = Math.min(lo, 0); // rates and lag read best from zero
    if (hi <= lo) hi = lo + 1;
    const yt = yTicks(lo, hi, 4, opts.integer, opts.binary);
    lo = yt[0];
    hi = yt[yt.length - 1];
    const X = (t) => left + ((t - t0) / (t1 - t0)) * pw;
    const Y = (v) => plotTop + ph - ((v - lo) / (hi - lo)) * ph;

    // Grid and y labels.
    const grid = el('g', { class: 'chart-grid', 'font-size': 11, fill: '#5d6878' });
    for (const v of yt) {
      const yy = Math.round(Y(v)) + 0.5;
      grid.append(el('line', { x1: left, x2: left + pw, y1: yy, y2: yy, stroke: v === 0 ? '#b8c0cc' : '#eceff3' }));
      grid.append(el('text', { x: left - 6, y: yy + 4, 'text-anchor': 'end' }, fmt(v)));
    }
    // Time labels.
    const { ticks, step } = timeTicks(t0, t1, Math.max(2, Math.floor(pw / 90)));
    for (const t of ticks) {
      const xx = Math.round(X(t)) + 0.5;
      grid.append(el('line', { x1: xx, x2: xx, y1: plotTop + ph, y2: plotTop + ph + 4, stroke: '#b8c0cc' }));
      // Labels at the plot's ends stay inside the element.
      const anchor = xx > w - 28 ? 'end' : xx < left + 20 ? 'start' : 'middle';
      grid.append(el('text', { x: anchor === 'end' ? w - 2 : xx, y: height - 4, 'text-anchor': anchor }, fmtTime(t, step)));
    }
    svg.append(grid);

    // Lines; a null value or a gap of more than 3 median intervals breaks the line.
    shown.forEach((s, i) => {
      const pts = s.points.filter((p) => p);
      const gaps = [];
      for (let k = 1; k < pts.length; k++) gaps.push(pts[k][0] - pts[k - 1][0]);
      gaps.sort((a, b) => a - b);
      const maxGap = gaps.length ? gaps[Math.floor(gaps.length / 2)] * 3.5 : Infinity;
      let d = '';
      let prevT = null;
      for (const [t, v] of pts) {
        if (v === null || v === undefined || Number.isNaN(+v)) { prevT = null; continue; }
        const cmd = prevT === null || t - prevT > maxGap ? 'M' : 'L';
        d += cmd + X(t).toFixed(1) + ' ' + Y(+v).toFixed(1);
        prevT = t;
      }
      const color = palette[i % palette.length];
      svg.append(el('path', { d, fill: 'none', stroke: color, 'stroke-width': 1.8, 'stroke-linejoin': 'round', 'stroke-linecap': 'round', class: 'chart-line' }));
      // A lone point would be invisible as a path: mark it.
      if (pts.length === 1 && pts[0][1] !== null) {
        svg.append(el('circle', { cx: X(pts[0][0]), cy: Y(+pts[0][1]), r: 2.5, fill: color }));
      }
    });

    // Hover: a vertical rule at the nearest sample time and a box with
    // every series' value there.
    const hover = el('g', { class: 'chart-hover', visibility: 'hidden', 'pointer-events': 'none', 'font-size': 11 });
    const rule = el('line', { y1: plotTop, y2: plotTop + ph, stroke: '#8c959f', 'stroke-dasharray': '3 3' });
    const box = el('rect', { rx: 4, fill: '#0d2538', opacity: 0.92 });
    const txt = el('text', { fill: '#fff' });
    const dots = el('g');
    hover.append(rule, dots, box, txt);
    const catcher = el('rect', { x: left, y: plotTop, width: pw, height: ph, fill: 'transparent' });
    svg.append(catcher, hover);

    const times = [...new Set(all.map((p) => p[0]))].sort((a, b) => a - b);
    catcher.addEventListener('mouseleave', () => hover.setAttribute('visibility', 'hidden'));
    catcher.addEventListener('mousemove', (ev) => {
      const r = svg.getBoundingClientRect();
      const mx = (ev.clientX - r.left) * (w / (r.width || w));
      const tm = t0 + ((mx - left) / pw) * (t1 - t0);
      // Nearest sample time (binary search).
      let a = 0, b = times.length - 1;
      while (a < b) { const m = (a + b) >> 1; if (times[m] < tm) a = m + 1; else b = m; }
      let t = times[a];
      if (a > 0 && Math.abs(times[a - 1] - tm) < Math.abs(t - tm)) t = times[a - 1];
      const xx = X(t);
      rule.setAttribute('x1', xx);
      rule.setAttribute('x2', xx);
      dots.replaceChildren();
      txt.replaceChildren();
      const lines = [fmtClock(t)];
      shown.forEach((s, i) => {
        const p = s.points.find((q) => q && q[0] === t);
        if (!p) return;
        lines.push({ name: String(s.name ?? ''), v: p[1], color: palette[i % palette.length] });
        if (p[1] !== null && p[1] !== undefined) dots.append(el('circle', { cx: xx, cy: Y(+p[1]), r: 3, fill: palette[i % palette.length], stroke: '#fff' }));
      });
      const shownLines = lines.slice(0, 11);
      if (lines.length > 11) shownLines.push('… ' + (lines.length - 11) + ' more');
      let maxLen = 0;
      shownLines.forEach((ln, k) => {
        const s = typeof ln === 'string' ? ln : (ln.name.length > 30 ? ln.name.slice(0, 29) + '…' : ln.name) + ': ' + fmt(ln.v === null ? null : +ln.v);
        maxLen = Math.max(maxLen, s.length);
        const ts = el('tspan', { x: 0, dy: k === 0 ? 0 : 14, 'font-weight': k === 0 ? 600 : null }, s);
        if (typeof ln !== 'string') ts.setAttribute('fill', '#fff');
        txt.append(ts);
      });
      const bw = maxLen * 6.3 + 16;
      const bh = shownLines.length * 14 + 8;
      let bx = xx + 10;
      if (bx + bw > w) bx = xx - 10 - bw;
      const by = Math.max(plotTop, Math.min(plotTop + ph - bh, 0 + plotTop));
      box.setAttribute('x', bx);
      box.setAttribute('y', by);
      box.setAttribute('width', bw);
      box.setAttribute('height', bh);
      txt.setAttribute('transform', `translate(${bx + 8},${by + 15})`);
      for (const ts of txt.children) ts.setAttribute('x', 0);
      hover.setAttribute('visibility', 'visible');
    });
  }

  svg.update = (s) => { data = s || []; draw(); };
  draw();
  // Redraw at the real width once laid out, and whenever it changes.
  if (typeof ResizeObserver !== 'undefined') {
    const ro = new ResizeObserver(() => {
      const w = Math.round(svg.getBoundingClientRect().width);
      if (w > 0 && w !== width) draw();
    });
    ro.observe(svg);
  }
  return svg;
}
