// The Connectors pages: the list (#/connectors), the new-connector form
// (#/connectors/new) and one connector (#/connectors/:connector). They
// talk to the node's Kafka Connect REST API (root paths /connectors,
// /connector-plugins), so they show exactly what curl would.

import { h, api, get, every, toast, errorBox, enc, stateBadge, fmtNum } from '../app.js';

// ---- shared helpers --------------------------------------------------------

// shortClass is a plugin class without its package ("DatagenConnector").
export function shortClass(cls) {
  if (!cls) return '–';
  const i = cls.lastIndexOf('.');
  return i < 0 ? cls : cls.slice(i + 1);
}

// noWorker is what a Connect page shows on a node without a worker
// (fjord broker, fjord dev --no-connect): GET /connectors is not served.
export function noWorker() {
  return h('div', { class: 'empty-state', id: 'no-connect-worker' },
    h('p', {}, 'No Connect worker runs on this node.'),
    h('p', { class: 'muted' }, 'Open the console of a node started with ', h('code', {}, 'fjord dev'), ' or ', h('code', {}, 'fjord connect'), ' to manage connectors.'));
}

// taskSummary renders tasks as "n running / m", with the failed ones
// called out so they are seen from the list.
export function taskSummary(tasks) {
  tasks = tasks || [];
  const running = tasks.filter((t) => t.state === 'RUNNING').length;
  const failed = tasks.filter((t) => t.state === 'FAILED').length;
  return h('span', { class: 'task-summary' },
    `${running} running / ${tasks.length}`,
    failed > 0 ? h('span', { class: 'tasks-failed' }, `${failed} failed`) : null);
}

// connectorsOrNull reads GET /connectors?expand=status&expand=info; null
// means the node has no Connect worker (404).
async function connectorsOrNull() {
  try {
    return await get('/connectors?expand=status&expand=info');
  } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
}

// ---- list ----------------------------------------------------------------

export function renderList(main) {
  main.append(h('div', { class: 'page-head' },
    h('h1', {}, 'Connectors'),
    h('button', { id: 'connector-new', class: 'primary', onclick: () => { location.hash = '#/connectors/new'; } }, 'New connector')));
  const body = h('div', { id: 'connectors-body' }, h('p', { class: 'muted' }, 'Loading…'));
  main.append(body);
  return every(5000, async () => {
    let data;
    try {
      data = await connectorsOrNull();
    } catch (e) {
      body.replaceChildren(errorBox(e));
      return;
    }
    if (data === null) {
      main.querySelector('#connector-new')?.remove();
      body.replaceChildren(noWorker());
      return;
    }
    const names = Object.keys(data).sort();
    if (names.length === 0) {
      body.replaceChildren(h('div', { class: 'empty-state' },
        h('p', {}, 'No connectors yet.'),
        h('p', { class: 'muted' }, 'Create one with "New connector", or POST /connectors as with any Kafka Connect cluster.')));
      return;
    }
    const rows = names.map((name) => {
      const st = data[name].status || {};
      const info = data[name].info || {};
      const cls = (info.config || {})['connector.class'];
      return h('tr', { 'data-connector': name },
        h('td', {}, h('a', { href: '#/connectors/' + enc(name) }, name)),
        h('td', {}, st.type || info.type || '–'),
        h('td', { title: cls || '' }, shortClass(cls)),
        h('td', {}, stateBadge(st.connector && st.connector.state)),
        h('td', {}, taskSummary(st.tasks)));
    });
    body.replaceChildren(h('table', { id: 'connectors-table' },
      h('thead', {}, h('tr', {}, ['Name', 'Type', 'Class', 'State', 'Tasks'].map((x) => h('th', {}, x)))),
      h('tbody', {}, rows)));
  });
}

// ---- new connector ---------------------------------------------------------

// A config key is shown up front when the connector needs it or its
// author marked it HIGH importance; the rest fold under "Show all settings".
const primary = (def) => def.required || def.importance === 'HIGH';

// The keys the form has inputs of its own for.
const ownKeys = new Set(['name', 'connector.class']);

// Errors a user has not caused yet: a required key left empty is only
// pointed at once touched or after Create.
const isMissing = (msg) => /^Missing required configuration/.test(msg);

