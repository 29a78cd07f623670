// The data shaping of the dashboard's page over answers shaped as the API sends them
// (docs/dashboard.md; tests/tuner/dashboard_test.cc checks the API itself).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  appendTrials,
  bestSoFarLines,
  compactJson,
  emptyTrials,
  farmTotals,
  importanceBars,
  jobRow,
  knobsOf,
  latencyPoints,
  latestTrials,
  modelTrials,
  parallelCoordinates,
  runningJobs,
  taskKey,
  trialsByStatus,
  uniqueWorkloads,
} from '../js/shape.js';

const T0 = Date.UTC(2026, 10, 23, 14, 58, 0);
const config = (index, tile, unroll) => JSON.stringify({ index, knobs: { tile, unroll } });

// An /api/trials answer: columns, as TrialsView writes them.
function trialsAnswer(rows, { after = 0, more = false } = {}) {
  const columns = [
    'id',
    'workload',
    'target',
    'job',
    'config_index',
    'config',
    'status',
    'device',
    'time_ms',
    'mean_ms',
    'gflops',
    'build_ms',
    'threads',
  ];
  const trials = Object.fromEntries(columns.map((c) => [c, rows.map((r) => r[c])]));
  const lastId = rows.length ? rows[rows.length - 1].id : after;
  return { after, last_id: lastId, more, count: rows.length, trials };
}

function trial(
  id,
  { target = 1, job = 1, status = 'ok', device = 'x86-test', gflops = 0, ms = null, tile = 1, threads = 1 } = {},
) {
  return {
    id,
    workload: 3,
    target,
    job,
    config_index: id,
    config: config(id, tile, id % 2),
    status,
    device,
    time_ms: T0 + 1000 * id,
    mean_ms: ms,
    gflops,
    build_ms: 40,
    threads,
  };
}

// Six trials of one task: two tuner runs (jobs 1 and 2) on one device, a compile error in job 1.
const SIX = [
  trial(1, { gflops: 10, ms: 0.5, tile: 1 }),
  trial(2, { gflops: 30, ms: 0.2, tile: 4 }),
  trial(3, { status: 'compile_error', tile: 16 }),
  trial(4, { gflops: 20, ms: 0.3, tile: 2 }),
  trial(5, { job: 2, gflops: 5, ms: 1.0, tile: 1 }),
  trial(6, { job: 2, gflops: 40, ms: 0.15, tile: 8 }),
];

function storeOf(rows) {
  const store = emptyTrials();
  appendTrials(store, new Set(), trialsAnswer(rows));
  return store;
}

