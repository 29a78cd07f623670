// Task (#/task/ID): per target the trials and best; best-so-far over trials and wall time; every
// trial by outcome; knob importance; parallel coordinates; the error breakdown; the fastest configs
// and the newest trials. It keeps every trial of the task (columns as /api/trials sends them) and
// on each poll appends what is new, then updates its tables and charts in place.
import * as api from '../api.js';
import { ChartSet, X_ZOOM } from '../charts.js';
import { card, h, numCell, setText, Table } from '../dom.js';
import * as fmt from '../format.js';
import {
  appendTrials,
  bestSoFarLines,
  compactJson,
  emptyTrials,
  importanceBars,
  latestTrials,
  parallelCoordinates,
  trialsByStatus,
} from '../shape.js';
import { routeId } from '../router.js';

// A poll reads again from this many ids below its last position and keeps the trials it has not
// seen: on PostgreSQL a trial can commit after one with a higher id (docs/formats/records_db.md,
// "Claims"; the tuner and the metrics do the same, NewTrials).
const LATE_COMMIT_WINDOW = 1024;
const PAGE = 50000;
const LATEST = 50; // rows of the newest-trials table

function targetsTable() {
  return new Table({
    id: 'target-table',
    columns: [
      ['target'],
      ['trials', 'num'],
      ['ok', 'num'],
      ['best (ms)', 'num'],
      ['best GFLOP/s', 'num'],
      ['best trial', 'num'],
    ],
    rowKey: (x) => x.target_id,
    cells: (x) => [
      h('td', { class: 'mono' }, x.target),
      numCell(x.trials, x.trials),
      numCell(x.ok_trials, x.ok_trials),
      numCell(x.best_ms, fmt.ms(x.best_ms)),
      numCell(x.best_gflops, fmt.num(x.best_gflops, 2)),
      numCell(x.best_trial, x.best_trial),
    ],
  });
}

function errorsTable() {
  return new Table({
    id: 'error-table',
    columns: [['outcome'], ['device'], ['count', 'num'], ['message'], ['last trial', 'num']],
    rowKey: (e) => [e.status, e.device, e.message].join('\n'),
    cells: (e) => [
      h('td', { class: 'status-bad' }, e.status),
      h('td', {}, e.device),
      numCell(e.count, e.count),
      h('td', { class: 'msg' }, e.message),
      numCell(e.last_trial, e.last_trial),
    ],
    empty: 'No failed trials.',
  });
}

function latestTable() {
  return new Table({
    id: 'latest-trials',
    columns: [
      ['trial', 'num'],
      ['outcome'],
      ['ms', 'num'],
      ['GFLOP/s', 'num'],
      ['device'],
      ['threads', 'num'],
      ['config'],
    ],
    rowKey: (t) => t.id,
    rowAttrs: (t) => ({ 'data-trial': t.id }),
    cells: (t) => [
      numCell(t.id, t.id),
      h('td', { class: t.status === 'ok' ? '' : 'status-bad' }, t.status),
      numCell(t.mean_ms, fmt.ms(t.mean_ms)),
      numCell(t.gflops, fmt.num(t.gflops, 2)),
      h('td', {}, t.device),
      numCell(t.threads, String(t.threads)),
      h('td', { class: 'mono' }, t.config),
    ],
    empty: 'No trials yet.',
  });
}

function fastestTable() {
  return new Table({
    id: 'fastest-table',
    columns: [['trial', 'num'], ['ms', 'num'], ['GFLOP/s', 'num'], ['target'], ['device'], ['config']],
    rowKey: (f) => f.id,
    cells: (f) => [
      numCell(f.id, f.id),
      numCell(f.mean_ms, fmt.ms(f.mean_ms)),
      numCell(f.gflops, fmt.num(f.gflops, 2)),
      h('td', { class: 'mono' }, f.target),
      h('td', {}, f.device),
      h('td', { class: 'mono' }, compactJson(f.config)),
    ],
    empty: 'No successful trials yet.',
  });
}

// The constant part of each chart's option; show() gives them their data.
const LINE_CHART = {
  tooltip: { trigger: 'axis' },
  legend: { type: 'scroll', top: 0 },
  grid: { left: 60, right: 20, top: 36, bottom: 64 },
  dataZoom: X_ZOOM,
  yAxis: { type: 'value', name: 'GFLOP/s' },
  series: [],
};

const CHARTS = {
  best_by_trial: { ...LINE_CHART, xAxis: { type: 'value', name: 'trial', minInterval: 1 } },
  best_by_time: {
    ...LINE_CHART,
    xAxis: { type: 'time', name: 'time', min: 'dataMin', max: 'dataMax', axisLabel: { hideOverlap: true } },
  },
  trials_scatter: {
    tooltip: {
      trigger: 'item',
      formatter: (p) => 'trial ' + p.value[2] + ' (' + p.seriesName + '): ' + fmt.num(p.value[1]) + ' GFLOP/s',
    },
    legend: { top: 0 },
    grid: { left: 60, right: 20, top: 36, bottom: 64 },
    dataZoom: X_ZOOM,
    xAxis: { type: 'value', name: 'trial', minInterval: 1 },
    yAxis: { type: 'value', name: 'GFLOP/s' },
    series: [],
  },
  knob_importance: {
    tooltip: { trigger: 'axis' },
    grid: { left: 110, right: 30, top: 20, bottom: 40 },
    xAxis: { type: 'value', name: 'share of log-latency variance', max: 1 },
    yAxis: { type: 'category', data: [] },
    series: [],
  },
  parallel: {
    parallel: { left: 60, right: 90, top: 40, bottom: 30 },
    parallelAxis: [],
    visualMap: {
      show: true,
      dimension: 0,
      min: 0,
      max: 1,
      right: 0,
      top: 'middle',
      calculable: true,
      inRange: { color: ['#d0d7de', '#0969da'] },
    },
    series: [],
  },
};

