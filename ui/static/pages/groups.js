import { h } from '../app.js';
export function renderList(main) { main.append(h('h1', {}, 'Consumer groups')); }
export function renderGroup(main, p) { main.append(h('h1', {}, p.group)); }
