import { h } from '../app.js';
export function renderList(main) { main.append(h('h1', {}, 'Schemas')); }
export function renderSubject(main, p) { main.append(h('h1', {}, p.subject)); }
