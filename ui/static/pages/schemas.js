// Schemas (#/schemas) and one subject (#/schemas/:subject), read from the
// schema registry this node is configured with (through /api/v1/schemas).

import { h, get, fmtNum, enc } from '../app.js';
import { loadError, slot, filterInput, replaceQuery, NUM } from './kafka-util.js';

export async function renderList(main, params) {
  let filter = (params.query.get('q') || '').toLowerCase();
  const err = slot();
  const head = slot();
  const body = slot();
  const count = h('span', { class: 'muted' });
  main.append(h('h1', {}, 'Schemas'), err, head);

  let data;
  try {
    data = await get('/api/v1/schemas');
  } catch (e) {
    err.set(loadError('Could not load the schema registry\'s subjects', e));
    return;
  }
  if (!head.isConnected) return; // the user went elsewhere meanwhile
  if (!data.available) {
    head.set(h('div', { class: 'panel empty-state', id: 'schemas-unavailable' },
      h('p', {}, h('strong', {}, 'No schema registry on this node.')),
      data.detail ? h('p', {}, data.detail) : null,
      h('p', { class: 'muted' }, h('code', {}, 'fjord dev'), ' serves one at /schema-registry; a broker or Connect worker lists subjects when it is configured with a registry URL.')));
    return;
  }
  const subjects = (data.subjects || []).slice().sort((a, b) => a.subject.localeCompare(b.subject));
  head.set(h('div', { class: 'topic-summary' },
    h('div', { class: 'kv' }, h('span', { class: 'label' }, 'Global compatibility'), h('span', { class: 'value', id: 'schemas-compatibility' }, data.compatibility || '–')),
    h('div', { class: 'kv' }, h('span', { class: 'label' }, 'Subjects'), h('span', { class: 'value' }, fmtNum(subjects.length)))));
  main.append(h('div', { class: 'toolbar' }, filterInput('Filter subjects', (v) => {
    filter = v;
    replaceQuery(new URLSearchParams(v ? { q: v } : {}));
    draw();
  }, filter), count), body);

  function draw() {
    const shown = subjects.filter((s) => !filter || s.subject.toLowerCase().includes(filter));
    count.textContent = shown.length === subjects.length ? '' : fmtNum(shown.length) + ' of ' + fmtNum(subjects.length) + ' subjects';
    if (subjects.length === 0) { body.set(h('p', { class: 'muted' }, 'The registry has no subjects yet. They appear when a producer or connector registers a schema.')); return; }
    body.set(h('table', { id: 'subject-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Subject'), h('th', NUM, 'Versions'), h('th', NUM, 'Latest version'), h('th', NUM, 'Latest ID'), h('th', {}, 'Type'), h('th', {}, 'Compatibility'))),
      h('tbody', {}, shown.map((s) => h('tr', { dataset: { subject: s.subject } },
        h('td', {}, h('a', { href: '#/schemas/' + enc(s.subject) }, s.subject)),
        h('td', NUM, fmtNum((s.versions || []).length)),
        h('td', NUM, String(s.latest_version ?? '–')),
        h('td', NUM, String(s.latest_id ?? '–')),
        h('td', {}, s.schema_type || 'AVRO'),
        h('td', {}, s.compatibility || h('span', { class: 'muted' }, (data.compatibility || 'global') + ' (global)')))))));
  }
  draw();
}

// pretty prints a schema string: JSON (Avro, JSON Schema) indented,
// anything else (Protobuf) as it is.
function pretty(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return String(s); }
}

export async function renderSubject(main, params) {
  const subject = params.subject;
  const crumbs = h('div', { class: 'crumbs' }, h('a', { href: '#/schemas' }, 'Schemas'), ' / ');
  main.append(crumbs, h('h1', {}, subject));
  let d;
  try {
    d = await get('/api/v1/schemas/' + enc(subject));
  } catch (e) {
    if (crumbs.isConnected) main.append(loadError(e && e.status === 404 ? 'No subject ' + subject : 'Could not load subject ' + subject, e));
    return;
  }
  if (!crumbs.isConnected) return; // the user went elsewhere meanwhile
  const versions = (d.versions || []).slice().sort((a, b) => b.version - a.version);
  main.append(h('div', { class: 'topic-summary' },
    h('div', { class: 'kv' }, h('span', { class: 'label' }, 'Compatibility'), h('span', { class: 'value', id: 'subject-compatibility' }, d.compatibility || '–')),
    h('div', { class: 'kv' }, h('span', { class: 'label' }, 'Versions'), h('span', { class: 'value' }, fmtNum(versions.length))),
    versions.length ? h('div', { class: 'kv' }, h('span', { class: 'label' }, 'Latest'), h('span', { class: 'value' }, 'version ' + versions[0].version + ' · id ' + versions[0].id)) : null));
  if (versions.length === 0) { main.append(h('p', { class: 'muted' }, 'This subject has no versions.')); return; }
  // The latest version open, older ones folded.
  main.append(h('h2', {}, 'Versions'), ...versions.map((v, i) => h('details', { class: 'schema-version', open: i === 0, dataset: { version: String(v.version) } },
    h('summary', {}, h('strong', {}, 'Version ' + v.version), h('span', { class: 'muted' }, ' · id ' + v.id + ' · ' + (v.schema_type || 'AVRO'))),
    h('pre', { class: 'schema' }, pretty(v.schema)))));
}
