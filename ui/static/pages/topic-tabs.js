// The topic page's Partitions, Configs and Produce tabs. Each is
// render(pane, ctx) with ctx = {name, path, detail, refresh()} from
// topics.js, and may return a stop function.

import { h, api, get, every, toast, fmtBytes, fmtNum, enc } from '../app.js';
import { loadError, actionError, slot, filterInput, parseHeaders, NUM } from './kafka-util.js';

// ---- Partitions ------------------------------------------------------------

export function renderPartitions(pane, ctx) {
  const body = slot();
  const err = slot();
  const count = h('input', { id: 'partitions-count', type: 'number', min: 1, placeholder: 'new total' });
  const addErr = slot();
  const add = h('button', { id: 'partitions-add', type: 'submit' }, 'Add partitions');
  const form = h('form', { class: 'row', id: 'partitions-add-form', novalidate: true },
    h('label', { class: 'inline', for: 'partitions-count' }, 'Increase the partition count to'), count, add,
    h('span', { class: 'muted' }, 'Partitions can be added, never removed; keyed records may then map to other partitions.'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const cur = ctx.detail ? ctx.detail.partitions : 0;
    const n = Number(count.value);
    if (!Number.isInteger(n) || n <= cur) {
      addErr.set(h('div', { class: 'error', role: 'alert' }, 'The new count must be a whole number above the current ' + cur + '.'));
      return;
    }
    addErr.set();
    add.disabled = true;
    try {
      await api('POST', ctx.path + '/partitions', { count: n });
      toast(ctx.name + ' now has ' + n + ' partitions');
      count.value = '';
      await draw();
    } catch (e) {
      addErr.set(actionError('Adding partitions', e));
    } finally {
      add.disabled = false;
    }
  });
  pane.append(err, body, h('h2', {}, 'Add partitions'), form, addErr);

  async function draw() {
    const d = await ctx.refresh();
    if (!d) { err.set(h('p', { class: 'muted' }, 'The partitions show once the topic loads.')); return; }
    err.set();
    count.min = String(d.partitions + 1);
    body.set(partitionTable(d.partition_details || []));
  }
  return every(5000, draw);
}

function ids(a) {
  return (a || []).join(', ');
}

function partitionTable(parts) {
  const rows = parts.slice().sort((a, b) => a.partition - b.partition).map((p) => {
    const offline = p.leader < 0 || (p.offline_replicas || []).length > 0;
    const under = (p.isr || []).length < (p.replicas || []).length;
    const cls = offline ? 'row-bad' : under ? 'row-warn' : null;
    return h('tr', { class: cls, dataset: { partition: String(p.partition) } },
      h('td', NUM, String(p.partition)),
      h('td', NUM, p.leader < 0 ? h('span', { class: 'bad' }, 'none') : String(p.leader)),
      h('td', NUM, String(p.leader_epoch ?? '–')),
      h('td', {}, ids(p.replicas)),
      h('td', { class: under ? 'bad' : null }, ids(p.isr), under ? ' (under-replicated)' : ''),
      h('td', { class: (p.offline_replicas || []).length ? 'bad' : 'muted' }, ids(p.offline_replicas) || 'none'),
      h('td', NUM, fmtNum(p.start_offset)),
      h('td', NUM, fmtNum(p.end_offset)),
      h('td', NUM, p.end_offset >= 0 && p.start_offset >= 0 ? fmtNum(p.end_offset - p.start_offset) : '–'),
      h('td', NUM, fmtBytes(p.size_bytes)));
  });
  return h('table', { id: 'partition-table' },
    h('thead', {}, h('tr', {},
      h('th', NUM, 'Partition'), h('th', NUM, 'Leader'), h('th', NUM, 'Epoch'), h('th', {}, 'Replicas'), h('th', {}, 'In-sync replicas'),
      h('th', {}, 'Offline replicas'), h('th', NUM, 'Start offset'), h('th', NUM, 'End offset'), h('th', NUM, 'Messages'), h('th', NUM, 'Size'))),
    h('tbody', {}, rows));
}

