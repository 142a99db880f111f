// The Pipelines page (#/pipelines): each chain of Connect parts the
// admin API finds (Postgres → source connector → topic → sink
// connector), with the lag at every hop, and a lag-over-time chart built
// from the values this page has polled while it is open.

import { h, get, every, errorBox, enc, stateBadge, fmtNum, fmtBytes, fmtMs } from '../app.js';

// The console keeps this much history per pipeline (at 5 s a point: 30 min).
const maxPoints = 360;

const kindLabel = { postgres: 'Postgres', source: 'Source connector', topic: 'Topic', sink: 'Sink connector' };

// lagLevel colours a hop: by how far behind in time when known, else by
// records/bytes waiting. Hops without lag figures stay neutral.
export function lagLevel(hop) {
  if (hop.lag_seconds !== null && hop.lag_seconds !== undefined) {
    if (hop.lag_seconds < 10) return 'lag-ok';
    return hop.lag_seconds < 60 ? 'lag-warn' : 'lag-bad';
  }
  if (hop.lag_records !== null && hop.lag_records !== undefined) {
    if (hop.lag_records === 0) return 'lag-ok';
    return hop.lag_records < 10000 ? 'lag-warn' : 'lag-bad';
  }
  if (hop.lag_bytes !== null && hop.lag_bytes !== undefined) {
    if (hop.lag_bytes < 1 << 20) return 'lag-ok';
    return hop.lag_bytes < 64 << 20 ? 'lag-warn' : 'lag-bad';
  }
  return 'lag-none';
}

const known = (v) => v !== null && v !== undefined;

function hopLink(hop) {
  if (hop.kind === 'source' || hop.kind === 'sink') return h('a', { href: '#/connectors/' + enc(hop.name) }, hop.name);
  if (hop.kind === 'topic') return h('a', { href: '#/topics/' + enc(hop.name) }, hop.name);
  return h('span', {}, hop.name);
}

function hopBox(hop) {
  // Hops without a figure (a topic, a source without an upstream) keep the
  // elements, empty, so every hop has the same shape.
  const records = h('div', { class: 'hop-lag-records' + (known(hop.lag_records) ? '' : ' na') }, known(hop.lag_records) ? `${fmtNum(hop.lag_records)} records behind` : '–');
  if (known(hop.lag_records)) records.dataset.value = hop.lag_records;
  const seconds = h('div', { class: 'hop-lag-seconds' + (known(hop.lag_seconds) ? '' : ' na') }, !known(hop.lag_seconds) ? '–' : hop.lag_seconds === 0 ? 'caught up' : `${fmtMs(Math.round(hop.lag_seconds * 1000))} behind`);
  if (known(hop.lag_seconds)) seconds.dataset.value = hop.lag_seconds;
  const bytes = hop.kind === 'postgres' || known(hop.lag_bytes)
    ? h('div', { class: 'hop-lag-bytes', 'data-value': known(hop.lag_bytes) ? hop.lag_bytes : null }, known(hop.lag_bytes) ? `${fmtBytes(hop.lag_bytes)} of WAL` : '–')
    : null;
  // The hop's state is the connector's; a failed task shows in the detail.
  const failed = hop.state === 'FAILED' || /\bFAILED\b/.test(hop.detail || '');
  return h('div', { class: 'hop ' + lagLevel(hop) + (failed ? ' hop-failed' : ''), 'data-kind': hop.kind, 'data-name': hop.name },
    h('div', { class: 'hop-kind' }, kindLabel[hop.kind] || hop.kind),
    h('div', { class: 'hop-name', title: hop.name }, hopLink(hop)),
    hop.state ? h('div', { class: 'hop-state' }, stateBadge(hop.state)) : null,
    h('div', { class: 'hop-lag' }, records, bytes, seconds),
    hop.detail ? h('div', { class: 'hop-detail muted', title: hop.detail }, hop.detail) : null);
}

// The chart module belongs to the Kafka pages; the page works (without
// charts) if it cannot be loaded.
let chartModule;
async function chartLib() {
  if (chartModule === undefined) chartModule = await import('../chart.js').catch((e) => { console.error(e); return null; });
  return chartModule;
}

// record appends this poll's lag of each hop to the pipeline's history.
function record(history, p, now) {
  let hs = history.get(p.name);
  if (!hs) { hs = new Map(); history.set(p.name, hs); }
  for (const hop of p.hops) {
    for (const [field, unit] of [['lag_records', 'records'], ['lag_bytes', 'bytes']]) {
      if (!known(hop[field])) continue;
      const id = `${unit}\u0000${hop.kind} ${hop.name}`;
      if (!hs.has(id)) hs.set(id, { unit, name: `${hop.name} (${hop.kind})`, points: [] });
      const s = hs.get(id);
      s.points.push([now, hop[field]]);
      if (s.points.length > maxPoints) s.points.splice(0, s.points.length - maxPoints);
    }
  }
}

function charts(lib, hs) {
  if (!lib || !hs) return null;
  const out = [];
  for (const [unit, title, fmt] of [['records', 'Lag (records)', fmtNum], ['bytes', 'Replication slot lag (bytes)', fmtBytes]]) {
    const series = [...hs.values()].filter((s) => s.unit === unit).map((s) => ({ name: s.name, points: s.points }));
    if (!series.length) continue;
    try {
      out.push(h('div', { class: 'chart pipeline-chart' }, lib.lineChart(series, { title, yFormat: fmt, height: 140 })));
    } catch (e) {
      console.error(e);
    }
  }
  return out.length ? h('div', { class: 'pipeline-charts' }, out) : null;
}

export function render(main) {
  main.append(h('h1', {}, 'Pipelines'),
    h('p', { class: 'muted intro' }, 'Each source connector with the topics it writes and the sinks that read them. Lag is what the next hop has not taken yet; the charts cover the time this page has been open.'));
  const body = h('div', { id: 'pipelines-body' }, h('p', { class: 'muted' }, 'Loading…'));
  main.append(body);
  const history = new Map();
  return every(5000, async () => {
    let data;
    try {
      data = await get('/api/v1/pipelines');
    } catch (e) {
      body.replaceChildren(errorBox(e));
      return;
    }
    if (!data.available) {
      body.replaceChildren(h('div', { class: 'empty-state', id: 'no-connect-worker' }, h('p', {}, 'No Connect worker runs on this node.')));
      return;
    }
    const pipelines = data.pipelines || [];
    if (!pipelines.length) {
      body.replaceChildren(h('div', { class: 'empty-state' },
        h('p', {}, 'No pipelines yet.'),
        h('p', { class: 'muted' }, 'A pipeline appears when a connector runs: ', h('a', { href: '#/connectors/new' }, 'create one'), '.')));
      return;
    }
    const now = Date.now();
    for (const p of pipelines) record(history, p, now);
    const lib = await chartLib();
    body.replaceChildren(...pipelines.map((p) => {
      const chain = [];
      p.hops.forEach((hop, i) => {
        if (i > 0) chain.push(h('div', { class: 'hop-arrow', 'aria-hidden': 'true' }, '→'));
        chain.push(hopBox(hop));
      });
      return h('section', { class: 'pipeline', 'data-pipeline': p.name },
        h('h2', {}, p.name),
        h('div', { class: 'chain' }, chain),
        charts(lib, history.get(p.name)));
    }));
  });
}