describe('appendTrials', () => {
  it('keeps each trial once across overlapping reads (the late-commit window)', () => {
    const store = emptyTrials();
    const seen = new Set();
    assert.equal(appendTrials(store, seen, trialsAnswer(SIX.slice(0, 4))), 4);
    // The next poll reads again from below its position: trials 3 and 4 come back, 5 and 6 are new.
    assert.equal(appendTrials(store, seen, trialsAnswer(SIX.slice(2), { after: 2 })), 2);
    assert.deepEqual(store.id, [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(store.gflops, [10, 30, 0, 20, 5, 40]);
    assert.deepEqual(store.status, ['ok', 'ok', 'compile_error', 'ok', 'ok', 'ok']);
    assert.equal(store.mean_ms[2], null);
    assert.equal(appendTrials(store, seen, trialsAnswer([])), 0);
  });

  it('appends a trial that commits late with a lower id', () => {
    const store = emptyTrials();
    const seen = new Set();
    appendTrials(store, seen, trialsAnswer([SIX[0], SIX[2]]));
    assert.equal(appendTrials(store, seen, trialsAnswer([SIX[1], SIX[2], SIX[3]])), 2);
    assert.deepEqual(store.id, [1, 3, 2, 4]);
  });
});

describe('bestSoFarLines', () => {
  const targets = new Map([[1, 'llvm -mcpu=znver4']]);

  it('draws another line for another thread count (records are per thread count)', () => {
    const lines = bestSoFarLines(storeOf([trial(1, { gflops: 10 }), trial(2, { gflops: 20, threads: 2 })]), targets);
    assert.deepEqual(
      lines.map((l) => l.name),
      ['llvm -mcpu=znver4 @ x86-test, 1 thread job #1', 'llvm -mcpu=znver4 @ x86-test, 2 threads job #1'],
    );
  });

  it('draws one line per target, device and job, never falling', () => {
    const lines = bestSoFarLines(storeOf(SIX), targets);
    assert.deepEqual(
      lines.map((l) => l.name),
      ['llvm -mcpu=znver4 @ x86-test, 1 thread job #1', 'llvm -mcpu=znver4 @ x86-test, 1 thread job #2'],
    );
    // The compile error counts as a trial and keeps the best.
    assert.deepEqual(lines[0].byTrial, [
      [1, 10],
      [2, 30],
      [3, 30],
      [4, 30],
    ]);
    assert.deepEqual(lines[1].byTrial, [
      [1, 5],
      [2, 40],
    ]);
    assert.deepEqual(
      lines[0].byTime.map(([t]) => t),
      [1, 2, 3, 4].map((id) => T0 + 1000 * id),
    );
  });

  it('names a target it was not told about by its id, and leaves out an empty device and job 0', () => {
    const lines = bestSoFarLines(storeOf([trial(1, { target: 9, job: 0, device: '', gflops: 1, ms: 1 })]), targets);
    assert.equal(lines[0].name, 'target 9, 1 thread');
  });
});

describe('trialsByStatus', () => {
  it('groups every trial by outcome as [trial number, GFLOP/s, id]', () => {
    const groups = trialsByStatus(storeOf(SIX));
    assert.deepEqual(
      groups.map((g) => g.name),
      ['ok', 'compile_error'],
    );
    assert.deepEqual(groups[1].points, [[3, 0, 3]]);
    assert.equal(groups[0].points.length, 5);
    assert.deepEqual(groups[0].points[4], [6, 40, 6]);
  });
});

describe('configs', () => {
  it('reads the knobs of a compiler config and of a bare one', () => {
    assert.deepEqual(knobsOf('{"index":7,"knobs":{"tile":4}}'), { tile: 4 });
    assert.deepEqual(knobsOf('{"tile_k":8}'), { tile_k: 8 });
    assert.equal(knobsOf('not json'), null);
  });

  it('writes JSON on one line and leaves other text alone', () => {
    assert.equal(compactJson('{ "index": 1,\n "knobs": {"a": [1, 2]} }'), '{"index":1,"knobs":{"a":[1,2]}}');
    assert.equal(compactJson('<b>x</b>'), '<b>x</b>');
  });
});

describe('importanceBars', () => {
  it('puts the most important knob on top (last)', () => {
    const knobs = [
      { knob: 'tile', importance: 0.9, values: 4 },
      { knob: 'unroll', importance: 0.1, values: 2 },
    ];
    assert.deepEqual(importanceBars(knobs), { names: ['unroll', 'tile'], values: [0.1, 0.9] });
    assert.equal(knobs[0].knob, 'tile', 'the API answer is left as it is');
  });
});

describe('parallelCoordinates', () => {
  it('has a category axis per knob and a row per successful trial', () => {
    const pc = parallelCoordinates(storeOf(SIX), ['tile', 'unroll']);
    assert.deepEqual(
      pc.axes.map((a) => [a.name, a.type]),
      [
        ['tile', 'category'],
        ['unroll', 'category'],
        ['GFLOP/s', 'value'],
      ],
    );
    assert.deepEqual(pc.axes[0].data, ['1', '4', '2', '8']); // tile 16 only failed
    assert.equal(pc.rows.length, 5);
    assert.deepEqual(pc.rows[1], ['4', '0', 30]);
    assert.equal(pc.max, 40);
  });

  it('skips configs that do not parse and scales to 1 without successes', () => {
    const bad = { ...trial(1, { gflops: 3, ms: 1 }), config: '{broken' };
    const pc = parallelCoordinates(storeOf([bad, trial(2, { status: 'timeout' })]), ['tile']);
    assert.equal(pc.rows.length, 0);
    assert.equal(pc.max, 1);
  });

  it('shows a knob a config lacks as null', () => {
    const pc = parallelCoordinates(storeOf([trial(1, { gflops: 3, ms: 1 })]), ['tile', 'vector']);
    assert.deepEqual(pc.rows[0], ['1', 'null', 3]);
  });
});

describe('latestTrials', () => {
  it('lists the newest first, at most count', () => {
    const store = storeOf(SIX);
    const rows = latestTrials(store, 3);
    assert.deepEqual(
      rows.map((r) => r.id),
      [6, 5, 4],
    );
    assert.deepEqual(rows[0], {
      id: 6,
      status: 'ok',
      mean_ms: 0.15,
      gflops: 40,
      device: 'x86-test',
      threads: 1,
      config: '{"index":6,"knobs":{"tile":8,"unroll":0}}',
    });
    assert.equal(latestTrials(store, 50).length, 6);
  });

  it('orders by id, not by arrival', () => {
    const store = emptyTrials();
    const seen = new Set();
    appendTrials(store, seen, trialsAnswer([SIX[0], SIX[2]]));
    appendTrials(store, seen, trialsAnswer([SIX[1]]));
    assert.deepEqual(
      latestTrials(store, 10).map((r) => r.id),
      [3, 2, 1],
    );
  });
});

// An /api/overview `jobs` entry, as JobJson writes it.
const JOB = {
  id: 4,
  model: 'resnet-18.onnx',
  target: 'native',
  tuner: 'xgb',
  state: 'running',
  trials_done: 150,
  trials_budget: 400,
  eta_s: 95.5,
  message: 'task 3/12',
  runner: 'farm-daemon',
  cancellable: true,
  created_at: '2026-11-23T14:58:00.123Z',
  updated_at: '2026-11-23T15:01:00.000Z',
};

describe('jobRow', () => {
  it('shows progress against the budget and offers Cancel only where it can work', () => {
    const row = jobRow(JOB, true);
    assert.equal(row.percent, 37.5);
    assert.equal(row.progress, '150 / 400');
    assert.equal(row.cancellable, true);
    assert.equal(jobRow(JOB, false).cancellable, false, 'a read-only dashboard');
    assert.equal(jobRow({ ...JOB, cancellable: false }, true).cancellable, false, 'a tunefarm tune run');
    assert.equal(jobRow({ ...JOB, state: 'done' }, true).cancellable, false);
    assert.equal(jobRow({ ...JOB, state: 'queued' }, true).cancellable, true);
  });

  it('caps the bar at 100% and has none without a budget', () => {
    assert.equal(jobRow({ ...JOB, trials_done: 500 }, true).percent, 100);
    const unknown = jobRow({ ...JOB, trials_budget: 0 }, true);
    assert.equal(unknown.percent, 0);
    assert.equal(unknown.progress, '150 / ?');
  });

  it('counts the running jobs', () => {
    assert.equal(runningJobs([JOB, { ...JOB, state: 'done' }, { ...JOB, id: 5 }]), 2);
  });
});

describe('farmTotals', () => {
  it('sums the keys of the tracker status', () => {
    const farm = {
      address: '127.0.0.1:9190',
      uptime_s: 12.5,
      servers: [],
      keys: [
        { key: 'cpu', free: 2, busy: 1, pending: 0 },
        { key: 'rasp4b', free: 0, busy: 3, pending: 5 },
      ],
      measurements_total: 40,
      measurements_per_s: null,
      leases_granted: 7,
      leases_expired: 0,
      servers_lost: 0,
    };
    assert.deepEqual(farmTotals(farm), { free: 2, busy: 4, queued: 5, rate: null });
    assert.equal(farmTotals({ ...farm, measurements_per_s: 3.25 }).rate, 3.25);
  });

  it('has none without a tracker or when it did not answer', () => {
    assert.equal(farmTotals(null), null);
    assert.equal(farmTotals({ address: '127.0.0.1:9190', error: 'tracker 127.0.0.1:9190: unavailable' }), null);
  });
});

describe('the model view', () => {
  // Two /api/model `tasks` rows, as ModelView writes them.
  const tasks = [
    {
      task: 0,
      task_id: 1,
      workload: 'conv2d|N1_C16_H14_W14|K32_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32',
      template: 'conv2d_nchw',
      name: 'conv2d_nchw conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1',
      flops: 1806336,
      weight: 2,
      best_gflops: 14.45,
      latency_us: 125,
      weighted_latency_us: 250,
      trials: 9,
      ok_trials: 8,
      done: false,
      alternative_of: null,
    },
    {
      task: 1,
      task_id: 2,
      workload: 'dense|N1_I32|O10|NC|float32',
      template: 'dense',
      name: 'dense dense N1_I32 O10',
      flops: 640,
      weight: 1,
      best_gflops: 0.43,
      latency_us: 1.5,
      weighted_latency_us: 1.5,
      trials: 2,
      ok_trials: 2,
      done: false,
      alternative_of: null,
    },
  ];

  it('sums the trials and names tasks as jobs do', () => {
    assert.equal(modelTrials(tasks), 11);
    assert.equal(taskKey(tasks[1]), 'dense:dense|N1_I32|O10|NC|float32');
  });

  it('plots the latency history as [time, latency]', () => {
    assert.deepEqual(
      latencyPoints([
        [T0, 0.5, 12],
        [T0 + 5000, 0.25, 19],
      ]),
      [
        [T0, 0.5],
        [T0 + 5000, 0.25],
      ],
    );
  });
});

describe('uniqueWorkloads', () => {
  it('lists each key once across implementations and databases', () => {
    const db0 = {
      workloads: [
        { id: 1, key: 'dense|N1_I32|O10|NC|float32', name: 'dense N1_I32 O10', template: 'dense', flops: 640 },
        { id: 2, key: 'dense|N1_I32|O10|NC|float32', name: 'dense N1_I32 O10', template: 'dense_pack', flops: 640 },
      ],
    };
    const db1 = {
      workloads: [
        {
          id: 7,
          key: 'conv2d|N1_C3_H8_W8|K4_R1x1_S1x1_P0_0_0_0_D1x1_G1|NCHW|int8',
          name: 'conv2d int8',
          template: 'x',
        },
        { id: 8, key: 'dense|N1_I32|O10|NC|float32', name: 'dense N1_I32 O10', template: 'dense', flops: 640 },
      ],
    };
    assert.deepEqual(uniqueWorkloads([db0, db1]), [
      { key: 'dense|N1_I32|O10|NC|float32', name: 'dense N1_I32 O10' },
      { key: 'conv2d|N1_C3_H8_W8|K4_R1x1_S1x1_P0_0_0_0_D1x1_G1|NCHW|int8', name: 'conv2d int8' },
    ]);
  });
});
