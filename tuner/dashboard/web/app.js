// The tunefarm dashboard page: views over the JSON API (docs/dashboard.md), charts by ECharts
// (embedded; nothing is fetched from elsewhere). Text from the database is only ever set as text
// (h() below), never parsed as HTML.
'use strict';

const state = {
  db: 0,
  config: null,
  route: null,       // the view being shown, with its own poll function
  lastId: null,      // newest trial id the current view has seen
  timer: null,
  queue: Promise.resolve(),  // route() and poll() run one at a time through this chain
};
// Chart instances by name, for resizing and for the end-to-end tests.
window.tunefarmCharts = {};

// ---------- small helpers ----------
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

async function api(path, params) {
  const q = new URLSearchParams(params || {}).toString();
  const res = await fetch('/api/' + path + (q ? '?' + q : ''), { cache: 'no-store' });
  const body = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

const fmt = {
  num(v, digits = 2) { return v === null || v === undefined ? '—' : Number(v).toFixed(digits); },
  // Milliseconds with 4 significant digits (kernels run from nanoseconds to seconds).
  ms(v) { return v === null || v === undefined ? '—' : Number(v).toPrecision(4); },
  int(v) { return v === null || v === undefined ? '—' : Number(v).toLocaleString('en-US'); },
  flops(v) {
    if (!v) return '—';
    const units = [['T', 1e12], ['G', 1e9], ['M', 1e6], ['K', 1e3]];
    for (const [u, s] of units) if (v >= s) return (v / s).toFixed(2) + ' ' + u;
    return String(v);
  },
  dur(s) {
    if (s === null || s === undefined) return '—';
    if (s < 90) return Math.round(s) + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  },
  time(ms) { return ms ? new Date(ms).toLocaleTimeString() : '—'; },
};

function numCell(value, text) { return h('td', { class: 'num', 'data-value': value === null || value === undefined ? '' : value }, text); }

function table(headers, rows, attrs) {
  return h('table', attrs || {},
    h('thead', {}, h('tr', {}, headers.map(([t, cls]) => h('th', { class: cls || null }, t)))),
    h('tbody', {}, rows));
}

function showError(err) {
  const banner = document.getElementById('error-banner');
  if (!err) { banner.hidden = true; return; }
  banner.hidden = false;
  banner.textContent = String(err.message || err);
}

function chart(container, name, option) {
  let inst = window.tunefarmCharts[name];
  if (!inst || inst.getDom() !== container) {
    if (inst) inst.dispose();
    inst = echarts.init(container, null, { renderer: 'canvas' });
    window.tunefarmCharts[name] = inst;
  }
  // No animation: charts of many thousand trials draw at once, and a snapshot is never half-drawn.
  inst.setOption({ animation: false, ...option }, true);
  return inst;
}

function disposeCharts() {
  for (const inst of Object.values(window.tunefarmCharts)) inst.dispose();
  window.tunefarmCharts = {};
}

function shortWorkload(key) {
  // "conv2d|N1_C64_H56_W56|K64_R3x3..." -> "conv2d N1_C64_H56_W56 K64_R3x3..."
  const parts = String(key).split('|');
  return parts.slice(0, 3).join(' ');
}

// A task: its implementation and its (target-neutral) workload.
function taskName(t) { return (t.template ? t.template + ' ' : '') + shortWorkload(t.workload); }

function setLive(text) { document.getElementById('live').textContent = text; }

// ---------- views ----------
const views = {};

views.overview = {
  async render(root) {
    const o = await api('overview', { db: state.db });
    state.lastId = o.last_id;
    const models = await api('models', { db: state.db });
    root.replaceChildren(
      h('h1', {}, 'Overview'),
      h('div', { class: 'cards' },
        card('trials', fmt.int(o.trials), 'overview-trials'),
        card('jobs running', String(o.jobs.filter(j => j.state === 'running').length)),
        card('records', o.path),
        farmCards(o.farm)),
      h('h2', {}, 'Jobs'),
      o.jobs.length ? jobsTable(o.jobs) : h('p', { class: 'muted' }, 'No daemon jobs in this database (tuner-daemon writes them; `tunefarm tune` trials are under Models).'),
      h('h2', {}, 'Models'),
      modelsTable(models.models),
      h('h2', {}, 'Farm'),
      farmSection(o.farm),
      h('h2', {}, 'Recent errors'),
      o.recent_errors.length ? errorsTable(o.recent_errors) : h('p', { class: 'muted' }, 'No failed trials.'));
  },
  pollAlways: true,
  async poll(root) {
    await this.render(root);
  },
};

function card(label, value, id, title) {
  return h('div', { class: 'card', id: id || null, title: title || null }, h('div', { class: 'v' }, value), h('div', { class: 'k' }, label));
}

function farmCards(farm) {
  if (!farm || farm.error) return [];
  const free = farm.keys.reduce((a, k) => a + k.free, 0), busy = farm.keys.reduce((a, k) => a + k.busy, 0);
  const queued = farm.keys.reduce((a, k) => a + k.pending, 0);
  return [card('servers free / busy', free + ' / ' + busy), card('lease requests queued', String(queued)),
    card('measurements/s', farm.measurements_per_s === null ? 'measuring…' : fmt.num(farm.measurements_per_s, 1), 'farm-rate')];
}

function jobsTable(jobs) {
  const canCancel = state.config && state.config.can_cancel;
  return table([['job'], ['model'], ['target'], ['state'], ['progress'], ['ETA', 'num'], ['message'], ['']],
    jobs.map(j => h('tr', { 'data-job': j.id },
      h('td', {}, h('a', { href: '#/model/' + j.id }, '#' + j.id)),
      h('td', {}, j.model), h('td', { class: 'mono' }, j.target),
      h('td', { class: 'state-' + j.state }, j.state),
      h('td', {}, h('span', { class: 'bar' }, h('span', { style: 'width:' + (j.trials_budget ? Math.min(100, 100 * j.trials_done / j.trials_budget) : 0) + '%' })),
        ' ' + j.trials_done + ' / ' + (j.trials_budget || '?')),
      numCell(j.eta_s, fmt.dur(j.eta_s)),
      h('td', { class: 'msg' }, j.message),
      // A `tunefarm tune` run stops with its terminal's Ctrl-C; the daemon cancels only its own jobs.
      h('td', {}, canCancel && j.cancellable && (j.state === 'running' || j.state === 'queued')
        ? h('button', { class: 'danger', onclick: () => cancelJob(j.id) }, 'Cancel') : null))));
}

async function cancelJob(id) {
  const token = window.prompt('Farm token to cancel job #' + id + ':');
  if (!token) return;
  const res = await fetch('/api/jobs/cancel?id=' + id, { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) showError(new Error('cancel job #' + id + ': ' + (body.error || res.statusText)));
  else route();
}

function modelsTable(models) {
  if (!models.length) return h('p', { class: 'muted' }, 'No trials yet.');
  return table([['model'], ['job'], ['state'], ['trials', 'num']],
    models.map(m => h('tr', {},
      h('td', {}, h('a', { href: '#/model/' + m.id }, m.model)),
      h('td', {}, m.id ? '#' + m.id : '—'), h('td', { class: 'state-' + m.state }, m.state || ''),
      numCell(m.trials_done, fmt.int(m.trials_done)))));
}

function farmSection(farm) {
  if (!farm) return h('p', { class: 'muted' }, 'No tracker: start the dashboard with --tracker HOST:PORT to see the farm.');
  if (farm.error) return h('p', { class: 'status-bad' }, farm.error);
  return h('div', {},
    h('p', { class: 'muted' }, 'Tracker ' + farm.address + ', up ' + fmt.dur(farm.uptime_s) + '; leases granted ' +
      farm.leases_granted + ', expired ' + farm.leases_expired + '; servers lost ' + farm.servers_lost + '.'),
    table([['key'], ['free', 'num'], ['busy', 'num'], ['queued', 'num']],
      farm.keys.map(k => h('tr', {}, h('td', {}, k.key), numCell(k.free, k.free), numCell(k.busy, k.busy), numCell(k.pending, k.pending)))),
    table([['server'], ['key'], ['address'], ['state'], ['device'], ['measured', 'num'], ['heartbeat', 'num']],
      farm.servers.map(s => h('tr', {}, h('td', {}, s.server_id), h('td', {}, s.key), h('td', { class: 'mono' }, s.address),
        h('td', { class: s.state === 'busy' ? 'state-running' : '' }, s.state), h('td', {}, s.device),
        numCell(s.measurements_done, fmt.int(s.measurements_done)), numCell(s.last_heartbeat_ms_ago, s.last_heartbeat_ms_ago + ' ms ago')))));
}

function errorsTable(errors) {
  return table([['trial', 'num'], ['task'], ['outcome'], ['device'], ['message'], ['when']],
    errors.map(e => h('tr', {},
      numCell(e.id, e.id), h('td', { class: 'mono' }, shortWorkload(e.workload)),
      h('td', { class: 'status-bad' }, e.status), h('td', {}, e.device), h('td', { class: 'msg' }, e.message),
      h('td', {}, e.created_at))));
}

views.models = {
  async render(root) {
    const models = await api('models', { db: state.db });
    root.replaceChildren(h('h1', {}, 'Models'), modelsTable(models.models));
  },
};

views.model = {
  async render(root, job) {
    const m = await api('model', { db: state.db, job });
    this.job = job;
    root.replaceChildren(
      h('h1', {}, 'Model: ' + m.model.model + (m.model.id ? ' (job #' + m.model.id + ', ' + m.model.state + ')' : '')),
      h('div', { class: 'cards' },
        card('estimated end-to-end latency', m.total_latency_ms === null ? 'not every task has a result' : fmt.ms(m.total_latency_ms) + ' ms', 'model-latency',
          'estimated latency of the tuned operators (weight × best, faster implementation per node)'),
        card('tasks', String(m.tasks.length)),
        card('trials', fmt.int(m.tasks.reduce((a, t) => a + t.trials, 0)))),
      h('h2', {}, 'Tasks'),
      taskTable(m.tasks),
      h('h2', {}, 'Estimated end-to-end latency over tuning time'),
      h('div', { class: 'chart', id: 'chart-latency' }));
    const points = m.latency_history.map(p => [p[0], p[1]]);
    chart(document.getElementById('chart-latency'), 'model_latency', {
      tooltip: { trigger: 'axis' }, grid: { left: 70, right: 30, top: 30, bottom: 50 },
      xAxis: { type: 'time', name: 'time', min: 'dataMin', max: 'dataMax', axisLabel: { hideOverlap: true } }, yAxis: { type: 'value', name: 'ms', scale: true },
      series: [{ name: 'sum of weight x best latency', type: 'line', step: 'end', showSymbol: points.length < 50, data: points }],
    });
  },
  async poll(root) { await this.render(root, this.job); },
};

function taskTable(tasks) {
  // MetaSchedule's task table: ID, Name, FLOP, Weight, Speed (GFLOPS), Latency (us), Weighted Latency (us), Trials, Done.
  return table([['ID', 'num'], ['Name'], ['FLOP', 'num'], ['Weight', 'num'], ['Speed (GFLOPS)', 'num'], ['Latency (us)', 'num'],
    ['Weighted Latency (us)', 'num'], ['Trials', 'num'], ['Done']],
  tasks.map(t => h('tr', { 'data-workload': t.workload, 'data-task': t.template + ':' + t.workload },
    numCell(t.task, t.task),
    h('td', { class: 'mono' }, t.task_id ? h('a', { href: '#/task/' + t.task_id }, taskName(t)) : taskName(t),
      t.alternative_of === null ? null : h('span', { class: 'muted' }, ' (alternative of task ' + t.alternative_of + ')')),
    numCell(t.flops, fmt.int(Math.round(t.flops))), numCell(t.weight, t.weight),
    numCell(t.best_gflops, fmt.num(t.best_gflops, 2)), numCell(t.latency_us, fmt.ms(t.latency_us)),
    numCell(t.weighted_latency_us, fmt.ms(t.weighted_latency_us)), numCell(t.trials, t.trials),
    h('td', {}, t.done === null ? '—' : (t.done ? 'Y' : 'N')))), { id: 'task-table' });
}

// The Task view keeps every trial of the task (columns as the API sends them) and appends what
// /api/trials returns after its last position. A poll reads again from a window below it and keeps
// the trials it has not seen: on PostgreSQL a trial can commit after one with a higher id
// (docs/formats/records_db.md, "Claims"; the tuner and the metrics do the same, NewTrials).
const LATE_COMMIT_WINDOW = 1024;
views.task = {
  async render(root, id) {
    this.id = id;
    this.trials = { id: [], target: [], job: [], config: [], status: [], device: [], time_ms: [], mean_ms: [], gflops: [] };
    this.seen = new Set();
    this.info = await api('task', { db: state.db, id });
    this.position = 0;
    await this.fetchTrials();
    this.layout(root);
    this.draw();
  },
  async fetchTrials() {
    let after = Math.max(0, this.position - LATE_COMMIT_WINDOW);
    for (let added = 0; ;) {
      const r = await api('trials', { db: state.db, task: this.id, after, limit: 50000 });
      const fresh = [];
      r.trials.id.forEach((id, i) => { if (!this.seen.has(id)) { this.seen.add(id); fresh.push(i); } });
      for (const k of Object.keys(this.trials)) this.trials[k].push(...fresh.map(i => r.trials[k][i]));
      added += fresh.length;
      this.position = Math.max(this.position, r.last_id);
      after = r.last_id;
      if (!r.more) return added;
    }
  },
  async poll(root) {
    const before = this.trials.id.length;
    await this.fetchTrials();
    if (this.trials.id.length === before) return;
    this.info = await api('task', { db: state.db, id: this.id });
    this.layout(root);
    this.draw();
  },
  layout(root) {
    const t = this.info.task;
    const targets = new Map(this.info.targets.map(x => [x.target_id, x.target]));
    this.targetNames = targets;
    root.replaceChildren(
      h('h1', {}, 'Task ' + t.id + ': ' + t.template),
      h('p', { class: 'mono' }, t.workload),
      h('p', {}, h('a', { href: '#/compare?workload=' + encodeURIComponent(t.workload) }, 'Compare across devices and databases')),
      h('div', { class: 'cards' },
        card('FLOPs', fmt.flops(t.flops)), card('trials', fmt.int(this.trials.id.length), 'task-trials'),
        card('best GFLOP/s', fmt.num(Math.max(0, ...this.info.targets.map(x => x.best_gflops)), 2), 'task-best')),
      table([['target'], ['trials', 'num'], ['ok', 'num'], ['best (ms)', 'num'], ['best GFLOP/s', 'num'], ['best trial', 'num']],
        this.info.targets.map(x => h('tr', {}, h('td', { class: 'mono' }, x.target), numCell(x.trials, x.trials), numCell(x.ok_trials, x.ok_trials),
          numCell(x.best_ms, fmt.ms(x.best_ms)), numCell(x.best_gflops, fmt.num(x.best_gflops, 2)), numCell(x.best_trial, x.best_trial)))),
      h('div', { class: 'grid' },
        h('div', {}, h('h2', {}, 'Best so far, by trial'), h('div', { class: 'chart', id: 'chart-best-trials' })),
        h('div', {}, h('h2', {}, 'Best so far, by wall time'), h('div', { class: 'chart', id: 'chart-best-time' })),
        h('div', {}, h('h2', {}, 'Every trial'), h('div', { class: 'chart', id: 'chart-scatter' })),
        h('div', {}, h('h2', {}, 'Knob importance'), h('div', { class: 'chart', id: 'chart-importance' }))),
      h('h2', {}, 'Parallel coordinates over the knobs'),
      h('div', { class: 'chart tall', id: 'chart-parallel' }),
      h('h2', {}, 'Errors'),
      this.info.errors.length ? table([['outcome'], ['device'], ['count', 'num'], ['message'], ['last trial', 'num']],
        this.info.errors.map(e => h('tr', {}, h('td', { class: 'status-bad' }, e.status), h('td', {}, e.device), numCell(e.count, e.count),
          h('td', { class: 'msg' }, e.message), numCell(e.last_trial, e.last_trial))), { id: 'error-table' })
        : h('p', { class: 'muted', id: 'error-table' }, 'No failed trials.'),
      h('h2', {}, 'Fastest configs'),
      table([['trial', 'num'], ['ms', 'num'], ['GFLOP/s', 'num'], ['target'], ['device'], ['config']],
        this.info.fastest.map(f => h('tr', {}, numCell(f.id, f.id), numCell(f.mean_ms, fmt.ms(f.mean_ms)), numCell(f.gflops, fmt.num(f.gflops, 2)),
          h('td', { class: 'mono' }, f.target), h('td', {}, f.device), h('td', { class: 'mono' }, compactJson(f.config))))));
  },
  draw() {
    const tr = this.trials;
    // One best-so-far series per (target, device, job): per tuner run, per device/target.
    const series = new Map();
    for (let i = 0; i < tr.id.length; i++) {
      const name = (this.targetNames.get(tr.target[i]) || 'target ' + tr.target[i]) + (tr.device[i] ? ' @ ' + tr.device[i] : '') +
        (tr.job[i] ? ' job #' + tr.job[i] : '');
      let s = series.get(name);
      if (!s) { s = { n: 0, best: 0, byTrial: [], byTime: [] }; series.set(name, s); }
      s.n++;
      const g = tr.gflops[i];
      if (g > s.best) s.best = g;
      s.byTrial.push([s.n, s.best]);
      s.byTime.push([tr.time_ms[i], s.best]);
    }
    const line = (key) => [...series.entries()].map(([name, s]) => ({ name, type: 'line', step: 'end', showSymbol: false, sampling: 'lttb', data: s[key] }));
    const common = { tooltip: { trigger: 'axis' }, legend: { type: 'scroll', bottom: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 60 } };
    chart(document.getElementById('chart-best-trials'), 'best_by_trial', { ...common,
      xAxis: { type: 'value', name: 'trial', minInterval: 1 }, yAxis: { type: 'value', name: 'GFLOP/s' }, series: line('byTrial') });
    chart(document.getElementById('chart-best-time'), 'best_by_time', { ...common,
      xAxis: { type: 'time', name: 'time', min: 'dataMin', max: 'dataMax', axisLabel: { hideOverlap: true } }, yAxis: { type: 'value', name: 'GFLOP/s' }, series: line('byTime') });
    // Every trial, coloured by outcome; failures sit at 0 GFLOP/s.
    const byStatus = new Map();
    for (let i = 0; i < tr.id.length; i++) {
      const st = tr.status[i];
      if (!byStatus.has(st)) byStatus.set(st, []);
      byStatus.get(st).push([i + 1, tr.gflops[i], tr.id[i]]);
    }
    chart(document.getElementById('chart-scatter'), 'trials_scatter', {
      tooltip: { trigger: 'item', formatter: p => 'trial ' + p.value[2] + ' (' + p.seriesName + '): ' + fmt.num(p.value[1]) + ' GFLOP/s' },
      legend: { bottom: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 60 },
      xAxis: { type: 'value', name: 'trial', minInterval: 1 }, yAxis: { type: 'value', name: 'GFLOP/s' },
      series: [...byStatus.entries()].map(([name, data]) => ({ name, type: 'scatter', symbolSize: 5, large: data.length > 2000, data })),
    });
    const knobs = this.info.knobs;
    chart(document.getElementById('chart-importance'), 'knob_importance', {
      tooltip: { trigger: 'axis' }, grid: { left: 110, right: 30, top: 20, bottom: 40 },
      xAxis: { type: 'value', name: 'share of log-latency variance', max: 1 },
      yAxis: { type: 'category', data: knobs.map(k => k.knob).reverse() },
      series: [{ type: 'bar', data: knobs.map(k => Number(k.importance.toFixed(4))).reverse() }],
    });
    this.drawParallel();
  },
  drawParallel() {
    // Successful trials over the knobs (each a category axis of its values) and GFLOP/s.
    const tr = this.trials;
    const names = this.info.knobs.map(k => k.knob);
    const values = names.map(() => new Map());
    const rows = [];
    for (let i = 0; i < tr.id.length; i++) {
      if (!tr.mean_ms[i]) continue;
      const cfg = knobsOf(tr.config[i]);
      if (!cfg) continue;
      const row = names.map((n, j) => {
        const v = JSON.stringify(cfg[n]);
        if (!values[j].has(v)) values[j].set(v, values[j].size);
        return v;
      });
      row.push(Number(tr.gflops[i].toFixed(3)));
      rows.push(row);
    }
    const axes = names.map((n, j) => ({ dim: j, name: n, type: 'category', data: [...values[j].keys()] }));
    axes.push({ dim: names.length, name: 'GFLOP/s', type: 'value' });
    const max = rows.reduce((a, r) => Math.max(a, r[names.length]), 0);
    chart(document.getElementById('chart-parallel'), 'parallel', {
      parallelAxis: axes, parallel: { left: 60, right: 90, top: 40, bottom: 30 },
      visualMap: { show: true, dimension: names.length, min: 0, max: max || 1, right: 0, top: 'middle', calculable: true,
        inRange: { color: ['#d0d7de', '#0969da'] } },
      series: [{ type: 'parallel', lineStyle: { width: 1, opacity: 0.45 }, data: rows }],
    });
  },
};

// The knob values of a config as the compiler writes it ({"index": N, "knobs": {...}}).
function knobsOf(text) {
  try {
    const c = JSON.parse(text);
    return c && typeof c.knobs === 'object' ? c.knobs : c;
  } catch (e) { return null; }
}

function compactJson(text) {
  try { return JSON.stringify(JSON.parse(text)); } catch (e) { return text; }
}

views.compare = {
  async render(root, params) {
    const workload = params.get('workload') || '';
    const config = state.config;
    const picker = h('select', { id: 'compare-workload', onchange: e => { location.hash = '#/compare?workload=' + encodeURIComponent(e.target.value); } },
      h('option', { value: '' }, '— pick a workload —'));
    const seen = new Set();
    for (let d = 0; d < config.records.length; d++) {
      const list = await api('workloads', { db: d });
      for (const w of list.workloads) {
        if (seen.has(w.key)) continue;
        seen.add(w.key);
        picker.appendChild(h('option', { value: w.key, selected: w.key === workload }, shortWorkload(w.key)));
      }
    }
    const parts = [h('h1', {}, 'Compare'), h('p', {}, 'The same workload across devices, targets and records databases (',
      config.records.join(', '), ').'), picker];
    if (workload) {
      const c = await api('compare', { workload });
      parts.push(h('p', { class: 'mono' }, c.workload),
        table([['records'], ['implementation'], ['target'], ['device'], ['trials', 'num'], ['ok', 'num'], ['best (ms)', 'num'], ['best GFLOP/s', 'num']],
          c.rows.map(r => h('tr', {}, h('td', { class: 'mono' }, r.records), h('td', { class: 'mono' }, r.template), h('td', { class: 'mono' }, r.target), h('td', {}, r.device),
            numCell(r.trials, r.trials), numCell(r.ok_trials, r.ok_trials), numCell(r.best_ms, fmt.ms(r.best_ms)),
            numCell(r.best_gflops, fmt.num(r.best_gflops, 2)))), { id: 'compare-table' }),
        h('div', { class: 'chart', id: 'chart-compare' }));
      root.replaceChildren(...parts);
      chart(document.getElementById('chart-compare'), 'compare', {
        tooltip: { trigger: 'axis' }, grid: { left: 60, right: 20, top: 30, bottom: 120 },
        xAxis: { type: 'category', data: c.rows.map(r => (config.records.length > 1 ? '[' + r.db + '] ' : '') + r.template + ' ' + r.target.split(' ')[0] + (r.device ? ' @ ' + r.device : '')),
          axisLabel: { rotate: 20 } },
        yAxis: { type: 'value', name: 'best GFLOP/s' },
        series: [{ type: 'bar', data: c.rows.map(r => Number(r.best_gflops.toFixed(3))) }],
      });
    } else {
      root.replaceChildren(...parts);
    }
  },
};

// ---------- routing and live updates ----------
// Showing a view and refreshing it both await the API before they replace #view. Run concurrently,
// a refresh of the previous view that started before a navigation could paint over the new view
// after it (the address says Model, the page shows the Overview). So they take turns.
function exclusive(fn) {
  const run = state.queue.then(fn);
  state.queue = run.catch(() => {});
  return run;
}

function route() { return exclusive(showView); }

async function showView() {
  const hash = location.hash || '#/';
  const [path, query] = hash.slice(1).split('?');
  const params = new URLSearchParams(query || '');
  const segs = path.split('/').filter(Boolean);
  const name = segs[0] || 'overview';
  const view = views[name];
  const root = document.getElementById('view');
  for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.dataset.nav === name || (name === 'model' && a.dataset.nav === 'models'));
  disposeCharts();
  state.route = null;
  delete document.body.dataset.view;  // set again only once the new view is on the page
  if (!view) { root.replaceChildren(h('p', { class: 'status-bad' }, 'No view ' + name)); return; }
  try {
    if (name === 'model' || name === 'task') {
      const id = Number(segs[1]);
      if (!Number.isInteger(id) || id < 0) throw new Error('bad id in the address: ' + segs[1]);
      await view.render(root, id);
    } else {
      await view.render(root, params);
    }
    state.route = view;
    document.body.dataset.view = name;
    showError(null);
    setLive('updated ' + new Date().toLocaleTimeString());
  } catch (err) {
    root.replaceChildren(h('h1', {}, 'Cannot show this view'), h('p', { class: 'status-bad' }, String(err.message || err)));
  }
}

// Every 2 s: ask for the newest trial id (one cheap answer); only when it moved does the current
// view fetch what is new.
async function poll() {
  await exclusive(refreshView);
  state.timer = setTimeout(poll, 2000);
}

async function refreshView() {
  try {
    const r = await api('last', { db: state.db });
    const moved = state.lastId !== null && r.last_id !== state.lastId;
    state.lastId = r.last_id;
    // The overview also shows the farm, which changes without new trials: it refreshes every time.
    const view = state.route;
    if (view && view.poll && (moved || view.pollAlways)) await view.poll(document.getElementById('view'));
    setLive('updated ' + new Date().toLocaleTimeString());
    showError(null);
  } catch (err) {
    showError(err);
  }
}

async function main() {
  try {
    state.config = await api('config');
  } catch (err) {
    showError(err);
    return;
  }
  const select = document.getElementById('db-select');
  state.config.records.forEach((p, i) => select.appendChild(h('option', { value: i }, p)));
  select.addEventListener('change', () => { state.db = Number(select.value); state.lastId = null; route(); });
  window.addEventListener('hashchange', route);
  window.addEventListener('resize', () => Object.values(window.tunefarmCharts).forEach(c => c.resize()));
  await route();
  poll();
}

main();
