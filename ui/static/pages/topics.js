// Topics (#/topics) and one topic (#/topics/:topic).
//
// The list polls every 5 s, keeps the filter and the "internal" toggle in
// the URL (#/topics?q=...&internal=1) so a reload or a shared link shows
// the same view, and creates topics. The topic page has a summary, the
// delete action, and four tabs (Messages, Partitions, Configs, Produce),
// the open tab also kept in the URL (?tab=configs).

import { h, api, get, every, toast, fmtBytes, fmtNum, enc } from '../app.js';
import { loadError, actionError, slot, fmtDuration, parseKV, filterInput, confirmByName, replaceQuery, NUM } from './kafka-util.js';
import { renderMessages } from './topic-messages.js';
import { renderPartitions, renderConfigs, renderProduce } from './topic-tabs.js';

// ---- list ------------------------------------------------------------------

export function renderList(main, params) {
  const q = params.query;
  let filter = (q.get('q') || '').toLowerCase();
  let internal = q.get('internal') === '1';
  let topics = null;

  const err = slot();
  const body = slot();
  const count = h('span', { class: 'muted' });
  const toggle = h('input', { type: 'checkbox', id: 'topic-show-internal', checked: internal });
  const formSlot = slot();

  const openBtn = h('button', { id: 'topic-create-open', class: 'primary' }, 'Create topic');
  openBtn.addEventListener('click', () => {
    if (formSlot.firstChild) { formSlot.set(); return; }
    formSlot.set(createForm(() => { formSlot.set(); load(); }, () => formSlot.set()));
  });

  const sync = () => {
    const nq = new URLSearchParams();
    if (filter) nq.set('q', filter);
    if (internal) nq.set('internal', '1');
    replaceQuery(nq);
  };
  toggle.addEventListener('change', () => { internal = toggle.checked; sync(); load(); });

  main.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Topics'), openBtn),
    formSlot,
    h('div', { class: 'toolbar' },
      filterInput('Filter topics', (v) => { filter = v; sync(); draw(); }, filter),
      h('label', { class: 'inline' }, toggle, ' Show internal topics'),
      count),
    err,
    body);

  function draw() {
    if (!topics) return;
    const shown = topics.filter((t) => !filter || t.name.toLowerCase().includes(filter));
    count.textContent = shown.length === topics.length ? fmtNum(topics.length) + ' topics' : fmtNum(shown.length) + ' of ' + fmtNum(topics.length) + ' topics';
    if (topics.length === 0) { body.set(h('p', { class: 'muted' }, 'No topics yet. Create one with the button above.')); return; }
    body.set(h('table', { id: 'topic-table' },
      h('thead', {}, h('tr', {},
        h('th', {}, 'Name'), h('th', NUM, 'Partitions'), h('th', NUM, 'Replication'), h('th', NUM, 'Under-replicated'),
        h('th', NUM, 'Size'), h('th', NUM, 'Messages'), h('th', {}, 'Retention'), h('th', {}, 'Cleanup policy'))),
      h('tbody', {}, shown.map(topicRow))));
  }

  async function load() {
    try {
      topics = await get('/api/v1/topics' + (internal ? '?internal=true' : ''));
      err.set();
      draw();
    } catch (e) {
      err.set(loadError('Could not load topics', e));
    }
  }
  return every(5000, load);
}

function topicRow(t) {
  const urp = t.under_replicated_partitions || 0;
  return h('tr', { dataset: { topic: t.name }, class: urp > 0 ? 'row-warn' : null },
    h('td', {}, h('a', { href: '#/topics/' + enc(t.name) }, t.name), t.internal ? h('span', { class: 'badge tag' }, 'internal') : null),
    h('td', NUM, fmtNum(t.partitions)),
    h('td', NUM, fmtNum(t.replication_factor)),
    h('td', { class: 'num' + (urp > 0 ? ' bad' : '') }, fmtNum(urp)),
    h('td', NUM, fmtBytes(t.size_bytes)),
    h('td', NUM, t.messages >= 0 ? fmtNum(t.messages) : '–'),
    h('td', { title: t.retention_ms ? 'retention.ms=' + t.retention_ms : null }, fmtDuration(t.retention_ms)),
    h('td', {}, t.cleanup_policy || '–'));
}

