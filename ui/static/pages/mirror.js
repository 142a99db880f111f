// The Mirror page (#/mirror): the MirrorMaker 2 connectors (source,
// checkpoint, heartbeat) this node's Connect worker runs, one row per
// flow, from GET /api/v1/mirror.

import { h, get, every, errorBox, enc, stateBadge, fmtNum, fmtMs } from '../app.js';
import { shortClass, taskSummary } from './connectors.js';

// At most this many topics are named in a row; the rest are counted.
const topicsShown = 6;

function topicsCell(topics) {
  topics = (topics || []).slice().sort();
  if (!topics.length) return h('span', { class: 'muted' }, 'none yet');
  const shown = topics.slice(0, topicsShown).map((t) => h('a', { href: '#/topics/' + enc(t) }, t));
  const parts = [];
  shown.forEach((a, i) => { if (i) parts.push(', '); parts.push(a); });
  if (topics.length > topicsShown) parts.push(h('span', { class: 'muted', title: topics.slice(topicsShown).join(', ') }, ` and ${topics.length - topicsShown} more`));
  return h('span', { class: 'mirror-topics' }, parts);
}

export function render(main) {
  main.append(h('h1', {}, 'Mirror'),
    h('p', { class: 'muted intro' }, 'MirrorMaker 2 flows run by this node\'s Connect worker (fjord mirror, or Mirror*Connector configs posted to /connectors).'));
  const body = h('div', { id: 'mirror-body' }, h('p', { class: 'muted' }, 'Loading…'));
  main.append(body);
  return every(5000, async () => {
    let data;
    try {
      data = await get('/api/v1/mirror');
    } catch (e) {
      body.replaceChildren(errorBox(e));
      return;
    }
    if (!data.available) {
      body.replaceChildren(h('div', { class: 'empty-state', id: 'no-connect-worker' }, h('p', {}, 'No Connect worker runs on this node.')));
      return;
    }
    const flows = (data.flows || []).slice().sort((a, b) =>
      `${a.source_cluster}>${a.target_cluster}>${a.connector}`.localeCompare(`${b.source_cluster}>${b.target_cluster}>${b.connector}`));
    if (!flows.length) {
      body.replaceChildren(h('div', { class: 'empty-state' },
        h('p', {}, 'No mirror connectors run here.'),
        h('p', { class: 'muted' }, 'Start `fjord mirror mm2.properties`, or create a MirrorSourceConnector on the ',
          h('a', { href: '#/connectors/new?plugin=org.apache.kafka.connect.mirror.MirrorSourceConnector' }, 'new connector'), ' page.')));
      return;
    }
    body.replaceChildren(h('table', { id: 'mirror-table' },
      h('thead', {}, h('tr', {},
        h('th', {}, 'Flow'), h('th', {}, 'Connector'), h('th', {}, 'Class'), h('th', {}, 'State'), h('th', {}, 'Tasks'),
        h('th', {}, 'Topics'), h('th', { class: 'num' }, 'Replication latency'), h('th', { class: 'num' }, 'Records'))),
      h('tbody', {}, flows.map((f) => h('tr', { class: 'mirror-flow', 'data-connector': f.connector },
        h('td', { class: 'flow' }, h('strong', {}, f.source_cluster || '?'), ' → ', h('strong', {}, f.target_cluster || '?')),
        h('td', {}, h('a', { href: '#/connectors/' + enc(f.connector) }, f.connector)),
        h('td', { title: f.class || '' }, shortClass(f.class)),
        h('td', {}, stateBadge(f.state)),
        h('td', {}, taskSummary(f.tasks)),
        h('td', {}, topicsCell(f.topics)),
        h('td', { class: 'num' }, f.replication_latency_ms === null || f.replication_latency_ms === undefined ? '–' : fmtMs(Math.round(f.replication_latency_ms))),
        h('td', { class: 'num' }, fmtNum(f.records)))))));
  });
}
