// Overview (#/): the cluster at a glance — brokers, topics and partition
// health, Connect's connectors and tasks by state, throughput now and over
// the sampled history, and the brokers. Refreshed every 5 s.

import { h, get, every, fmtBytes, fmtNum, stateBadge } from '../app.js';
import { lineChart } from '../chart.js';
import { loadError, slot, NUM } from './kafka-util.js';

// How many consumer groups the lag chart draws (the most lagging now).
const TOP_GROUPS = 6;

export function render(main) {
  const err = slot();
  const cards = slot({ class: 'cards' });
  const bytesChart = lineChart([], { title: 'Bytes per second', yFormat: (v) => fmtBytes(v) + '/s', binary: true });
  const msgChart = lineChart([], { title: 'Messages in per second', yFormat: fmtRate });
  const lagChart = lineChart([], { title: 'Consumer lag (most lagging groups)', yFormat: fmtShort, integer: true, empty: 'No consumer groups with committed offsets yet' });
  const histErr = slot();
  const brokers = slot();

  main.append(
    h('h1', {}, 'Overview'),
    err,
    cards,
    h('h2', {}, 'Throughput and lag'),
    histErr,
    h('div', { class: 'chart-grid' },
      h('div', { class: 'chart' }, bytesChart),
      h('div', { class: 'chart' }, msgChart),
      h('div', { class: 'chart chart-wide' }, lagChart)),
    h('h2', {}, 'Brokers'),
    brokers);

  return every(5000, async () => {
    const [cl, hist] = await Promise.allSettled([get('/api/v1/cluster'), get('/api/v1/history')]);
    if (cl.status === 'fulfilled') {
      err.set();
      cards.set(clusterCards(cl.value));
      brokers.set(brokerTable(cl.value));
    } else {
      err.set(loadError('Could not load the cluster', cl.reason));
    }
    if (hist.status === 'fulfilled') {
      histErr.set();
      drawHistory(hist.value, bytesChart, msgChart, lagChart);
    } else {
      histErr.set(loadError('Could not load the history', hist.reason));
    }
  });
}

function fmtRate(v) {
  if (v === null || v === undefined) return '–';
  if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M/s';
  if (v >= 1e4) return (v / 1e3).toFixed(1) + 'k/s';
  return (Number.isInteger(v) ? v : v.toFixed(v < 10 ? 2 : 0)) + '/s';
}

