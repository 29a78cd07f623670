// Models (#/models): every run in the database -- daemon jobs and `tunefarm tune` runs -- and the
// trials outside them. modelsTable() is also the Overview's.
import * as api from '../api.js';
import { h, numCell, Table } from '../dom.js';
import * as fmt from '../format.js';

export function modelsTable() {
  return new Table({
    columns: [['model'], ['job'], ['state'], ['trials', 'num']],
    rowKey: (m) => m.id,
    cells: (m) => [
      h('td', {}, h('a', { href: '#/model/' + m.id }, m.model)),
      h('td', {}, m.id ? '#' + m.id : fmt.DASH),
      h('td', { class: 'state-' + m.state }, m.state || ''),
      numCell(m.trials_done, fmt.int(m.trials_done)),
    ],
    empty: 'No trials yet.',
  });
}

export function modelsView(ctx) {
  let table = null;
  const load = () => api.get('models', { db: ctx.db });
  return {
    async mount(root) {
      const answer = await load();
      table = modelsTable();
      root.replaceChildren(h('h1', {}, 'Models'), table.el);
      table.update(answer.models);
    },
    async poll() {
      table.update((await load()).models);
    },
  };
}
