// The page's data shaping: answers of the JSON API (docs/dashboard.md) into table rows and chart
// series. Pure functions of their arguments -- no DOM, no fetch, no clock -- so node's test runner
// covers them (test/shape.test.js). Names and GFLOP/s are the API's, shown as sent: nothing here
// parses a workload key or computes a speed.

// The /api/trials columns the Task view keeps.
export const TRIAL_COLUMNS = [
  'id',
  'target',
  'job',
  'config',
  'status',
  'device',
  'threads',
  'time_ms',
  'mean_ms',
  'gflops',
];

// "1 thread", "2 threads": records are per thread count, so the page says which.
export function threadsLabel(n) {
  return n + (n === 1 ? ' thread' : ' threads');
}

// An empty column store for appendTrials.
export function emptyTrials() {
  return Object.fromEntries(TRIAL_COLUMNS.map((c) => [c, []]));
}

// Appends to `store` the trials of one /api/trials answer whose ids are not in `seen` (a poll reads
// again from below its last position: on PostgreSQL a trial can commit after one with a higher id),
// and adds their ids to `seen`. Returns how many were new.
export function appendTrials(store, seen, answer) {
  const columns = answer.trials;
  const fresh = [];
  columns.id.forEach((id, i) => {
    if (seen.has(id)) return;
    seen.add(id);
    fresh.push(i);
  });
  for (const c of TRIAL_COLUMNS) store[c].push(...fresh.map((i) => columns[c][i]));
  return fresh.length;
}

// The best-so-far lines of a task: one per (target, device, thread count, job), that is per tuner
// run on each device and target, in the order they first appear. `targetNames` maps target_id to its name (the
// Task answer's `targets`). Each line has `byTrial` points [trial number within the line, best
// GFLOP/s so far] and `byTime` points [time_ms, best GFLOP/s so far]; failed trials (0 GFLOP/s)
// count as trials but never raise the best.
export function bestSoFarLines(trials, targetNames) {
  const lines = new Map();
  for (let i = 0; i < trials.id.length; i++) {
    const target = targetNames.get(trials.target[i]) ?? 'target ' + trials.target[i];
    const name =
      target +
      (trials.device[i] ? ' @ ' + trials.device[i] : '') +
      ', ' +
      threadsLabel(trials.threads[i]) +
      (trials.job[i] ? ' job #' + trials.job[i] : '');
    let line = lines.get(name);
    if (!line) {
      line = { name, best: 0, byTrial: [], byTime: [] };
      lines.set(name, line);
    }
    line.best = Math.max(line.best, trials.gflops[i] || 0);
    line.byTrial.push([line.byTrial.length + 1, line.best]);
    line.byTime.push([trials.time_ms[i], line.best]);
  }
  return [...lines.values()].map(({ name, byTrial, byTime }) => ({ name, byTrial, byTime }));
}

// Every trial as a point [trial number, GFLOP/s, trial id], grouped by outcome ("ok",
// "compile_error", ...; failures sit at 0 GFLOP/s) in the order the outcomes first appear.
export function trialsByStatus(trials) {
  const groups = new Map();
  for (let i = 0; i < trials.id.length; i++) {
    const status = trials.status[i];
    if (!groups.has(status)) groups.set(status, []);
    groups.get(status).push([i + 1, trials.gflops[i], trials.id[i]]);
  }
  return [...groups.entries()].map(([name, points]) => ({ name, points }));
}

// The knob values of a config as the compiler writes it ({"index": N, "knobs": {...}}) or a bare
// {knob: value}; null when the text is not JSON.
export function knobsOf(text) {
  try {
    const config = JSON.parse(text);
    return config && typeof config.knobs === 'object' ? config.knobs : config;
  } catch {
    return null;
  }
}

