import { h } from '../app.js';
export function renderList(main) { main.append(h('h1', {}, 'Connectors')); }
export function renderNew(main) { main.append(h('h1', {}, 'New connector')); }
export function renderConnector(main, p) { main.append(h('h1', {}, p.connector)); }
