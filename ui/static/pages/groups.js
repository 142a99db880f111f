// Consumer groups (#/groups) and one group (#/groups/:group): state,
// members and their assignments, committed offsets with lag per
// partition, lag over time, resetting offsets (preview first, then an
// explicit confirm) and deleting the group.

import { h, api, get, every, toast, fmtNum, stateBadge, enc } from '../app.js';
import { lineChart } from '../chart.js';
import { loadError, actionError, slot, filterInput, confirmByName, lagBar, toLocalInput, fromLocalInput, replaceQuery, NUM } from './kafka-util.js';

function fmtLag(n) {
  return n === null || n === undefined || n < 0 ? '–' : fmtNum(n);
}

// ---- list ------------------------------------------------------------------

export function renderList(main, params) {
  let filter = (params.query.get('q') || '').toLowerCase();
  let groups = null;
  const err = slot();
  const body = slot();
  const count = h('span', { class: 'muted' });
  main.append(
    h('h1', {}, 'Consumer groups'),
    h('div', { class: 'toolbar' },
      filterInput('Filter groups or topics', (v) => {
        filter = v;
        replaceQuery(new URLSearchParams(v ? { q: v } : {}));
        draw();
      }, filter),
      count),
    err, body);

  function draw() {
    if (!groups) return;
    const shown = groups.filter((g) => !filter || g.group_id.toLowerCase().includes(filter) || (g.topics || []).some((t) => t.toLowerCase().includes(filter)));
    count.textContent = shown.length === groups.length ? fmtNum(groups.length) + ' groups' : fmtNum(shown.length) + ' of ' + fmtNum(groups.length) + ' groups';
    if (groups.length === 0) { body.set(h('p', { class: 'muted' }, 'No consumer groups yet. Groups appear once a consumer joins or commits offsets.')); return; }
    body.set(h('table', { id: 'group-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Group'), h('th', {}, 'State'), h('th', NUM, 'Members'), h('th', {}, 'Topics'), h('th', NUM, 'Total lag'))),
      h('tbody', {}, shown.map((g) => h('tr', { dataset: { group: g.group_id } },
        h('td', {}, h('a', { href: '#/groups/' + enc(g.group_id) }, g.group_id)),
        h('td', {}, stateBadge(g.state)),
        h('td', NUM, fmtNum(g.members)),
        h('td', { class: 'topics-cell' }, (g.topics || []).flatMap((t, i) => [i ? ', ' : null, h('a', { href: '#/topics/' + enc(t) }, t)])),
        h('td', { class: 'num' + (g.lag > 0 ? ' lagging' : '') }, fmtLag(g.lag)))))));
  }

  return every(5000, async () => {
    try {
      groups = (await get('/api/v1/groups')).slice().sort((a, b) => a.group_id.localeCompare(b.group_id));
      err.set();
      draw();
    } catch (e) {
      err.set(loadError('Could not load consumer groups', e));
    }
  });
}

// ---- one group ---------------------------------------------------------------

