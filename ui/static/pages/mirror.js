import { h } from '../app.js';
export function render(main) { main.append(h('h1', {}, 'Mirror')); }