// ---- Configs ---------------------------------------------------------------

export function renderConfigs(pane, ctx) {
  const err = slot();
  const body = slot();
  let entries = null;
  let filter = '';
  let overridesOnly = false;
  const only = h('input', { type: 'checkbox', id: 'config-overrides-only' });
  only.addEventListener('change', () => { overridesOnly = only.checked; draw(); });
  pane.append(
    h('div', { class: 'toolbar' },
      filterInput('Filter configs', (v) => { filter = v; draw(); }),
      h('label', { class: 'inline' }, only, ' Only values set on this topic')),
    err, body);

  // change sends one IncrementalAlterConfigs and redraws from its answer.
  async function change(what, patch) {
    try {
      entries = await api('PATCH', ctx.path + '/configs', patch);
      err.set();
      toast(what);
      draw();
      ctx.refresh();
      return true;
    } catch (e) {
      err.set(actionError(what, e));
      return false;
    }
  }

  function draw() {
    if (!entries) return;
    const shown = entries
      .filter((c) => !filter || c.name.toLowerCase().includes(filter) || String(c.value ?? '').toLowerCase().includes(filter))
      .filter((c) => !overridesOnly || c.source === 'DYNAMIC_TOPIC_CONFIG')
      .sort((a, b) => a.name.localeCompare(b.name));
    body.set(h('table', { id: 'config-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Value'), h('th', {}, 'Source'), h('th', {}, 'Default'), h('th', {}, ''))),
      h('tbody', {}, shown.map((c) => configRow(c, change)))));
  }

  (async () => {
    try {
      entries = await get(ctx.path + '/configs');
      draw();
    } catch (e) {
      err.set(loadError('Could not load the configs of ' + ctx.name, e));
    }
  })();
}

function configRow(c, change) {
  const overridden = c.source === 'DYNAMIC_TOPIC_CONFIG';
  const valueCell = h('td', { class: 'config-value' }, c.sensitive ? h('span', { class: 'muted' }, '(sensitive)') : (c.value ?? h('span', { class: 'muted' }, 'null')));
  const actions = h('td', { class: 'actions' });
  const row = h('tr', { dataset: { config: c.name }, class: overridden ? 'overridden' : null },
    h('td', { title: c.documentation || null }, h('code', {}, c.name)),
    valueCell,
    h('td', {}, h('span', { class: 'badge source' }, c.source || '–')),
    h('td', {}, c.is_default ? 'yes' : 'no'),
    actions);
  if (c.read_only) {
    actions.append(h('span', { class: 'muted' }, 'read-only'));
    return row;
  }
  const edit = h('button', { id: 'config-edit-' + c.name, type: 'button' }, 'Edit');
  edit.addEventListener('click', () => {
    const input = h('input', { id: 'config-value-' + c.name, type: 'text', value: c.sensitive ? '' : (c.value ?? ''), class: 'config-input', spellcheck: 'false' });
    const save = h('button', { id: 'config-save-' + c.name, class: 'primary', type: 'button' }, 'Save');
    const cancel = h('button', { type: 'button' }, 'Cancel');
    const restore = () => {
      valueCell.replaceChildren(c.sensitive ? h('span', { class: 'muted' }, '(sensitive)') : (c.value ?? ''));
      edit.hidden = false;
    };
    save.addEventListener('click', async () => {
      save.disabled = true;
      const ok = await change('Set ' + c.name + ' = ' + input.value, { set: { [c.name]: input.value } });
      if (!ok) save.disabled = false;
    });
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') save.click();
      if (ev.key === 'Escape') restore();
    });
    cancel.addEventListener('click', restore);
    valueCell.replaceChildren(h('div', { class: 'row tight' }, input, save, cancel));
    edit.hidden = true;
    input.focus();
  });
  actions.append(edit);
  if (overridden) {
    const reset = h('button', { id: 'config-reset-' + c.name, type: 'button', title: 'Remove the topic override; the broker default applies again' }, 'Reset to default');
    reset.addEventListener('click', async () => {
      reset.disabled = true;
      const ok = await change('Reset ' + c.name + ' to its default', { delete: [c.name] });
      if (!ok) reset.disabled = false;
    });
    actions.append(' ', reset);
  }
  return row;
}