// createForm posts a new topic; the server's error (name taken, bad
// config) is shown under the form and the form stays filled in.
function createForm(done, cancel) {
  const name = h('input', { id: 'topic-create-name', type: 'text', required: true, placeholder: 'orders', autocomplete: 'off', spellcheck: 'false' });
  const parts = h('input', { id: 'topic-create-partitions', type: 'number', min: 1, placeholder: 'broker default' });
  const rf = h('input', { id: 'topic-create-rf', type: 'number', min: 1, placeholder: 'broker default' });
  const configs = h('textarea', { id: 'topic-create-configs', rows: 3, placeholder: 'retention.ms=86400000\ncleanup.policy=compact' });
  const err = slot();
  const submit = h('button', { id: 'topic-create-submit', class: 'primary', type: 'submit' }, 'Create');

  const form = h('form', { class: 'panel', id: 'topic-create-form', novalidate: true },
    h('h2', {}, 'Create a topic'),
    h('div', { class: 'form-grid' },
      h('div', {}, h('label', { for: 'topic-create-name' }, 'Name'), name),
      h('div', {}, h('label', { for: 'topic-create-partitions' }, 'Partitions'), parts),
      h('div', {}, h('label', { for: 'topic-create-rf' }, 'Replication factor'), rf)),
    h('label', { for: 'topic-create-configs' }, 'Configs ', h('span', { class: 'muted' }, '(key=value, one per line)')),
    configs,
    err,
    h('div', { class: 'row' }, submit, h('button', { type: 'button', onclick: cancel }, 'Cancel')));

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const problems = [];
    const n = name.value.trim();
    if (!n) problems.push('Name: required.');
    const p = parts.value === '' ? -1 : Number(parts.value);
    if (parts.value !== '' && !(Number.isInteger(p) && p > 0)) problems.push('Partitions: a whole number ≥ 1, or empty for the broker default.');
    const r = rf.value === '' ? -1 : Number(rf.value);
    if (rf.value !== '' && !(Number.isInteger(r) && r > 0)) problems.push('Replication factor: a whole number ≥ 1, or empty for the broker default.');
    const kv = parseKV(configs.value);
    for (const e of kv.errors) problems.push('Configs ' + e + '.');
    if (problems.length) { err.set(h('div', { class: 'error', role: 'alert' }, problems.join('\n'))); return; }
    err.set();
    submit.disabled = true;
    try {
      await api('POST', '/api/v1/topics', { name: n, partitions: p, replication_factor: r, configs: kv.values });
      toast('Created topic ' + n);
      done();
    } catch (e) {
      err.set(actionError('Creating topic ' + n, e));
    } finally {
      submit.disabled = false;
    }
  });
  setTimeout(() => name.focus(), 0);
  return form;
}

// ---- one topic -------------------------------------------------------------

const TABS = [
  ['messages', 'Messages', renderMessages],
  ['partitions', 'Partitions', renderPartitions],
  ['configs', 'Configs', renderConfigs],
  ['produce', 'Produce', renderProduce],
];

export async function renderTopic(main, params) {
  const name = params.topic;
  const path = '/api/v1/topics/' + enc(name);
  const summary = slot({ class: 'topic-summary' });
  const err = slot();
  const confirmSlot = slot();
  const del = h('button', { id: 'topic-delete', class: 'danger' }, 'Delete topic');
  del.addEventListener('click', () => {
    if (confirmSlot.firstChild) return;
    confirmSlot.set(confirmByName({
      name, what: 'Delete topic', prefix: 'topic-delete',
      act: async () => {
        await api('DELETE', path);
        toast('Deleted topic ' + name);
        location.hash = '#/topics';
      },
    }));
  });

  main.append(
    h('div', { class: 'crumbs' }, h('a', { href: '#/topics' }, 'Topics'), ' / '),
    h('div', { class: 'page-head' }, h('h1', {}, name), del),
    confirmSlot, err, summary);

  // The topic detail feeds the summary and the tabs; tabs that change it
  // (partitions added, configs edited) call refresh.
  let detail = null;
  async function refresh() {
    try {
      detail = await get(path);
      err.set();
      summary.set(topicSummary(detail));
    } catch (e) {
      err.set(loadError(e && e.status === 404 ? 'No topic ' + name : 'Could not load topic ' + name, e));
    }
    return detail;
  }
  await refresh();
  // The user may have left while the topic loaded: draw nothing more.
  if (!summary.isConnected) return undefined;

  let current = params.query.get('tab') || 'messages';
  if (!TABS.some(([id]) => id === current)) current = 'messages';
  const tabButtons = {};
  const pane = h('div', { class: 'tab-pane' });
  let stopTab = null;
  const ctx = { name, path, get detail() { return detail; }, refresh };

  function open(id) {
    if (stopTab) { try { stopTab(); } catch (e) { console.error(e); } stopTab = null; }
    current = id;
    for (const [tid, b] of Object.entries(tabButtons)) {
      b.classList.toggle('active', tid === id);
      b.setAttribute('aria-selected', String(tid === id));
    }
    const q = new URLSearchParams(params.query);
    if (id === 'messages') q.delete('tab'); else q.set('tab', id);
    replaceQuery(q);
    pane.replaceChildren();
    const fn = TABS.find(([tid]) => tid === id)[2];
    try {
      const stop = fn(pane, ctx);
      if (typeof stop === 'function') stopTab = stop;
    } catch (e) {
      pane.append(loadError('Could not show this tab', e));
    }
  }

  const tabs = h('div', { class: 'tabs', role: 'tablist' }, TABS.map(([id, label]) => {
    const b = h('button', { id: 'tab-' + id, role: 'tab', type: 'button' }, label);
    b.addEventListener('click', () => open(id));
    tabButtons[id] = b;
    return b;
  }));
  main.append(tabs, pane);
  open(current);
  return () => { if (stopTab) stopTab(); };
}

function topicSummary(t) {
  const urp = t.under_replicated_partitions || 0;
  const item = (label, value, cls) => h('div', { class: 'kv' + (cls ? ' ' + cls : '') }, h('span', { class: 'label' }, label), h('span', { class: 'value' }, value));
  return [
    item('Partitions', fmtNum(t.partitions)),
    item('Replication factor', fmtNum(t.replication_factor)),
    item('Under-replicated', fmtNum(urp), urp > 0 ? 'bad' : null),
    item('Messages', t.messages >= 0 ? fmtNum(t.messages) : '–'),
    item('Size', fmtBytes(t.size_bytes)),
    item('Retention', fmtDuration(t.retention_ms)),
    item('Cleanup policy', t.cleanup_policy || '–'),
    item('Topic ID', h('code', {}, t.topic_id || '–')),
    t.internal ? item('Internal', 'yes') : null,
  ];
}
