// Helpers shared by the Kafka pages (overview, topics, groups, schemas):
// formatting Kafka values, parsing the key=value text areas, the
// "type the name to confirm" step of destructive actions, and error boxes
// that say what could not be loaded.

import { h, errorBox } from '../app.js';

// loadError explains what failed: "Could not load topics: <server's
// message> (HTTP 501)". A 501 means this node's admin API does not have
// the endpoint yet; a 0 that the node did not answer.
export function loadError(what, e) {
  const status = e && e.status;
  let msg = (e && e.message) || String(e);
  if (status) msg += ' (HTTP ' + status + ')';
  let hint = null;
  if (status === 501) hint = 'This node does not implement this part of the admin API yet.';
  else if (status === 503) hint = 'The node cannot reach the Kafka cluster right now; this page retries.';
  return errorBox({ message: what + ': ' + msg + (hint ? '\n' + hint : '') });
}

// actionError is loadError for something the user asked for: the
// server's message first, since it usually says what to change.
export function actionError(what, e) {
  const status = e && e.status;
  let msg = (e && e.message) || String(e);
  if (status) msg += ' (HTTP ' + status + ')';
  return errorBox({ message: what + ' failed: ' + msg });
}

// replaceQuery rewrites the hash's query without a hashchange (which
// would re-render the page).
export function replaceQuery(q) {
  const [path] = location.hash.replace(/^#/, '').split('?');
  const s = q.toString();
  history.replaceState(null, '', '#' + path + (s ? '?' + s : ''));
}

// slot is a container whose content is replaced wholesale (polled parts).
export function slot(attrs) {
  const el = h('div', attrs || {});
  el.set = (...children) => { el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false)); };
  return el;
}

const units = [
  [86400000, 'day'], [3600000, 'hour'], [60000, 'minute'], [1000, 'second'],
];

// fmtDuration writes a Kafka duration in ms the way people set it:
// 604800000 → "7 days", 90000 → "1.5 minutes", -1 → "forever".
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || ms === '') return '–';
  const n = Number(ms);
  if (!Number.isFinite(n)) return String(ms);
  if (n < 0) return 'forever';
  if (n === 0) return '0 ms';
  for (const [u, name] of units) {
    if (n >= u) {
      const v = n / u;
      const s = Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 1 : 0);
      return s + ' ' + name + (s === '1' ? '' : 's');
    }
  }
  return n + ' ms';
}

// parseKV reads "key=value" lines (blank lines and "#" comments skipped).
// It returns {values, errors}; errors name the line numbers that are not
// key=value so the user can fix all of them at once.
export function parseKV(text) {
  const values = {};
  const errors = [];
  String(text || '').split('\n').forEach((line, i) => {
    const t = line.trim();
    if (!t || t.startsWith('#')) return;
    const eq = t.indexOf('=');
    if (eq <= 0) { errors.push('line ' + (i + 1) + ': "' + t + '" is not key=value'); return; }
    values[t.slice(0, eq).trim()] = t.slice(eq + 1).trim();
  });
  return { values, errors };
}

// parseHeaders reads "key=value" lines into Kafka record headers (a key
// may repeat; "key" alone is a header with a null value).
export function parseHeaders(text) {
  const out = [];
  for (const line of String(text || '').split('\n')) {
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    if (eq < 0) out.push({ key: line.trim(), value: null });
    else out.push({ key: line.slice(0, eq).trim(), value: line.slice(eq + 1) });
  }
  return out;
}

function pad(n, w) { return String(n).padStart(w || 2, '0'); }

// fmtTs writes a timestamp in ms as local "YYYY-MM-DD HH:MM:SS.mmm".
export function fmtTs(ms) {
  if (ms === null || ms === undefined || ms < 0) return '–';
  const d = new Date(ms);
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()) + '.' + pad(d.getMilliseconds(), 3);
}

// toLocalInput formats ms for an <input type="datetime-local" step="1">.
export function toLocalInput(ms) {
  const d = new Date(ms);
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

// fromLocalInput reads a datetime-local value as ms (NaN when empty).
export function fromLocalInput(v) {
  return v ? new Date(v).getTime() : NaN;
}

// dataPreview is one line of a decoded key or value (the API's Data).
// A JsonConverter envelope ({"schema": ..., "payload": ...}) previews its
// payload, the part people look for; the whole record shows both.
export function dataPreview(d, max) {
  if (d === null || d === undefined) return null;
  let v = d.value;
  if (d.format === 'json' && v && typeof v === 'object' && !Array.isArray(v) &&
      Object.keys(v).length === 2 && 'schema' in v && 'payload' in v) {
    v = v.payload;
  }
  let s = (d.format === 'json' || d.format === 'avro') ? JSON.stringify(v) : String(v ?? '');
  max = max || 300;
  if (s.length > max) s = s.slice(0, max) + '…';
  return s;
}

// dataFull is the whole decoded key or value, JSON pretty-printed.
export function dataFull(d) {
  if (d === null || d === undefined) return 'null';
  if (d.format === 'json' || d.format === 'avro') return JSON.stringify(d.value, null, 2);
  return String(d.value ?? '');
}

// nullText is how an absent key/value/header shows.
export function nullText() {
  return h('span', { class: 'muted' }, 'null');
}

// confirmByName is the explicit confirmation of a destructive action:
// the user types the resource's name, then the button runs act(). ids
// prefix the input and button ids (prefix-name, prefix-confirm).
export function confirmByName({ name, what, prefix, act, onCancel }) {
  const input = h('input', { id: prefix + '-name', type: 'text', placeholder: name, autocomplete: 'off', spellcheck: 'false' });
  const go = h('button', { id: prefix + '-confirm', class: 'danger', disabled: true }, what);
  const err = slot();
  input.addEventListener('input', () => { go.disabled = input.value !== name; });
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && !go.disabled) go.click(); });
  go.addEventListener('click', async () => {
    go.disabled = true;
    err.set();
    try {
      await act();
    } catch (e) {
      err.set(actionError(what, e));
      go.disabled = input.value !== name;
    }
  });
  const box = h('div', { class: 'confirm-box', role: 'group' },
    h('p', {}, 'This cannot be undone. Type ', h('code', {}, name), ' to confirm.'),
    h('div', { class: 'row' }, input, go, h('button', { onclick: () => { box.remove(); if (onCancel) onCancel(); } }, 'Cancel')),
    err);
  setTimeout(() => input.focus(), 0);
  return box;
}

// filterInput is a search box calling onChange(lowercased text).
export function filterInput(placeholder, onChange, initial) {
  const el = h('input', { type: 'search', class: 'filter', placeholder, value: initial || '', 'aria-label': placeholder });
  el.addEventListener('input', () => onChange(el.value.trim().toLowerCase()));
  return el;
}

// num is a right-aligned numeric cell's attributes.
export const NUM = { class: 'num' };

// lagBar draws lag relative to max as a small horizontal bar.
export function lagBar(lag, max) {
  const pct = max > 0 && lag > 0 ? Math.max(2, Math.round((lag / max) * 100)) : 0;
  return h('span', { class: 'lag-bar', title: String(lag) }, h('span', { style: 'width:' + pct + '%' }));
}