function fmtShort(v) {
  if (v === null || v === undefined) return '–';
  if (Math.abs(v) >= 1e9) return (v / 1e9).toFixed(1) + 'G';
  if (Math.abs(v) >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (Math.abs(v) >= 1e4) return (v / 1e3).toFixed(1) + 'k';
  return String(Math.round(v));
}

function card(label, value, sub, attrs) {
  return h('div', Object.assign({ class: 'card' }, attrs || {}),
    h('div', { class: 'label' }, label),
    h('div', { class: 'value' }, value),
    sub ? h('div', { class: 'sub' }, sub) : null);
}

// byState lists {STATE: n} as badges, the states with a count only.
function byState(m) {
  const entries = Object.entries(m || {}).filter(([, n]) => n > 0);
  if (entries.length === 0) return h('span', { class: 'muted' }, 'none');
  return h('span', { class: 'state-list' }, entries.map(([s, n]) => h('span', {}, stateBadge(s), ' ', fmtNum(n))));
}

function sum(m) {
  return Object.values(m || {}).reduce((a, b) => a + (b || 0), 0);
}

function clusterCards(c) {
  const brokers = c.brokers || [];
  const urp = c.under_replicated_partitions || 0;
  const off = c.offline_partitions || 0;
  let health;
  if (off > 0) health = h('span', { class: 'badge state-failed' }, 'OFFLINE PARTITIONS');
  else if (urp > 0) health = h('span', { class: 'badge state-paused' }, 'UNDER-REPLICATED');
  else health = h('span', { class: 'badge state-ok' }, 'HEALTHY');
  const out = [
    card('Brokers', fmtNum(brokers.length),
      h('span', {}, 'controller ', c.controller_id === undefined || c.controller_id < 0 ? '–' : String(c.controller_id), ' · ', health),
      { id: 'card-brokers' }),
    card('Topics', h('a', { href: '#/topics' }, fmtNum(c.topics)), fmtNum(c.internal_topics) + ' internal', { id: 'card-topics' }),
    card('Partitions', fmtNum(c.partitions), null, { id: 'card-partitions' }),
    card('Under-replicated partitions', fmtNum(urp), null, { id: 'card-urp', class: 'card' + (urp > 0 ? ' card-warn' : '') }),
    card('Offline partitions', fmtNum(off), null, { id: 'card-offline', class: 'card' + (off > 0 ? ' card-bad' : '') }),
  ];
  const t = c.throughput || {};
  out.push(card('Throughput in', fmtBytes(t.bytes_in_per_sec || 0) + '/s', fmtRate(t.messages_in_per_sec || 0).replace('/s', ' msg/s'), { id: 'card-in' }));
  out.push(card('Throughput out', fmtBytes(t.bytes_out_per_sec || 0) + '/s', null, { id: 'card-out' }));
  const cn = c.connect;
  if (cn && cn.available) {
    out.push(card('Connectors', h('a', { href: '#/connectors' }, fmtNum(sum(cn.connectors))), byState(cn.connectors), { id: 'card-connectors' }));
    out.push(card('Tasks', fmtNum(sum(cn.tasks)), byState(cn.tasks),
      { id: 'card-tasks', class: 'card' + ((cn.tasks || {}).FAILED > 0 ? ' card-bad' : '') }));
  }
  return out;
}

function brokerTable(c) {
  const rows = (c.brokers || []).slice().sort((a, b) => a.node_id - b.node_id).map((b) =>
    h('tr', { dataset: { broker: String(b.node_id) } },
      h('td', NUM, String(b.node_id)),
      h('td', {}, b.host + ':' + b.port),
      h('td', {}, b.rack ?? h('span', { class: 'muted' }, '–')),
      h('td', {}, b.is_controller ? h('span', { class: 'badge state-ok' }, 'controller') : ''),
      h('td', NUM, b.log_dir_bytes >= 0 ? fmtBytes(b.log_dir_bytes) : '–')));
  if (rows.length === 0) return h('p', { class: 'muted' }, 'No brokers answered the metadata request.');
  return h('table', { id: 'broker-table' },
    h('thead', {}, h('tr', {}, h('th', NUM, 'ID'), h('th', {}, 'Host:port'), h('th', {}, 'Rack'), h('th', {}, 'Controller'), h('th', NUM, 'Log dir size'))),
    h('tbody', {}, rows));
}

function drawHistory(hist, bytesChart, msgChart, lagChart) {
  const pts = (hist && hist.points) || [];
  bytesChart.update([
    { name: 'bytes in', points: pts.map((p) => [p.time, p.bytes_in_per_sec]) },
    { name: 'bytes out', points: pts.map((p) => [p.time, p.bytes_out_per_sec]) },
  ]);
  msgChart.update([{ name: 'messages in', points: pts.map((p) => [p.time, p.messages_in_per_sec]) }]);

  // The groups lagging most at the latest sample (any group seen in the
  // history counts, so a group that just caught up still shows its past).
  const latest = {};
  const seen = new Set();
  for (const p of pts) for (const [g, n] of Object.entries(p.group_lag || {})) { seen.add(g); latest[g] = n; }
  const top = [...seen].sort((a, b) => (latest[b] || 0) - (latest[a] || 0) || a.localeCompare(b)).slice(0, TOP_GROUPS);
  lagChart.update(top.map((g) => ({
    name: g,
    points: pts.map((p) => [p.time, p.group_lag && g in p.group_lag ? p.group_lag[g] : null]),
  })));
}