// configString turns a pasted JSON value into the string Connect expects.
function configString(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// parsePasted accepts {"name": .., "config": {..}} or a flat config map and
// returns {name, config} with string values, or throws with what is wrong.
export function parsePasted(text) {
  let obj;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    throw new Error('Not valid JSON: ' + e.message);
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new Error('Expected a JSON object: {"name": ..., "config": {...}} or a flat config map.');
  }
  let raw = obj;
  let name = obj.name;
  if (obj.config && typeof obj.config === 'object' && !Array.isArray(obj.config)) {
    raw = obj.config;
    name = obj.name || raw.name;
  }
  const config = {};
  for (const [k, v] of Object.entries(raw)) {
    const s = configString(v);
    if (s !== null) config[k] = s;
  }
  if (name) config.name = String(name);
  if (!config['connector.class']) throw new Error('The config has no "connector.class".');
  if (!config.name) throw new Error('The connector has no "name".');
  return { name: config.name, config };
}

// debounce runs fn ms after the last call.
function debounce(fn, ms) {
  let timer;
  const d = (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  d.cancel = () => clearTimeout(timer);
  return d;
}

// validate asks the worker to check a config (PUT .../config/validate).
function validate(config) {
  const plugin = config['connector.class'];
  return api('PUT', '/connector-plugins/' + enc(plugin) + '/config/validate', config);
}

// errorList lists every "key: message" of a validate answer.
function errorList(result) {
  const items = [];
  for (const c of result.configs || []) {
    for (const msg of c.value.errors || []) items.push(h('li', {}, h('code', {}, c.value.name), ': ' + msg));
  }
  return h('ul', { class: 'validation-errors' }, items);
}

export async function renderNew(main, params) {
  main.append(h('h1', {}, 'New connector'));
  let plugins;
  try {
    plugins = await get('/connector-plugins?connectorsOnly=true');
  } catch (e) {
    if (e.status === 404) { main.append(noWorker()); return; }
    throw e;
  }
  plugins.sort((a, b) => (a.type + shortClass(a.class)).localeCompare(b.type + shortClass(b.class)));

  const formTab = h('button', { id: 'connector-form-tab', class: 'active', type: 'button' }, 'Form');
  const jsonTab = h('button', { id: 'connector-json-tab', type: 'button' }, 'Paste JSON');
  const formPane = h('div', { id: 'connector-form-pane' });
  const jsonPane = h('div', { id: 'connector-json-pane', hidden: true });
  const createError = h('div', { id: 'connector-create-error' });
  const createBtn = h('button', { id: 'connector-create', class: 'primary', type: 'button' }, 'Create connector');
  main.append(h('div', { class: 'tabs' }, formTab, jsonTab), formPane, jsonPane,
    h('div', { class: 'row create-row' }, createBtn, h('a', { href: '#/connectors' }, 'Cancel')), createError);

  // ---- the form ----
  const pluginSel = h('select', { id: 'connector-plugin' },
    h('option', { value: '' }, 'Choose a connector plugin…'),
    plugins.map((p) => h('option', { value: p.class }, `${shortClass(p.class)} (${p.type}) — ${p.class}`)));
  const nameInput = h('input', { id: 'connector-name', type: 'text', placeholder: 'my-connector', autocomplete: 'off', spellcheck: 'false' });
  const summary = h('div', { id: 'connector-validation', class: 'muted' });
  const fieldsBox = h('div', { id: 'connector-fields' });
  formPane.append(
    h('div', { class: 'connector-head-grid' },
      h('div', { class: 'cfg-field' }, h('label', { for: 'connector-plugin' }, 'Connector plugin'), pluginSel),
      h('div', { class: 'cfg-field' }, h('label', { for: 'connector-name' }, 'Name'), nameInput,
        h('div', { class: 'field-error', 'data-error-for': 'name' }))),
    summary, fieldsBox);

  // Per-plugin state: the field elements by key and what was touched.
  let fields = new Map(); // key -> {def, input, wrap, datalist, error}
  let touched = new Set();
  let submitted = false;
  let seq = 0; // drops validate answers that a newer request overtook
  let groupsPrimary, groupsAll;

  const formConfig = () => {
    const config = { 'connector.class': pluginSel.value };
    if (nameInput.value.trim()) config.name = nameInput.value.trim();
    for (const [key, f] of fields) {
      const v = f.def.type === 'BOOLEAN' || f.input.tagName === 'SELECT' ? f.input.value : f.input.value.trim();
      if (v !== '') config[key] = v;
    }
    return config;
  };

  // groupBox returns the fieldset of group g in area (created on first use).
  const groupBox = (area, g) => {
    const boxes = area === 'primary' ? groupsPrimary : groupsAll;
    if (!boxes.map.has(g)) {
      const fs = h('fieldset', { class: 'config-group', 'data-group': g }, h('legend', {}, g));
      boxes.map.set(g, fs);
      boxes.el.append(fs);
    }
    return boxes.map.get(g);
  };

  // A STRING key whose validate answer recommends values becomes a select
  // of them (quickstart, ...) unless the user already typed into it.
  const toSelect = (f) => {
    const sel = h('select', { id: f.input.id, 'data-config': f.def.name, name: f.def.name });
    const cur = f.input.value;
    f.input.replaceWith(sel);
    f.datalist.remove();
    f.input = sel;
    f.datalist = null;
    bind(f);
    if (cur) sel.append(h('option', { value: cur }, cur));
    sel.value = cur;
  };

  const fillOptions = (f, values) => {
    if (values.length && f.def.type === 'STRING' && f.input.tagName === 'INPUT' && !touched.has(f.def.name)) toSelect(f);
    const list = f.input.tagName === 'SELECT' ? f.input : f.datalist;
    if (!list) return;
    const key = JSON.stringify(values);
    if (list.dataset.values === key) return;
    list.dataset.values = key;
    if (f.input.tagName === 'SELECT') {
      const cur = f.input.value;
      const opts = [h('option', { value: '' }, f.def.default_value ? `(default: ${f.def.default_value})` : '(not set)')];
      for (const v of values) opts.push(h('option', { value: v }, v));
      if (cur && !values.includes(cur)) opts.push(h('option', { value: cur }, cur));
      f.input.replaceChildren(...opts);
      f.input.value = cur;
    } else {
      list.replaceChildren(...values.map((v) => h('option', { value: v })));
    }
  };

  const bind = (f) => {
    const changed = () => { touched.add(f.def.name); schedule(); };
    f.input.addEventListener('input', changed);
    f.input.addEventListener('change', changed);
  };

  // addField renders one ConfigKeyInfo; recommended values (from a
  // validate answer) turn a STRING key into a select.
  const addField = (def, recommended, index) => {
    if (ownKeys.has(def.name) || fields.has(def.name)) return;
    const id = 'cfg-' + def.name.replace(/[^A-Za-z0-9_-]/g, '_');
    const common = { id, 'data-config': def.name, name: def.name };
    let input;
    let datalist = null;
    const dflt = def.default_value;
    switch (def.type) {
      case 'BOOLEAN':
        input = h('select', common,
          h('option', { value: '' }, dflt !== null && dflt !== undefined ? `(default: ${dflt})` : '(not set)'),
          h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
        break;
      case 'INT': case 'LONG': case 'SHORT': case 'DOUBLE':
        input = h('input', { ...common, type: 'number', step: def.type === 'DOUBLE' ? 'any' : '1', placeholder: dflt ?? '' });
        break;
      case 'PASSWORD':
        input = h('input', { ...common, type: 'password', autocomplete: 'new-password', placeholder: dflt ? '(default set)' : '' });
        break;
      default:
        if (def.type === 'STRING' && recommended && recommended.length > 0) {
          input = h('select', common);
        } else {
          datalist = h('datalist', { id: id + '-values' });
          input = h('input', { ...common, type: 'text', list: datalist.id, autocomplete: 'off', spellcheck: 'false',
            placeholder: dflt ? (def.type === 'LIST' ? dflt + '  (comma-separated)' : dflt) : (def.type === 'LIST' ? 'comma-separated' : '') });
        }
    }
    const error = h('div', { class: 'field-error', 'data-error-for': def.name });
    const label = h('label', { for: id }, def.display_name || def.name,
      def.required ? h('span', { class: 'required', title: 'required' }, ' *') : null,
      def.display_name && def.display_name !== def.name ? h('code', { class: 'key-name' }, def.name) : null);
    const doc = def.documentation ? h('div', { class: 'field-doc' }, def.documentation) : null;
    const wrap = h('div', { class: 'cfg-field', 'data-key': def.name, 'data-order': index }, label, input, datalist, error, doc);
    const f = { def, input, wrap, datalist, error };
    fields.set(def.name, f);
    bind(f);
    fillOptions(f, recommended || []);
    const box = groupBox(primary(def) ? 'primary' : 'all', def.group || 'Connector');
    // Required keys first, then the connector's order in its group.
    const rank = (d, i) => [d.required ? 0 : 1, d.order_in_group >= 0 ? d.order_in_group : 1e6 + i];
    const mine = rank(def, index);
    const after = [...box.querySelectorAll(':scope > .cfg-field')].find((el) => {
      const o = fields.get(el.dataset.key);
      const r = rank(o.def, Number(el.dataset.order));
      return r[0] > mine[0] || (r[0] === mine[0] && r[1] > mine[1]);
    });
    if (after) box.insertBefore(wrap, after); else box.append(wrap);
  };

  const showResult = (result) => {
    const shownElsewhere = [];
    let i = fields.size;
    for (const c of result.configs || []) {
      const key = c.value.name;
      // Keys a value brings along (transforms.<alias>.type, ...) appear here.
      if (!fields.has(key) && !ownKeys.has(key) && c.definition) addField(c.definition, c.value.recommended_values, i++);
      const errs = c.value.errors || [];
      const f = fields.get(key);
      const el = f ? f.error : formPane.querySelector(`.field-error[data-error-for="${CSS.escape(key)}"]`);
      const visible = errs.filter((m) => submitted || touched.has(key) || !isMissing(m) || (key === 'name' && nameInput.value));
      if (el) el.replaceChildren(...visible.map((m) => h('div', {}, m)));
      else if (errs.length) shownElsewhere.push(...errs.map((m) => key + ': ' + m));
      if (f) {
        f.wrap.classList.toggle('has-error', visible.length > 0);
        f.wrap.hidden = c.value.visible === false;
        fillOptions(f, c.value.recommended_values || []);
      }
    }
    const n = result.error_count || 0;
    summary.replaceChildren(
      h('span', { id: 'connector-error-count', class: n ? 'bad' : 'ok', 'data-count': n },
        n === 0 ? 'The worker accepts this configuration.' : `${n} ${n === 1 ? 'error' : 'errors'} in this configuration.`),
      shownElsewhere.length ? h('ul', { class: 'validation-errors' }, shownElsewhere.map((m) => h('li', {}, m))) : '');
  };

  const runValidate = async () => {
    if (!pluginSel.value) return;
    const mine = ++seq;
    const plugin = pluginSel.value;
    try {
      const result = await validate(formConfig());
      if (mine === seq && plugin === pluginSel.value) showResult(result);
    } catch (e) {
      if (mine === seq) summary.replaceChildren(errorBox(e));
    }
  };
  const schedule = debounce(runValidate, 300);
  nameInput.addEventListener('input', () => { touched.add('name'); schedule(); });

  // Keys that name topics suggest the cluster's topics as you type.
  const topicKeys = ['topics', 'topic', 'kafka.topic'];
  const suggestTopics = async () => {
    let topics;
    try {
      topics = (await get('/api/v1/topics')).map((x) => x.name);
    } catch {
      return; // only a suggestion
    }
    for (const k of topicKeys) {
      const f = fields.get(k);
      if (f && f.datalist && !f.datalist.children.length) f.datalist.replaceChildren(...topics.map((v) => h('option', { value: v })));
    }
  };

  const loadPlugin = async () => {
    schedule.cancel();
    fields = new Map();
    touched = new Set();
    submitted = false;
    seq++;
    summary.replaceChildren();
    const plugin = pluginSel.value;
    if (!plugin) { fieldsBox.replaceChildren(); return; }
    const primaryEl = h('div', { class: 'config-primary' });
    const allEl = h('div', { class: 'config-all' });
    groupsPrimary = { el: primaryEl, map: new Map() };
    groupsAll = { el: allEl, map: new Map() };
    fieldsBox.replaceChildren(h('p', { class: 'muted' }, 'Loading the settings of ' + shortClass(plugin) + '…'));
    let keys;
    try {
      keys = await get('/connector-plugins/' + enc(plugin) + '/config');
    } catch (e) {
      fieldsBox.replaceChildren(errorBox(e));
      return;
    }
    if (plugin !== pluginSel.value) return;
    fieldsBox.replaceChildren(primaryEl,
      h('details', { class: 'all-settings', id: 'connector-all-settings' },
        h('summary', {}, 'Show all settings'), allEl));
    keys.forEach((def, i) => addField(def, [], i));
    // The first validate adds the runtime's keys (tasks.max, converters,
    // topics for sinks, ...) that the plugin's ConfigDef does not list.
    await runValidate();
    suggestTopics();
  };
  pluginSel.addEventListener('change', loadPlugin);

  // ---- the JSON tab ----
  const jsonArea = h('textarea', { id: 'connector-json', rows: 16, spellcheck: 'false',
    placeholder: '{"name": "my-connector", "config": {"connector.class": "...", ...}}\nor a flat config map with "name" and "connector.class"' });
  const jsonStatus = h('div', { id: 'connector-json-status' });
  jsonPane.append(h('p', { class: 'muted' }, 'Paste a connector as Kafka Connect takes it: {"name", "config"} or a flat config map. It is checked by the worker as you type.'),
    jsonArea, jsonStatus);
  let jsonSeq = 0;
  let prefilled = null;
  const validateJSON = async () => {
    const mine = ++jsonSeq;
    const text = jsonArea.value.trim();
    if (!text) { jsonStatus.replaceChildren(); return; }
    let parsed;
    try {
      parsed = parsePasted(text);
    } catch (e) {
      jsonStatus.replaceChildren(h('div', { class: 'field-error', 'data-error-for': 'json' }, e.message));
      return;
    }
    try {
      const result = await validate(parsed.config);
      if (mine !== jsonSeq) return;
      const n = result.error_count || 0;
      jsonStatus.replaceChildren(
        h('span', { id: 'connector-json-error-count', class: n ? 'bad' : 'ok', 'data-count': n },
          n === 0 ? 'The worker accepts this configuration.' : `${n} ${n === 1 ? 'error' : 'errors'}:`),
        n ? errorList(result) : '');
    } catch (e) {
      if (mine === jsonSeq) jsonStatus.replaceChildren(errorBox(e));
    }
  };
  const scheduleJSON = debounce(validateJSON, 300);
  jsonArea.addEventListener('input', scheduleJSON);

  const showTab = (json) => {
    formTab.classList.toggle('active', !json);
    jsonTab.classList.toggle('active', json);
    formPane.hidden = json;
    jsonPane.hidden = !json;
    // Carry the form over the first time (or while the text is untouched).
    if (json && pluginSel.value && (!jsonArea.value.trim() || jsonArea.value === prefilled)) {
      const config = formConfig();
      const name = config.name || '';
      delete config.name;
      jsonArea.value = prefilled = JSON.stringify({ name, config }, null, 2);
      scheduleJSON();
    }
  };
  formTab.addEventListener('click', () => showTab(false));
  jsonTab.addEventListener('click', () => showTab(true));

  // ---- create ----
  createBtn.addEventListener('click', async () => {
    createError.replaceChildren();
    let name;
    let config;
    if (!jsonPane.hidden) {
      try {
        ({ name, config } = parsePasted(jsonArea.value));
      } catch (e) {
        createError.replaceChildren(errorBox(e));
        return;
      }
    } else {
      if (!pluginSel.value) { createError.replaceChildren(errorBox(new Error('Choose a connector plugin first.'))); return; }
      config = formConfig();
      name = config.name;
      submitted = true;
      if (!name) {
        runValidate();
        createError.replaceChildren(errorBox(new Error('Give the connector a name.')));
        nameInput.focus();
        return;
      }
    }
    createBtn.disabled = true;
    try {
      await api('POST', '/connectors', { name, config });
      toast(`Connector ${name} created`);
      location.hash = '#/connectors/' + enc(name);
    } catch (e) {
      createError.replaceChildren(errorBox(e));
      if (jsonPane.hidden) runValidate(); else validateJSON();
    } finally {
      createBtn.disabled = false;
    }
  });

  const wanted = params.query.get('plugin');
  if (wanted && plugins.some((p) => p.class === wanted)) {
    pluginSel.value = wanted;
    await loadPlugin();
  }
  return () => { schedule.cancel(); scheduleJSON.cancel(); seq++; jsonSeq++; };
}

// ---- one connector -----------------------------------------------------------

// offsetRows renders GET /connectors/{c}/offsets: sink offsets as
// topic/partition/offset, source offsets as the connector's own JSON.
function offsetsTable(offsets) {
  if (!offsets.length) return h('p', { class: 'muted' }, 'No offsets committed yet.');
  const sink = offsets.every((o) => o.partition && 'kafka_topic' in o.partition);
  if (sink) {
    return h('table', { class: 'offsets-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Topic'), h('th', { class: 'num' }, 'Partition'), h('th', { class: 'num' }, 'Committed offset'))),
      h('tbody', {}, offsets.map((o) => h('tr', {},
        h('td', {}, h('a', { href: '#/topics/' + enc(o.partition.kafka_topic) }, o.partition.kafka_topic)),
        h('td', { class: 'num' }, o.partition.kafka_partition),
        h('td', { class: 'num' }, fmtNum(o.offset && o.offset.kafka_offset))))));
  }
  return h('table', { class: 'offsets-table' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Source partition'), h('th', {}, 'Source offset'))),
    h('tbody', {}, offsets.map((o) => h('tr', {},
      h('td', {}, h('code', {}, JSON.stringify(o.partition))),
      h('td', {}, h('code', {}, JSON.stringify(o.offset)))))));
}

function traceBlock(trace, open) {
  return h('details', { class: 'trace-box', open: open || false },
    h('summary', {}, (trace.split('\n')[0] || 'Trace').slice(0, 160)),
    h('pre', { class: 'trace' }, trace));
}

export function renderConnector(main, params) {
  const name = params.connector;
  const path = '/connectors/' + enc(name);
  let state = null;
  let connectorClass = null;
  let lastStatus = null;
  let editing = false;

  const stateSlot = h('span', { class: 'state-slot' }, h('span', { id: 'connector-state', class: 'badge' }, '…'));
  const meta = h('p', { class: 'muted connector-meta' });
  const traceSlot = h('div');
  const tasksBox = h('div', { id: 'connector-tasks' });
  const configBox = h('div', { id: 'connector-config-box' });
  const topicsBox = h('div', { id: 'connector-topics' });
  const offsetsBox = h('div');
  const message = h('div', { id: 'connector-message' });

  // act runs one lifecycle call, says what happened and refreshes.
  const act = (label, method, suffix, done) => async (ev) => {
    const btn = ev && ev.currentTarget;
    if (btn) btn.disabled = true;
    message.replaceChildren();
    try {
      await api(method, path + suffix);
      toast(done);
      await refresh();
      loadExtras();
    } catch (e) {
      message.replaceChildren(errorBox(e));
      toast(label + ' failed: ' + e.message, true);
    } finally {
      if (btn) btn.disabled = false;
    }
  };

  const buttons = {
    pause: h('button', { id: 'connector-pause', type: 'button', onclick: act('Pause', 'PUT', '/pause', `Pausing ${name}`) }, 'Pause'),
    resume: h('button', { id: 'connector-resume', type: 'button', onclick: act('Resume', 'PUT', '/resume', `Resuming ${name}`) }, 'Resume'),
    stop: h('button', { id: 'connector-stop', type: 'button', title: 'Stop the connector and its tasks (offsets can then be reset)', onclick: act('Stop', 'PUT', '/stop', `Stopping ${name}`) }, 'Stop'),
    restart: h('button', { id: 'connector-restart', type: 'button', title: 'Restart the connector and all its tasks', onclick: act('Restart', 'POST', '/restart?includeTasks=true&onlyFailed=false', `Restarting ${name} and its tasks`) }, 'Restart'),
    restartFailed: h('button', { id: 'connector-restart-failed', type: 'button', title: 'Restart only the failed connector or tasks', onclick: act('Restart', 'POST', '/restart?includeTasks=true&onlyFailed=true', `Restarting the failed parts of ${name}`) }, 'Restart failed'),
    del: h('button', { id: 'connector-delete', class: 'danger', type: 'button', onclick: async () => {
      if (!window.confirm(`Delete connector "${name}"? Its tasks stop and its config is removed; its offsets are kept.`)) return;
      try {
        await api('DELETE', path);
        toast(`Connector ${name} deleted`);
        location.hash = '#/connectors';
      } catch (e) {
        message.replaceChildren(errorBox(e));
      }
    } }, 'Delete'),
  };

  main.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/connectors' }, 'Connectors'), ' / '),
    h('div', { class: 'page-head' }, h('div', { class: 'title-with-state' }, h('h1', {}, name), stateSlot)),
    meta, traceSlot,
    h('div', { class: 'row connector-actions' }, Object.values(buttons)),
    message,
    h('h2', {}, 'Tasks'), tasksBox,
    h('h2', {}, 'Configuration'), configBox,
    h('h2', {}, 'Topics'), topicsBox,
    h('section', { id: 'connector-offsets' }, h('h2', {}, 'Offsets'), offsetsBox));

  const renderTasks = (tasks) => {
    if (!tasks.length) {
      tasksBox.replaceChildren(h('p', { class: 'muted' }, state === 'STOPPED' ? 'A stopped connector runs no tasks.' : 'No tasks.'));
      return;
    }
    // Keep open traces open across refreshes.
    const open = new Set([...tasksBox.querySelectorAll('tr.task-row')].filter((r) => r.querySelector('details[open]')).map((r) => r.dataset.task));
    tasksBox.replaceChildren(h('table', { id: 'connector-tasks-table' },
      h('thead', {}, h('tr', {}, ['Task', 'State', 'Worker', 'Error', ''].map((x) => h('th', {}, x)))),
      h('tbody', {}, tasks.map((t) => h('tr', { class: 'task-row', 'data-task': t.id },
        h('td', {}, t.id),
        h('td', {}, stateBadge(t.state)),
        h('td', {}, t.worker_id || '–'),
        h('td', { class: 'trace-cell' }, t.state === 'FAILED' && t.trace ? traceBlock(t.trace, open.has(String(t.id))) : ''),
        h('td', {}, h('button', { type: 'button', class: 'small task-restart', onclick: async (ev) => {
          ev.currentTarget.disabled = true;
          try {
            await api('POST', `${path}/tasks/${t.id}/restart`);
            toast(`Restarting task ${t.id}`);
            refresh();
          } catch (e) {
            toast(`Restart of task ${t.id} failed: ${e.message}`, true);
          }
        } }, 'Restart')))))));
  };

  // The line under the name: type and worker from the status, the class
  // from the config (whichever arrives first waits for the other).
  const renderMeta = () => {
    if (!lastStatus) return;
    meta.replaceChildren(`${lastStatus.type || 'unknown'} connector · worker ${lastStatus.connector.worker_id || '–'}`,
      connectorClass ? ` · ${connectorClass}` : '');
  };

  const refresh = async () => {
    let st;
    try {
      st = await get(path + '/status');
    } catch (e) {
      // A 404 without Connect's JSON error body: no worker serves here.
      if (e.status === 404 && (!e.body || typeof e.body !== 'object')) {
        main.replaceChildren(h('h1', {}, name), noWorker());
        stop();
        return;
      }
      if (e.status === 404) {
        // A connector just created has a config before its first status.
        const exists = await get(path).then(() => true, () => false);
        if (exists) {
          stateSlot.replaceChildren(h('span', { id: 'connector-state', class: 'badge' }, 'UNASSIGNED'));
          return;
        }
        main.replaceChildren(h('h1', {}, name), errorBox(e), h('p', {}, h('a', { href: '#/connectors' }, 'Back to the connectors')));
        stop();
        return;
      }
      message.replaceChildren(errorBox(e));
      return;
    }
    const prev = state;
    state = st.connector.state;
    const badge = stateBadge(state);
    badge.id = 'connector-state';
    stateSlot.replaceChildren(badge);
    lastStatus = st;
    renderMeta();
    traceSlot.replaceChildren(state === 'FAILED' && st.connector.trace ? traceBlock(st.connector.trace, true) : '');
    buttons.pause.disabled = state === 'PAUSED' || state === 'STOPPED';
    buttons.resume.disabled = state === 'RUNNING';
    buttons.stop.disabled = state === 'STOPPED';
    renderTasks(st.tasks || []);
    if (prev !== null && prev !== state) loadOffsets();
  };

  const renderConfigView = (config) => {
    const keys = Object.keys(config).sort();
    configBox.replaceChildren(
      h('div', { class: 'row' }, h('button', { id: 'connector-config-edit', type: 'button', onclick: () => editConfig(config) }, 'Edit as JSON')),
      h('table', { id: 'connector-config-view', class: 'config-kv' },
        h('tbody', {}, keys.map((k) => h('tr', {}, h('td', {}, h('code', {}, k)), h('td', { class: 'config-value' }, config[k]))))));
  };

  const editConfig = (config) => {
    editing = true;
    const area = h('textarea', { id: 'connector-config', rows: Math.min(30, Object.keys(config).length + 4), spellcheck: 'false' }, JSON.stringify(config, null, 2));
    const errs = h('div', { id: 'connector-config-errors' });
    const save = h('button', { id: 'connector-config-save', class: 'primary', type: 'button' }, 'Save');
    const cancel = h('button', { id: 'connector-config-cancel', type: 'button', onclick: () => { editing = false; renderConfigView(config); } }, 'Cancel');
    save.addEventListener('click', async () => {
      errs.replaceChildren();
      let next;
      try {
        next = JSON.parse(area.value);
        if (!next || typeof next !== 'object' || Array.isArray(next)) throw new Error('expected a JSON object of config keys');
        next = parsePasted(JSON.stringify({ ...next, name })).config;
      } catch (e) {
        errs.replaceChildren(errorBox(e));
        return;
      }
      save.disabled = true;
      try {
        // Check first so every bad key is listed, not only the first.
        const result = await validate(next);
        if (result.error_count > 0) {
          errs.replaceChildren(h('div', { class: 'error' }, `The worker rejects this configuration (${result.error_count} ${result.error_count === 1 ? 'error' : 'errors'}):`, errorList(result)));
          return;
        }
        await api('PUT', path + '/config', next);
        toast(`Configuration of ${name} saved`);
        editing = false;
        await loadConfig();
        refresh();
      } catch (e) {
        errs.replaceChildren(errorBox(e));
      } finally {
        save.disabled = false;
      }
    });
    configBox.replaceChildren(area, h('div', { class: 'row' }, save, cancel), errs);
    area.focus();
  };

  const loadConfig = async () => {
    try {
      const config = await get(path + '/config');
      connectorClass = config['connector.class'] || null;
      renderMeta();
      if (!editing) renderConfigView(config);
    } catch (e) {
      if (!editing) configBox.replaceChildren(errorBox(e));
    }
  };

  const loadTopics = async () => {
    try {
      const data = await get(path + '/topics');
      const topics = ((data[name] || {}).topics || []).slice().sort();
      topicsBox.replaceChildren(topics.length
        ? h('ul', { class: 'topic-list' }, topics.map((t) => h('li', {}, h('a', { href: '#/topics/' + enc(t) }, t))))
        : h('p', { class: 'muted' }, 'No active topics recorded yet.'));
    } catch (e) {
      topicsBox.replaceChildren(errorBox(e));
    }
  };

  const loadOffsets = async () => {
    let data;
    try {
      data = await get(path + '/offsets');
    } catch (e) {
      offsetsBox.replaceChildren(errorBox(e));
      return;
    }
    const reset = h('button', { id: 'connector-offsets-reset', class: 'danger', type: 'button', disabled: state !== 'STOPPED', onclick: async () => {
      if (!window.confirm(`Reset all offsets of "${name}"? It starts from the beginning when resumed.`)) return;
      try {
        const res = await api('DELETE', path + '/offsets');
        toast((res && res.message) || 'Offsets reset');
        loadOffsets();
      } catch (e) {
        offsetsBox.append(errorBox(e));
      }
    } }, 'Reset offsets');
    offsetsBox.replaceChildren(offsetsTable(data.offsets || []),
      h('div', { class: 'row' }, reset,
        state === 'STOPPED' ? null : h('span', { class: 'muted' }, 'Stop the connector to reset its offsets.')));
  };

  const loadExtras = () => { loadConfig(); loadTopics(); loadOffsets(); };

  let ticks = 0;
  const stop = every(3000, async () => {
    await refresh();
    // Config, topics and offsets change rarely: every 5th status refresh.
    if (ticks++ % 5 === 0) loadExtras();
  });
  return stop;
}
