// The topic page's Messages tab: a browser over GET
// /api/v1/topics/{topic}/messages.
//
// "Latest" shows the newest messages first and "Load more" goes back in
// time; "earliest", an offset or a timestamp read forward and "Load more"
// continues forward. Paging keeps a cursor per partition (the lowest or
// highest offset shown) and asks each partition for its next page, so
// across partitions nothing is skipped or shown twice even when the
// partitions are written at different rates.

import { h, get, fmtNum } from '../app.js';
import { loadError, slot, fmtTs, toLocalInput, fromLocalInput, dataPreview, dataFull, nullText, NUM } from './kafka-util.js';

const FORMATS = ['auto', 'json', 'avro', 'text', 'hex', 'base64'];
const LIMITS = [20, 50, 100, 200, 500];
// Per-partition page requests run at most this many at a time.
const PARALLEL = 6;

function select(id, values, selected, labels) {
  return h('select', { id }, values.map((v, i) => h('option', { value: String(v), selected: String(v) === String(selected) }, labels ? labels[i] : String(v))));
}

export function renderMessages(pane, ctx) {
  const nParts = ctx.detail ? ctx.detail.partitions : 0;
  const partIds = [...Array(nParts).keys()];
  const partition = select('browse-partition', ['all', ...partIds], 'all', ['All partitions', ...partIds.map((p) => 'Partition ' + p)]);
  const from = select('browse-from', ['latest', 'earliest', 'offset', 'timestamp'], 'latest', ['Latest', 'Earliest', 'Offset', 'Timestamp']);
  const offset = h('input', { id: 'browse-offset', type: 'number', min: 0, placeholder: 'offset', class: 'narrow' });
  const ts = h('input', { id: 'browse-timestamp', type: 'datetime-local', step: 1, value: toLocalInput(Date.now() - 3600e3) });
  const limit = select('browse-limit', LIMITS, 50);
  const keyFmt = select('browse-key-format', FORMATS, 'auto');
  const valueFmt = select('browse-value-format', FORMATS, 'auto');
  const loadBtn = h('button', { id: 'browse-load', class: 'primary', type: 'submit' }, 'Load');
  // Typing an offset or picking a time means reading from there.
  offset.addEventListener('input', () => { if (offset.value !== '') from.value = 'offset'; showInputs(); });
  ts.addEventListener('input', () => { from.value = 'timestamp'; showInputs(); });
  from.addEventListener('change', showInputs);
  function showInputs() {
    offset.classList.toggle('dim', from.value !== 'offset');
    ts.classList.toggle('dim', from.value !== 'timestamp');
  }
  showInputs();

  const field = (label, el) => h('div', { class: 'field' }, h('label', { for: el.id }, label), el);
  const form = h('form', { class: 'browse-form', id: 'browse-form', novalidate: true },
    field('Partition', partition), field('From', from), field('Offset', offset), field('Timestamp', ts),
    field('Limit', limit), field('Key format', keyFmt), field('Value format', valueFmt),
    h('div', { class: 'field' }, h('label', {}, '\u00a0'), loadBtn));
  const err = slot();
  const status = slot({ class: 'muted browse-status' });
  const tbody = h('tbody', {});
  const tableEl = h('table', { id: 'message-table', class: 'messages' },
    h('thead', {}, h('tr', {},
      h('th', NUM, 'Partition'), h('th', NUM, 'Offset'), h('th', {}, 'Timestamp'), h('th', {}, 'Key'), h('th', {}, 'Value'), h('th', {}, 'Headers'))),
    tbody);
  const moreBtn = h('button', { id: 'browse-more', type: 'button' }, 'Load more');
  const moreNote = slot({ class: 'muted' });
  const moreRow = h('div', { class: 'row' }, moreBtn, moreNote);
  tableEl.hidden = true;
  moreRow.hidden = true;
  pane.append(form, err, status, tableEl, moreRow);

  // st is the current browse: its settings, the messages shown, and the
  // per-partition cursors and offsets.
  let st = null;
  let gen = 0; // a newer Load discards the answers of an older one

  form.addEventListener('submit', (ev) => { ev.preventDefault(); load(); });
  moreBtn.addEventListener('click', more);

  function baseParams() {
    return { limit: limit.value, key_format: keyFmt.value, value_format: valueFmt.value };
  }

  async function load() {
    const mode = from.value;
    const p = {};
    if (partition.value !== 'all') p.partition = partition.value;
    const start = {};
    if (mode === 'offset') {
      const o = Number(offset.value);
      if (offset.value === '' || !Number.isInteger(o) || o < 0) { err.set(h('div', { class: 'error', role: 'alert' }, 'Offset: enter a whole number ≥ 0.')); return; }
      start.offset = o;
    } else if (mode === 'timestamp') {
      const t = fromLocalInput(ts.value);
      if (!Number.isFinite(t)) { err.set(h('div', { class: 'error', role: 'alert' }, 'Timestamp: pick a date and time.')); return; }
      start.timestamp = t;
    } else {
      start.from = mode;
    }
    const my = ++gen;
    err.set();
    loadBtn.disabled = true;
    status.set('Loading…');
    try {
      const res = await get(ctx.path + '/messages?' + new URLSearchParams({ ...p, ...start, ...baseParams() }));
      if (my !== gen) return;
      st = {
        mode, start, partition: partition.value, limit: Number(limit.value),
        msgs: [], seen: new Set(), lo: {}, hi: {}, info: {},
      };
      noteInfo(res.partitions);
      add(res.messages || []);
      moreNote.set();
      draw();
    } catch (e) {
      if (my !== gen) return;
      status.set();
      err.set(loadError('Could not read messages from ' + ctx.name, e));
    } finally {
      if (my === gen) loadBtn.disabled = false;
    }
  }

  function noteInfo(parts) {
    for (const x of parts || []) st.info[x.partition] = { start: x.start_offset, end: x.end_offset };
    if (Object.keys(st.info).length === 0 && ctx.detail) {
      for (const x of ctx.detail.partition_details || []) st.info[x.partition] = { start: x.start_offset, end: x.end_offset };
    }
  }

  // add records messages (deduplicated) and moves the cursors.
  function add(msgs) {
    for (const m of msgs) {
      const k = m.partition + ':' + m.offset;
      if (st.seen.has(k)) continue;
      st.seen.add(k);
      st.msgs.push(m);
      if (!(m.partition in st.lo) || m.offset < st.lo[m.partition]) st.lo[m.partition] = m.offset;
      if (!(m.partition in st.hi) || m.offset > st.hi[m.partition]) st.hi[m.partition] = m.offset;
    }
  }

  function ordered() {
    const asc = (a, b) => a.timestamp - b.timestamp || a.partition - b.partition || a.offset - b.offset;
    const out = st.msgs.slice().sort(asc);
    return st.mode === 'latest' ? out.reverse() : out;
  }

  function draw() {
    const list = ordered();
    tbody.replaceChildren(...list.map(messageRow));
    tableEl.hidden = list.length === 0;
    moreRow.hidden = list.length === 0;
    moreBtn.textContent = st.mode === 'latest' ? 'Load older' : 'Load more';
    const empty = Object.values(st.info).every((x) => x.end <= x.start);
    const ranges = Object.entries(st.info).map(([p, x]) => 'p' + p + ': ' + fmtNum(x.start) + '–' + fmtNum(x.end));
    const rangeText = ranges.length && ranges.length <= 12 ? ' · offsets ' + ranges.join(', ') : '';
    if (list.length === 0) {
      status.set(empty ? 'This topic has no messages' + (st.partition !== 'all' ? ' in partition ' + st.partition : '') + ' yet.' : 'No messages in this range.' + rangeText);
    } else {
      status.set('Showing ' + fmtNum(list.length) + ' message' + (list.length === 1 ? '' : 's') + (st.mode === 'latest' ? ', newest first' : '') + '. Click a row for the whole record.' + rangeText);
    }
  }

  // more asks each partition for the page after (or, for latest, before)
  // its cursor, then keeps the `limit` closest messages.
  async function more() {
    if (!st) return;
    const my = gen;
    moreBtn.disabled = true;
    moreNote.set('Loading…');
    try {
      let reqs = pageRequests();
      if (reqs.length === 0 && st.mode !== 'latest') {
        // Every partition was read to its end when last asked; ask again
        // for the end offsets in case new messages arrived.
        const q = { from: 'latest', limit: 1, key_format: 'hex', value_format: 'hex' };
        if (st.partition !== 'all') q.partition = st.partition;
        const r = await get(ctx.path + '/messages?' + new URLSearchParams(q));
        if (my !== gen) return;
        noteInfo(r.partitions);
        reqs = pageRequests();
      }
      const got = [];
      for (let i = 0; i < reqs.length; i += PARALLEL) {
        const batch = await Promise.all(reqs.slice(i, i + PARALLEL).map((q) => get(ctx.path + '/messages?' + new URLSearchParams({ ...q, ...baseParams(), limit: q.limit ?? st.limit }))));
        if (my !== gen) return;
        for (const r of batch) {
          noteInfo(r.partitions);
          got.push(...(r.messages || []));
        }
      }
      let fresh = got.filter((m) => !st.seen.has(m.partition + ':' + m.offset));
      if (st.mode === 'latest') fresh = fresh.filter((m) => !(m.partition in st.lo) || m.offset < st.lo[m.partition]);
      const asc = (a, b) => a.timestamp - b.timestamp || a.partition - b.partition || a.offset - b.offset;
      fresh.sort(asc);
      if (st.mode === 'latest') fresh.reverse();
      const take = fresh.slice(0, st.limit);
      add(take);
      draw();
      moreNote.set(take.length === 0 ? (st.mode === 'latest' ? 'No older messages.' : 'No newer messages yet.') : 'Loaded ' + fmtNum(take.length) + ' more.');
    } catch (e) {
      moreNote.set();
      err.set(loadError('Could not read more messages', e));
    } finally {
      moreBtn.disabled = false;
    }
  }

  // pageRequests lists one request per partition that has more to read.
  function pageRequests() {
    const parts = st.partition === 'all' ? Object.keys(st.info).map(Number) : [Number(st.partition)];
    const reqs = [];
    for (const p of parts) {
      const info = st.info[p];
      if (st.mode === 'latest') {
        if (!info) continue;
        const cur = p in st.lo ? st.lo[p] : info.end;
        if (cur <= info.start) continue;
        const o = Math.max(info.start, cur - st.limit);
        reqs.push({ partition: p, offset: o, limit: cur - o });
        continue;
      }
      let next;
      if (p in st.hi) next = st.hi[p] + 1;
      else if (st.mode === 'earliest') next = info ? info.start : 0;
      else if (st.mode === 'offset') next = Math.max(st.start.offset, info ? info.start : 0);
      else {
        // From a timestamp, a partition with nothing shown yet starts at
        // the timestamp (its offset is the server's to find).
        if (!info || info.end > info.start) reqs.push({ partition: p, timestamp: st.start.timestamp });
        continue;
      }
      if (info && next >= info.end) continue;
      reqs.push({ partition: p, offset: next });
    }
    return reqs;
  }

  load();
  return () => { gen++; };
}

