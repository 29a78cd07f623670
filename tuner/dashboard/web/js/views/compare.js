// Compare (#/compare?workload=KEY): one workload in every records database, per implementation,
// target and device.
import * as api from '../api.js';
import { ChartSet } from '../charts.js';
import { h, numCell, setText, Table } from '../dom.js';
import * as fmt from '../format.js';
import { uniqueWorkloads } from '../shape.js';

function compareTable() {
  return new Table({
    id: 'compare-table',
    columns: [
      ['records'],
      ['implementation'],
      ['target'],
      ['device'],
      ['trials', 'num'],
      ['ok', 'num'],
      ['best (ms)', 'num'],
      ['best GFLOP/s', 'num'],
    ],
    rowKey: (r) => [r.db, r.template, r.target, r.device].join('\n'),
    cells: (r) => [
      h('td', { class: 'mono' }, r.records),
      h('td', { class: 'mono' }, r.template),
      h('td', { class: 'mono' }, r.target),
      h('td', {}, r.device),
      numCell(r.trials, r.trials),
      numCell(r.ok_trials, r.ok_trials),
      numCell(r.best_ms, fmt.ms(r.best_ms)),
      numCell(r.best_gflops, fmt.num(r.best_gflops, 2)),
    ],
  });
}

export function compareView(ctx, route) {
  const workload = route.params.get('workload') || '';
  const charts = new ChartSet();
  let parts = null;

  async function load() {
    return workload ? api.get('compare', { workload }) : null;
  }

  async function picker() {
    const answers = [];
    for (let db = 0; db < ctx.config.records.length; db++) answers.push(await api.get('workloads', { db }));
    const select = h(
      'select',
      {
        id: 'compare-workload',
        onchange: (e) => {
          location.hash = '#/compare?workload=' + encodeURIComponent(e.target.value);
        },
      },
      h('option', { value: '' }, '— pick a workload —'),
      uniqueWorkloads(answers).map((w) => h('option', { value: w.key, selected: w.key === workload }, w.name)),
    );
    return select;
  }

  function build(root, select) {
    const intro = h(
      'p',
      {},
      'The same workload across devices, targets and records databases (',
      ctx.config.records.join(', '),
      ').',
    );
    if (!workload) {
      root.replaceChildren(h('h1', {}, 'Compare'), intro, select);
      return;
    }
    parts = {
      key: h('p', { class: 'mono' }),
      table: compareTable(),
      chart: h('div', { class: 'chart', id: 'chart-compare' }),
    };
    root.replaceChildren(h('h1', {}, 'Compare'), intro, select, parts.key, parts.table.el, parts.chart);
    charts.create('compare', parts.chart, {
      tooltip: { trigger: 'axis' },
      grid: { left: 60, right: 20, top: 30, bottom: 120 },
      xAxis: { type: 'category', data: [], axisLabel: { rotate: 20 } },
      yAxis: { type: 'value', name: 'best GFLOP/s' },
      series: [],
    });
  }

  function show(c) {
    if (!c) return;
    setText(parts.key, c.workload);
    parts.table.update(c.rows);
    charts.update('compare', {
      xAxis: { data: c.rows.map((r) => r.label) },
      series: [{ id: 'best', type: 'bar', data: c.rows.map((r) => r.best_gflops) }],
    });
  }

  return {
    async mount(root) {
      const select = await picker();
      const c = await load();
      build(root, select);
      show(c);
    },
    async poll() {
      show(await load());
    },
    resize: () => charts.resize(),
    dispose: () => charts.dispose(),
  };
}
