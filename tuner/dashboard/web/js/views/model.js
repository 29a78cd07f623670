// Model (#/model/JOB): the task table as MetaSchedule prints it and the estimated end-to-end
// latency over tuning time.
import * as api from '../api.js';
import { ChartSet, X_ZOOM } from '../charts.js';
import { card, h, numCell, setText, Table } from '../dom.js';
import * as fmt from '../format.js';
import { latencyPoints, modelTrials, taskKey } from '../shape.js';
import { routeId } from '../router.js';

// MetaSchedule's task table: ID, Name, FLOP, Weight, Speed (GFLOPS), Latency (us), Weighted Latency
// (us), Trials, Done.
function taskTable() {
  return new Table({
    id: 'task-table',
    columns: [
      ['ID', 'num'],
      ['Name'],
      ['FLOP', 'num'],
      ['Weight', 'num'],
      ['Speed (GFLOPS)', 'num'],
      ['Latency (us)', 'num'],
      ['Weighted Latency (us)', 'num'],
      ['Trials', 'num'],
      ['Done'],
    ],
    rowKey: (t) => t.task,
    rowAttrs: (t) => ({ 'data-workload': t.workload, 'data-task': taskKey(t) }),
    cells: (t) => [
      numCell(t.task, t.task),
      h(
        'td',
        { class: 'mono' },
        t.task_id ? h('a', { href: '#/task/' + t.task_id }, t.name) : t.name,
        t.alternative_of === null
          ? null
          : h('span', { class: 'muted' }, ' (alternative of task ' + t.alternative_of + ')'),
      ),
      numCell(t.flops, fmt.int(Math.round(t.flops))),
      numCell(t.weight, t.weight),
      numCell(t.best_gflops, fmt.num(t.best_gflops, 2)),
      numCell(t.latency_us, fmt.ms(t.latency_us)),
      numCell(t.weighted_latency_us, fmt.ms(t.weighted_latency_us)),
      numCell(t.trials, t.trials),
      h('td', {}, t.done === null ? fmt.DASH : t.done ? 'Y' : 'N'),
    ],
    empty: 'No tasks.',
  });
}

export function modelView(ctx, route) {
  const job = routeId(route);
  const charts = new ChartSet();
  let parts = null;
  const load = () => api.get('model', { db: ctx.db, job });

  function build(root) {
    parts = {
      title: h('h1', {}),
      latency: card(
        'estimated end-to-end latency',
        'model-latency',
        'estimated latency of the tuned operators (weight × best, faster implementation per node)',
      ),
      tasks: card('tasks'),
      trials: card('trials'),
      table: taskTable(),
      chart: h('div', { class: 'chart', id: 'chart-latency' }),
    };
    root.replaceChildren(
      parts.title,
      h('div', { class: 'cards' }, parts.latency.el, parts.tasks.el, parts.trials.el),
      h('h2', {}, 'Tasks'),
      parts.table.el,
      h('h2', {}, 'Estimated end-to-end latency over tuning time'),
      parts.chart,
    );
    charts.create('latency', parts.chart, {
      tooltip: { trigger: 'axis' },
      grid: { left: 70, right: 30, top: 30, bottom: 60 },
      dataZoom: X_ZOOM,
      xAxis: { type: 'time', name: 'time', min: 'dataMin', max: 'dataMax', axisLabel: { hideOverlap: true } },
      yAxis: { type: 'value', name: 'ms', scale: true },
      series: [],
    });
  }

  function show(m) {
    const run = m.model;
    setText(parts.title, 'Model: ' + run.model + (run.id ? ' (job #' + run.id + ', ' + run.state + ')' : ''));
    setText(
      parts.latency.value,
      m.total_latency_ms === null ? 'not every task has a result' : fmt.ms(m.total_latency_ms) + ' ms',
    );
    setText(parts.tasks.value, m.tasks.length);
    setText(parts.trials.value, fmt.int(modelTrials(m.tasks)));
    parts.table.update(m.tasks);
    const points = latencyPoints(m.latency_history);
    charts.update('latency', {
      series: [
        {
          id: 'latency',
          name: 'sum of weight x best latency',
          type: 'line',
          step: 'end',
          showSymbol: points.length < 50,
          data: points,
        },
      ],
    });
  }

  return {
    async mount(root) {
      const m = await load();
      build(root);
      show(m);
    },
    async poll() {
      show(await load());
    },
    resize: () => charts.resize(),
    dispose: () => charts.dispose(),
  };
}