function headerText(hs) {
  return (hs || []).map((x) => x.key + '=' + (x.value === null ? 'null' : dataPreview(x.value, 40))).join(', ');
}

function cell(cls, d) {
  if (d === null || d === undefined) return h('td', { class: cls }, nullText());
  // data-format lets CSS tag avro/hex/base64 values without adding text
  // to the cell (its text is the value, nothing else).
  return h('td', { class: cls, dataset: { format: d.format }, title: d.format + (d.schema_id !== undefined ? ' · schema ' + d.schema_id : '') + ' · ' + fmtNum(d.size) + ' bytes' }, dataPreview(d));
}

// messageRow is one record; a click opens (or closes) a row under it with
// the whole key, value (JSON pretty-printed) and headers.
function messageRow(m) {
  const hs = m.headers || [];
  const row = h('tr', { class: 'message-row', dataset: { partition: String(m.partition), offset: String(m.offset) }, tabindex: 0 },
    h('td', NUM, String(m.partition)),
    h('td', { class: 'num message-offset' }, String(m.offset)),
    h('td', { class: 'nowrap', title: m.timestamp_type || null }, fmtTs(m.timestamp)),
    cell('message-key', m.key),
    cell('message-value', m.value),
    h('td', { class: 'message-headers' }, hs.length ? headerText(hs) : ''));
  const toggle = () => {
    const next = row.nextElementSibling;
    if (next && next.classList.contains('message-detail')) { next.remove(); row.classList.remove('open'); return; }
    row.classList.add('open');
    row.after(messageDetail(m));
  };
  row.addEventListener('click', (ev) => {
    if (window.getSelection && String(window.getSelection())) return; // selecting text, not opening
    toggle();
    ev.stopPropagation();
  });
  row.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); toggle(); } });
  return row;
}