// A config's JSON on one line; the text itself when it is not JSON.
export function compactJson(text) {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

// The knob-importance bars, bottom to top (the API ranks the most important first; a horizontal bar
// chart draws its first category at the bottom).
export function importanceBars(knobs) {
  const bottomUp = [...knobs].reverse();
  return { names: bottomUp.map((k) => k.knob), values: bottomUp.map((k) => k.importance) };
}

// Parallel coordinates over the knobs: one category axis per knob (its values as JSON, in the order
// they first appear) and a GFLOP/s axis last; one row per successful trial whose config parses.
// `max` is the best GFLOP/s (for the colour scale; 1 when there is none).
export function parallelCoordinates(trials, knobNames) {
  const values = knobNames.map(() => new Map());
  const rows = [];
  let max = 0;
  for (let i = 0; i < trials.id.length; i++) {
    if (!trials.mean_ms[i]) continue;
    const knobs = knobsOf(trials.config[i]);
    if (!knobs || typeof knobs !== 'object') continue;
    const row = knobNames.map((name, j) => {
      const v = JSON.stringify(knobs[name]) ?? 'null';
      if (!values[j].has(v)) values[j].set(v, values[j].size);
      return v;
    });
    row.push(trials.gflops[i]);
    max = Math.max(max, trials.gflops[i]);
    rows.push(row);
  }
  const axes = knobNames.map((name, j) => ({ dim: j, name, type: 'category', data: [...values[j].keys()] }));
  axes.push({ dim: knobNames.length, name: 'GFLOP/s', type: 'value' });
  return { axes, rows, max: max || 1 };
}

// The newest `count` trials, newest first, as table rows.
export function latestTrials(trials, count) {
  const order = trials.id.map((id, i) => i).sort((a, b) => trials.id[b] - trials.id[a]);
  return order.slice(0, count).map((i) => ({
    id: trials.id[i],
    status: trials.status[i],
    mean_ms: trials.mean_ms[i],
    gflops: trials.gflops[i],
    device: trials.device[i],
    threads: trials.threads[i],
    config: compactJson(trials.config[i]),
  }));
}

// A job (an /api/overview `jobs` entry) as the jobs table shows it: progress as a percentage of the
// budget (0 without one), and whether this page may offer Cancel (a token-holding dashboard with a
// daemon, a daemon's job, not finished).
export function jobRow(job, canCancel) {
  const budget = job.trials_budget || 0;
  return {
    id: job.id,
    model: job.model,
    target: job.target,
    state: job.state,
    percent: budget ? Math.min(100, (100 * job.trials_done) / budget) : 0,
    progress: job.trials_done + ' / ' + (budget || '?'),
    eta_s: job.eta_s,
    message: job.message,
    cancellable: Boolean(canCancel && job.cancellable && (job.state === 'running' || job.state === 'queued')),
  };
}

// How many jobs are running.
export function runningJobs(jobs) {
  return jobs.filter((j) => j.state === 'running').length;
}

// The farm's totals for the overview's cards: servers free and busy, lease requests queued, and
// the measurement rate (null until the dashboard has two samples). null without a farm or when the
// tracker did not answer.
export function farmTotals(farm) {
  if (!farm || farm.error) return null;
  const sum = (field) => farm.keys.reduce((a, k) => a + k[field], 0);
  return { free: sum('free'), busy: sum('busy'), queued: sum('pending'), rate: farm.measurements_per_s };
}

// A model's trials: the sum over its task table.
export function modelTrials(tasks) {
  return tasks.reduce((a, t) => a + t.trials, 0);
}

// A task table row's key as jobs name tasks ("IMPLEMENTATION:KEY"), for the row's data-task.
export function taskKey(task) {
  return task.template + ':' + task.workload;
}

// The end-to-end latency history ([time_ms, latency_ms, trial_id] at each improvement) as line points.
export function latencyPoints(history) {
  return history.map(([time, latency]) => [time, latency]);
}

// The workloads of several /api/workloads answers, each key once (the first database's name), in
// order: the Compare view's picker. A key has one entry per implementation in a database.
export function uniqueWorkloads(answers) {
  const seen = new Map();
  for (const answer of answers) {
    for (const w of answer.workloads) if (!seen.has(w.key)) seen.set(w.key, { key: w.key, name: w.name });
  }
  return [...seen.values()];
}