// ---- Produce ---------------------------------------------------------------

export function renderProduce(pane, ctx) {
  const key = h('input', { id: 'produce-key', type: 'text', placeholder: 'empty: no key', autocomplete: 'off', spellcheck: 'false' });
  const value = h('textarea', { id: 'produce-value', rows: 8, placeholder: '{"id": 1}', spellcheck: 'false' });
  const tomb = h('input', { id: 'produce-value-null', type: 'checkbox' });
  const fmt = h('select', { id: 'produce-value-format' }, h('option', { value: 'text' }, 'text'), h('option', { value: 'json' }, 'json'));
  const headers = h('textarea', { id: 'produce-headers', rows: 3, placeholder: 'trace-id=abc123\nsource=console', spellcheck: 'false' });
  const partition = h('input', { id: 'produce-partition', type: 'number', min: 0, placeholder: 'default partitioner' });
  const submit = h('button', { id: 'produce-submit', class: 'primary', type: 'submit' }, 'Produce');
  const err = slot();
  const result = slot({ class: 'muted', id: 'produce-result' });
  tomb.addEventListener('change', () => { value.disabled = tomb.checked; });

  const form = h('form', { class: 'panel', id: 'produce-form', novalidate: true },
    h('div', { class: 'form-grid' },
      h('div', {}, h('label', { for: 'produce-key' }, 'Key'), key),
      h('div', {}, h('label', { for: 'produce-partition' }, 'Partition ', h('span', { class: 'muted' }, '(optional)')), partition),
      h('div', {}, h('label', { for: 'produce-value-format' }, 'Value format'), fmt)),
    h('label', { for: 'produce-value' }, 'Value'),
    value,
    h('label', { class: 'inline' }, tomb, ' Null value (a tombstone: deletes the key in a compacted topic)'),
    h('label', { for: 'produce-headers' }, 'Headers ', h('span', { class: 'muted' }, '(key=value, one per line)')),
    headers,
    err,
    h('div', { class: 'row' }, submit, result));

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const problems = [];
    if (fmt.value === 'json' && !tomb.checked) {
      try { JSON.parse(value.value); } catch (e) { problems.push('Value: not valid JSON (' + e.message + ').'); }
    }
    let p = -1;
    if (partition.value !== '') {
      p = Number(partition.value);
      const max = ctx.detail ? ctx.detail.partitions : Infinity;
      if (!Number.isInteger(p) || p < 0 || p >= max) problems.push('Partition: a whole number from 0 to ' + (max === Infinity ? 'the last partition' : max - 1) + ', or empty for the default partitioner.');
    }
    const hs = parseHeaders(headers.value);
    if (hs.some((x) => !x.key)) problems.push('Headers: every line needs a key before "=".');
    if (problems.length) { err.set(h('div', { class: 'error', role: 'alert' }, problems.join('\n'))); return; }
    err.set();
    submit.disabled = true;
    try {
      const r = await api('POST', ctx.path + '/messages', {
        partition: p,
        key: key.value === '' ? null : key.value,
        value: tomb.checked ? null : value.value,
        key_format: 'text',
        value_format: fmt.value,
        headers: hs,
      });
      const msg = 'Produced to partition ' + r.partition + ' at offset ' + r.offset;
      toast(msg);
      ctx.refresh(); // the summary's message count and size
      result.set(msg + ' (' + new Date(r.timestamp).toLocaleTimeString() + '). ',
        h('a', { href: '#/topics/' + enc(ctx.name), onclick: (e) => { e.preventDefault(); document.getElementById('tab-messages')?.click(); } }, 'See messages'));
    } catch (e) {
      err.set(actionError('Producing to ' + ctx.name, e));
      toast(e.message || String(e), true);
    } finally {
      submit.disabled = false;
    }
  });
  pane.append(form);
}