function describe(d) {
  if (!d) return 'null';
  let s = d.format + ', ' + fmtNum(d.size) + ' bytes';
  if (d.schema_id !== undefined) s += ', schema id ' + d.schema_id;
  if (d.subject) s += ', subject ' + d.subject;
  return s;
}

function messageDetail(m) {
  const hs = m.headers || [];
  return h('tr', { class: 'message-detail' }, h('td', { colspan: 6 },
    h('div', { class: 'detail-meta muted' },
      'Partition ' + m.partition + ' · offset ' + m.offset + ' · ' + fmtTs(m.timestamp) + ' (' + (m.timestamp_type || 'CreateTime') + ', ' + m.timestamp + ')' +
      (m.size !== undefined ? ' · ' + fmtNum(m.size) + ' bytes' : '')),
    h('div', { class: 'detail-grid' },
      h('div', {}, h('div', { class: 'detail-label' }, 'Key ', h('span', { class: 'muted' }, '(' + describe(m.key) + ')')), h('pre', { class: 'detail-key' }, dataFull(m.key))),
      h('div', {}, h('div', { class: 'detail-label' }, 'Value ', h('span', { class: 'muted' }, '(' + describe(m.value) + ')')), h('pre', { class: 'detail-value' }, dataFull(m.value)))),
    hs.length ? h('div', {}, h('div', { class: 'detail-label' }, 'Headers'),
      h('table', { class: 'headers' }, h('tbody', {}, hs.map((x) => h('tr', {}, h('td', {}, h('code', {}, x.key)), h('td', {}, x.value === null ? nullText() : h('code', {}, dataFull(x.value)))))))) : null));
}