function lineSeries(lines, key) {
  return lines.map((l) => ({
    id: l.name,
    name: l.name,
    type: 'line',
    step: 'end',
    showSymbol: false,
    sampling: 'lttb',
    data: l[key],
  }));
}

export function taskView(ctx, route) {
  const id = routeId(route);
  const charts = new ChartSet();
  const trials = emptyTrials();
  const seen = new Set();
  let position = 0;
  let parts = null;

  // Every trial of the task after `position` (less the late-commit window), page by page; how many
  // were new.
  async function fetchTrials() {
    let after = Math.max(0, position - LATE_COMMIT_WINDOW);
    for (let added = 0; ;) {
      const answer = await api.get('trials', { db: ctx.db, task: id, after, limit: PAGE });
      added += appendTrials(trials, seen, answer);
      position = Math.max(position, answer.last_id);
      after = answer.last_id;
      if (!answer.more) return added;
    }
  }

  function build(root, info) {
    const t = info.task;
    const chartDiv = (chartId, cls = 'chart') => h('div', { class: cls, id: chartId });
    parts = {
      flops: card('FLOPs'),
      trials: card('trials', 'task-trials'),
      best: card('best GFLOP/s', 'task-best'),
      targets: targetsTable(),
      errors: errorsTable(),
      latest: latestTable(),
      fastest: fastestTable(),
      chartEls: {
        best_by_trial: chartDiv('chart-best-trials'),
        best_by_time: chartDiv('chart-best-time'),
        trials_scatter: chartDiv('chart-scatter'),
        knob_importance: chartDiv('chart-importance'),
        parallel: chartDiv('chart-parallel', 'chart tall'),
      },
    };
    const el = parts.chartEls;
    root.replaceChildren(
      h('h1', {}, 'Task ' + t.id + ': ' + t.name),
      h('p', { class: 'mono' }, t.workload),
      h(
        'p',
        {},
        h(
          'a',
          { href: '#/compare?workload=' + encodeURIComponent(t.workload) },
          'Compare across devices and databases',
        ),
      ),
      h('div', { class: 'cards' }, parts.flops.el, parts.trials.el, parts.best.el),
      parts.targets.el,
      h(
        'div',
        { class: 'grid' },
        h('div', {}, h('h2', {}, 'Best so far, by trial'), el.best_by_trial),
        h('div', {}, h('h2', {}, 'Best so far, by wall time'), el.best_by_time),
        h('div', {}, h('h2', {}, 'Every trial'), el.trials_scatter),
        h('div', {}, h('h2', {}, 'Knob importance'), el.knob_importance),
      ),
      h('h2', {}, 'Parallel coordinates over the knobs'),
      el.parallel,
      h('h2', {}, 'Errors'),
      parts.errors.el,
      h('h2', {}, 'Fastest configs'),
      parts.fastest.el,
      h('h2', {}, 'Newest trials'),
      parts.latest.el,
    );
    setText(parts.flops.value, fmt.flops(t.flops));
    for (const [name, option] of Object.entries(CHARTS)) charts.create(name, el[name], option);
  }

  function show(info) {
    setText(parts.trials.value, fmt.int(trials.id.length));
    setText(parts.best.value, fmt.num(info.task.best_gflops, 2));
    parts.targets.update(info.targets);
    parts.errors.update(info.errors);
    parts.latest.update(latestTrials(trials, LATEST));
    parts.fastest.update(info.fastest);

    const targetNames = new Map(info.targets.map((x) => [x.target_id, x.target]));
    const lines = bestSoFarLines(trials, targetNames);
    charts.update('best_by_trial', { series: lineSeries(lines, 'byTrial') });
    charts.update('best_by_time', { series: lineSeries(lines, 'byTime') });
    charts.update('trials_scatter', {
      series: trialsByStatus(trials).map((g) => ({
        id: g.name,
        name: g.name,
        type: 'scatter',
        symbolSize: 5,
        large: g.points.length > 2000,
        data: g.points,
      })),
    });
    const bars = importanceBars(info.knobs);
    charts.update('knob_importance', {
      yAxis: { data: bars.names },
      series: [{ id: 'importance', type: 'bar', data: bars.values }],
    });
    const knobNames = info.knobs.map((k) => k.knob);
    const pc = parallelCoordinates(trials, knobNames);
    charts.update(
      'parallel',
      {
        parallelAxis: pc.axes,
        visualMap: { dimension: knobNames.length, max: pc.max },
        series: [{ id: 'configs', type: 'parallel', lineStyle: { width: 1, opacity: 0.45 }, data: pc.rows }],
      },
      ['series', 'parallelAxis'],
    );
  }

  return {
    async mount(root) {
      const info = await api.get('task', { db: ctx.db, id });
      await fetchTrials();
      build(root, info);
      show(info);
    },
    async poll() {
      if ((await fetchTrials()) === 0) return;
      show(await api.get('task', { db: ctx.db, id }));
    },
    resize: () => charts.resize(),
    dispose: () => charts.dispose(),
  };
}
