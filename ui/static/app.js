// The console's shell: a hash router, the API helper, and small DOM
// helpers shared by the pages. Each page module exports
// render(main, params) and may return a function that stops its timers.

import * as overview from './pages/overview.js';
import * as topics from './pages/topics.js';
import * as groups from './pages/groups.js';
import * as schemas from './pages/schemas.js';
import * as connectors from './pages/connectors.js';
import * as pipelines from './pages/pipelines.js';
import * as mirror from './pages/mirror.js';

// Routes: [pattern, nav id, page function]. ":name" captures one
// URL-encoded path segment.
const routes = [
  ['/', 'overview', overview.render],
  ['/topics', 'topics', topics.renderList],
  ['/topics/:topic', 'topics', topics.renderTopic],
  ['/groups', 'groups', groups.renderList],
  ['/groups/:group', 'groups', groups.renderGroup],
  ['/connectors', 'connectors', connectors.renderList],
  ['/connectors/new', 'connectors', connectors.renderNew],
  ['/connectors/:connector', 'connectors', connectors.renderConnector],
  ['/pipelines', 'pipelines', pipelines.render],
  ['/mirror', 'mirror', mirror.render],
  ['/schemas', 'schemas', schemas.renderList],
  ['/schemas/:subject', 'schemas', schemas.renderSubject],
];

let stopPage = null;

function match(path) {
  const parts = path.split('/').filter(Boolean);
  for (const [pattern, nav, fn] of routes) {
    const pp = pattern.split('/').filter(Boolean);
    if (pp.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < pp.length; i++) {
      if (pp[i].startsWith(':')) params[pp[i].slice(1)] = decodeURIComponent(parts[i]);
      else if (pp[i] !== parts[i]) { ok = false; break; }
    }
    if (ok) return { nav, fn, params };
  }
  return null;
}

async function route() {
  if (stopPage) { try { stopPage(); } catch (e) { console.error(e); } stopPage = null; }
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  const main = document.getElementById('main');
  main.replaceChildren();
  const m = match(path);
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', m && a.dataset.nav === m.nav);
  }
  if (!m) {
    main.append(h('h1', {}, 'Not found'), h('p', {}, 'No page at ' + path + '.'));
    return;
  }
  m.params.query = new URLSearchParams(query || '');
  try {
    const stop = await m.fn(main, m.params);
    if (typeof stop === 'function') stopPage = stop;
  } catch (e) {
    main.append(errorBox(e));
  }
}

window.addEventListener('hashchange', route);
// The first route waits for this module to finish evaluating: a page
// rendered from here would read get/enc (consts below) before they are
// initialized. A module script runs after parsing, so readyState is
// already past 'loading' and DOMContentLoaded would route a second time.
if (document.readyState === 'loading') window.addEventListener('DOMContentLoaded', route);
else queueMicrotask(route);

// The header names the cluster this node belongs to, so an operator with
// several consoles open knows which one this is.
async function showCluster() {
  const el = document.getElementById('cluster-name');
  try {
    const c = await get('/api/v1/cluster');
    const n = (c.brokers || []).length;
    el.textContent = 'cluster ' + c.cluster_id + ' · ' + n + (n === 1 ? ' broker' : ' brokers') + ' · served by ' + location.host;
  } catch (e) {
    el.textContent = location.host + ' (cluster unreachable)';
  }
}
queueMicrotask(showCluster);

// ---- API ----------------------------------------------------------------

// ApiError carries the HTTP status and the {"error_code","message"} body.
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

// api calls the node's HTTP API (same origin): path is absolute
// ("/api/v1/topics", "/connectors"). body, when given, is sent as JSON.
// It resolves to the parsed JSON (null for 204) and rejects with ApiError.
export async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'The node did not answer: ' + e.message);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!res.ok) {
    const msg = (data && data.message) || (typeof data === 'string' ? data : res.statusText);
    throw new ApiError(res.status, msg, data);
  }
  return data;
}

export const get = (path) => api('GET', path);

// ---- DOM helpers ----------------------------------------------------------

// h builds an element: h('a', {href: '#/x', class: 'c', onclick: fn}, 'text', child, ...).
// Attributes starting with "on" become listeners; null/false children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// table builds a table from column headers and rows of cells (strings or nodes).
export function table(headers, rows, attrs) {
  return h('table', attrs || {},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
}

export function errorBox(e) {
  return h('div', { class: 'error', role: 'alert' }, e && e.message ? e.message : String(e));
}

// toast shows a short message at the bottom of the page.
export function toast(msg, isError) {
  const t = document.getElementById('toast');
  t.textContent = msg;
  t.className = isError ? 'show error' : 'show';
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.className = ''; }, 4000);
}

// every calls fn now and then every ms until the returned stop is called.
export function every(ms, fn) {
  let stopped = false;
  let timer;
  const tick = async () => {
    try { await fn(); } catch (e) { console.error(e); }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}

export const enc = encodeURIComponent;

export function fmtBytes(n) {
  if (n === null || n === undefined || n < 0) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + ' ' + u[i];
}

export function fmtNum(n) {
  if (n === null || n === undefined) return '–';
  return Number(n).toLocaleString('en-US');
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined || ms < 0) return '–';
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 120) return s.toFixed(1) + ' s';
  const m = s / 60;
  if (m < 120) return m.toFixed(1) + ' min';
  const hh = m / 60;
  if (hh < 48) return hh.toFixed(1) + ' h';
  return (hh / 24).toFixed(1) + ' d';
}

// stateBadge renders a connector/task/group state as a coloured badge.
export function stateBadge(state) {
  return h('span', { class: 'badge state-' + String(state || 'unknown').toLowerCase() }, state || 'UNKNOWN');
}
