import { h } from '../app.js';
export function renderList(main) { main.append(h('h1', {}, 'Topics')); }
export function renderTopic(main, p) { main.append(h('h1', {}, p.topic)); }