export function renderGroup(main, params) {
  const id = params.group;
  const path = '/api/v1/groups/' + enc(id);
  const err = slot();
  const summary = slot({ class: 'topic-summary' });
  const members = slot();
  const offsets = slot();
  const histErr = slot();
  const chart = lineChart([], { title: 'Lag over time', yFormat: (v) => fmtNum(Math.round(v)), integer: true, empty: 'No lag samples for this group yet' });
  const confirmSlot = slot();
  const resetSlot = slot();
  let group = null;

  const del = h('button', { id: 'group-delete', class: 'danger' }, 'Delete group');
  del.addEventListener('click', () => {
    if (confirmSlot.firstChild) return;
    confirmSlot.set(confirmByName({
      name: id, what: 'Delete group', prefix: 'group-delete',
      act: async () => {
        await api('DELETE', path);
        toast('Deleted group ' + id);
        location.hash = '#/groups';
      },
    }));
  });
  const resetOpen = h('button', { id: 'group-reset-open' }, 'Reset offsets');
  resetOpen.addEventListener('click', () => {
    if (resetSlot.firstChild) { resetSlot.set(); return; }
    resetSlot.set(resetPanel(id, path, () => group, () => { resetSlot.set(); refresh(); }));
  });

  main.append(
    h('div', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Consumer groups'), ' / '),
    h('div', { class: 'page-head' }, h('h1', {}, id), h('div', { class: 'row' }, resetOpen, del)),
    confirmSlot, err, summary, resetSlot,
    h('h2', {}, 'Offsets and lag'), offsets,
    histErr, h('div', { class: 'chart group-lag-chart' }, chart),
    h('h2', {}, 'Members'), members);

  async function refresh() {
    const [g, hist] = await Promise.allSettled([get(path), get('/api/v1/history')]);
    if (g.status === 'fulfilled') {
      group = g.value;
      err.set();
      summary.set(groupSummary(group));
      offsets.set(offsetTable(group));
      members.set(memberTable(group));
    } else {
      err.set(loadError(g.reason && g.reason.status === 404 ? 'No consumer group ' + id : 'Could not load group ' + id, g.reason));
    }
    if (hist.status === 'fulfilled') {
      histErr.set();
      const pts = (hist.value && hist.value.points) || [];
      chart.update([{ name: id, points: pts.map((p) => [p.time, p.group_lag && id in p.group_lag ? p.group_lag[id] : null]) }]);
    } else {
      histErr.set(loadError('Could not load the lag history', hist.reason));
    }
  }
  return every(5000, refresh);
}

function groupSummary(g) {
  const item = (label, value, attrs) => h('div', { class: 'kv' }, h('span', { class: 'label' }, label), h('span', Object.assign({ class: 'value' }, attrs || {}), value));
  const n = g.member_count ?? (Array.isArray(g.members) ? g.members.length : g.members);
  return [
    item('State', stateBadge(g.state)),
    item('Protocol', (g.protocol_type || '–') + (g.protocol ? ' / ' + g.protocol : '')),
    item('Coordinator', g.coordinator === undefined || g.coordinator < 0 ? '–' : 'broker ' + g.coordinator),
    item('Members', fmtNum(n)),
    item('Total lag', g.lag < 0 ? '–' : String(g.lag), { id: 'group-total-lag', class: 'value' + (g.lag > 0 ? ' lagging' : '') }),
  ];
}

function memberTable(g) {
  const ms = Array.isArray(g.members) ? g.members : [];
  if (ms.length === 0) return h('p', { class: 'muted' }, 'No active members' + (g.state === 'Empty' ? ' (the group is Empty: its offsets can be reset).' : '.'));
  return h('table', { id: 'member-table' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Member'), h('th', {}, 'Client ID'), h('th', {}, 'Host'), h('th', {}, 'Instance ID'), h('th', {}, 'Assignment'))),
    h('tbody', {}, ms.map((m) => h('tr', { class: 'member-row' },
      h('td', {}, h('code', { class: 'wrap' }, m.member_id)),
      h('td', {}, m.client_id || '–'),
      h('td', {}, m.client_host || '–'),
      h('td', {}, m.instance_id || h('span', { class: 'muted' }, '–')),
      h('td', {}, (m.assignments || []).length ? (m.assignments || []).map((a) => h('div', {}, h('a', { href: '#/topics/' + enc(a.topic) }, a.topic), ': ', (a.partitions || []).slice().sort((x, y) => x - y).join(', '))) : h('span', { class: 'muted' }, 'nothing assigned'))))));
}

function offsetTable(g) {
  const offs = (g.offsets || []).slice().sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  if (offs.length === 0) return h('p', { class: 'muted' }, 'This group has no committed offsets.');
  const owners = {};
  for (const m of Array.isArray(g.members) ? g.members : []) owners[m.member_id] = m.client_id || m.member_id;
  const max = Math.max(0, ...offs.map((o) => o.lag || 0));
  const rows = [];
  let topic = null;
  let topicLag = 0;
  const subtotal = () => h('tr', { class: 'subtotal' }, h('td', { colspan: 5 }, 'Total for ', topic), h('td', NUM, fmtNum(topicLag)), h('td', { colspan: 2 }));
  for (const o of offs) {
    if (topic !== null && o.topic !== topic) { rows.push(subtotal()); topicLag = 0; }
    topic = o.topic;
    topicLag += o.lag > 0 ? o.lag : 0;
    rows.push(h('tr', { class: 'group-offset-row', dataset: { topic: o.topic, partition: String(o.partition) } },
      h('td', {}, h('a', { href: '#/topics/' + enc(o.topic) }, o.topic)),
      h('td', NUM, String(o.partition)),
      h('td', NUM, o.committed_offset < 0 ? '–' : fmtNum(o.committed_offset)),
      h('td', NUM, fmtNum(o.end_offset)),
      h('td', { class: 'lag-cell' }, lagBar(o.lag, max)),
      h('td', { class: 'num' + (o.lag > 0 ? ' lagging' : '') }, fmtLag(o.lag)),
      h('td', {}, o.member_id ? h('span', { title: o.member_id }, owners[o.member_id] || o.member_id) : h('span', { class: 'muted' }, 'unassigned')),
      h('td', { class: 'muted' }, o.metadata || '')));
  }
  if (new Set(offs.map((o) => o.topic)).size > 1) rows.push(subtotal());
  return h('table', { id: 'group-offset-table' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Topic'), h('th', NUM, 'Partition'), h('th', NUM, 'Committed'), h('th', NUM, 'End offset'), h('th', {}, ''), h('th', NUM, 'Lag'), h('th', {}, 'Owner'), h('th', {}, 'Metadata'))),
    h('tbody', {}, rows),
    h('tfoot', {}, h('tr', {}, h('td', { colspan: 5 }, 'Total lag'), h('td', NUM, fmtLag(g.lag)), h('td', { colspan: 2 }))));
}

// ---- reset offsets ---------------------------------------------------------

// resetPanel is kafka-consumer-groups --reset-offsets: choose the topics
// and where to, Preview (a dry run showing previous → new per partition),
// then Confirm applies exactly what was previewed. The broker refuses
// while the group has active members; that error is shown as it comes.
function resetPanel(id, path, getGroup, done) {
  const g = getGroup();
  const topics = [...new Set(((g && g.offsets) || []).map((o) => o.topic))].sort();
  const all = h('input', { type: 'radio', name: 'group-reset-scope', id: 'group-reset-all', checked: true });
  const some = h('input', { type: 'radio', name: 'group-reset-scope', id: 'group-reset-some' });
  const boxes = topics.map((t) => h('input', { type: 'checkbox', class: 'group-reset-topic', value: t }));
  const topicList = h('div', { class: 'topic-checks' }, boxes.map((b) => h('label', { class: 'inline' }, b, ' ', b.value)));
  for (const b of boxes) b.addEventListener('change', () => { some.checked = true; invalidate(); });
  all.addEventListener('change', invalidate);
  some.addEventListener('change', invalidate);

  const to = h('select', { id: 'group-reset-to' },
    h('option', { value: 'earliest' }, 'Earliest offset'),
    h('option', { value: 'latest' }, 'Latest offset (skip everything unread)'),
    h('option', { value: 'timestamp' }, 'The first offset at a time'),
    h('option', { value: 'offset' }, 'A given offset'),
    h('option', { value: 'shift' }, 'Shift by n (negative: re-read)'));
  const ts = h('input', { id: 'group-reset-timestamp', type: 'datetime-local', step: 1, value: toLocalInput(Date.now() - 3600e3) });
  const off = h('input', { id: 'group-reset-offset', type: 'number', min: 0, placeholder: 'offset' });
  const shift = h('input', { id: 'group-reset-shift', type: 'number', placeholder: '-100' });
  const extra = h('span', { class: 'reset-extra' });
  const showExtra = () => {
    extra.replaceChildren(...({ timestamp: [ts], offset: [off], shift: [shift] }[to.value] || []));
    invalidate();
  };
  to.addEventListener('change', showExtra);
  for (const x of [ts, off, shift]) x.addEventListener('input', invalidate);

  const previewBtn = h('button', { id: 'group-reset-preview', type: 'button', class: 'primary' }, 'Preview');
  const confirmBtn = h('button', { id: 'group-reset-confirm', type: 'button', class: 'danger', disabled: true }, 'Confirm reset');
  const err = slot();
  const preview = slot();
  let planned = null; // the request body the preview showed

  function invalidate() {
    planned = null;
    confirmBtn.disabled = true;
    preview.set();
  }

  function body() {
    const problems = [];
    const b = { to: to.value, topics: [] };
    if (some.checked) {
      b.topics = boxes.filter((x) => x.checked).map((x) => x.value);
      if (b.topics.length === 0) problems.push('Topics: tick at least one topic, or choose all topics.');
    }
    if (to.value === 'timestamp') {
      const t = fromLocalInput(ts.value);
      if (!Number.isFinite(t)) problems.push('Timestamp: pick a date and time.');
      b.timestamp = t;
    } else if (to.value === 'offset') {
      const o = Number(off.value);
      if (off.value === '' || !Number.isInteger(o) || o < 0) problems.push('Offset: a whole number ≥ 0.');
      b.offset = o;
    } else if (to.value === 'shift') {
      const s = Number(shift.value);
      if (shift.value === '' || !Number.isInteger(s)) problems.push('Shift: a whole number (negative moves back).');
      b.shift = s;
    }
    return { b, problems };
  }

  previewBtn.addEventListener('click', async () => {
    const { b, problems } = body();
    if (problems.length) { err.set(h('div', { class: 'error', role: 'alert' }, problems.join('\n'))); return; }
    err.set();
    previewBtn.disabled = true;
    try {
      const r = await api('POST', path + '/offsets/reset', { ...b, dry_run: true });
      planned = b;
      preview.set(previewTable(r.offsets || []));
      confirmBtn.disabled = (r.offsets || []).length === 0;
    } catch (e) {
      err.set(resetError(id, e));
    } finally {
      previewBtn.disabled = false;
    }
  });
  confirmBtn.addEventListener('click', async () => {
    if (!planned) return;
    confirmBtn.disabled = true;
    try {
      const r = await api('POST', path + '/offsets/reset', { ...planned, dry_run: false });
      toast('Reset ' + (r.offsets || []).length + ' partition offsets of ' + id);
      done();
    } catch (e) {
      err.set(resetError(id, e));
      confirmBtn.disabled = false;
    }
  });

  showExtra();
  return h('section', { class: 'panel', id: 'group-reset-panel' },
    h('h2', {}, 'Reset offsets'),
    h('p', { class: 'muted' }, 'Only while the group has no active members (state Empty): stop its consumers first. Preview shows the change; nothing is written until you confirm.'),
    h('label', {}, 'Topics'),
    h('div', { class: 'row' }, h('label', { class: 'inline' }, all, ' All topics the group has offsets for'), h('label', { class: 'inline' }, some, ' Only these:')),
    topics.length ? topicList : h('p', { class: 'muted' }, 'The group has no committed offsets yet.'),
    h('label', { for: 'group-reset-to' }, 'Reset to'),
    h('div', { class: 'row' }, to, extra),
    err,
    h('div', { class: 'row' }, previewBtn, confirmBtn),
    preview);
}

function resetError(id, e) {
  if (e && e.status === 409) {
    return h('div', { class: 'error', role: 'alert', id: 'group-reset-error' },
      h('strong', {}, 'The broker refused the reset. '), e.message,
      '\nStop every consumer in group ' + id + ' (its state must be Empty), then preview again.');
  }
  const box = actionError('Resetting offsets', e);
  box.id = 'group-reset-error';
  return box;
}

function previewTable(offs) {
  if (offs.length === 0) return h('p', { class: 'muted' }, 'Nothing to reset: the group has no offsets on these topics.');
  const rows = offs.slice().sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition).map((o) => {
    const d = o.new_offset - o.previous_offset;
    return h('tr', { class: 'reset-preview-row' },
      h('td', {}, o.topic), h('td', NUM, String(o.partition)),
      h('td', NUM, o.previous_offset < 0 ? 'none' : fmtNum(o.previous_offset)),
      h('td', NUM, '→ ' + fmtNum(o.new_offset)),
      h('td', { class: 'num ' + (d < 0 ? 'lagging' : d > 0 ? 'ok' : 'muted') }, o.previous_offset < 0 ? '' : (d > 0 ? '+' : '') + fmtNum(d)));
  });
  return h('div', {},
    h('p', {}, h('strong', {}, 'Preview: '), offs.length + ' partition offset' + (offs.length === 1 ? '' : 's') + ' would change as below. Confirm to write them.'),
    h('table', { id: 'group-reset-preview-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Topic'), h('th', NUM, 'Partition'), h('th', NUM, 'Committed now'), h('th', NUM, 'New offset'), h('th', NUM, 'Change'))),
      h('tbody', {}, rows)));
}
