// Overview (#/): trials, jobs with progress and Cancel, the models, the farm and the newest failed
// trials. It polls every time: the farm changes without new trials.
import * as api from '../api.js';
import { card, h, numCell, setText, showError, Table } from '../dom.js';
import * as fmt from '../format.js';
import { farmTotals, jobRow, runningJobs } from '../shape.js';
import { modelsTable } from './models.js';

async function cancel(ctx, id) {
  const token = window.prompt('Farm token to cancel job #' + id + ':');
  if (!token) return;
  try {
    await api.cancelJob(id, token);
    ctx.reload();
  } catch (err) {
    showError(err);
  }
}

function jobsTable(ctx) {
  return new Table({
    columns: [['job'], ['model'], ['target'], ['state'], ['progress'], ['ETA', 'num'], ['message'], ['']],
    rowKey: (j) => j.id,
    rowAttrs: (j) => ({ 'data-job': j.id }),
    cells: (j) => [
      h('td', {}, h('a', { href: '#/model/' + j.id }, '#' + j.id)),
      h('td', {}, j.model),
      h('td', { class: 'mono' }, j.target),
      h('td', { class: 'state-' + j.state }, j.state),
      h('td', {}, h('span', { class: 'bar' }, h('span', { style: 'width:' + j.percent + '%' })), ' ' + j.progress),
      numCell(j.eta_s, fmt.duration(j.eta_s)),
      h('td', { class: 'msg' }, j.message),
      // A `tunefarm tune` run stops with its terminal's Ctrl-C; the daemon cancels only its own jobs.
      h('td', {}, j.cancellable ? h('button', { class: 'danger', onclick: () => cancel(ctx, j.id) }, 'Cancel') : null),
    ],
    empty: 'No daemon jobs in this database (tuner-daemon writes them; `tunefarm tune` trials are under Models).',
  });
}

function errorsTable() {
  return new Table({
    columns: [['trial', 'num'], ['task'], ['outcome'], ['device'], ['message'], ['when']],
    rowKey: (e) => e.id,
    cells: (e) => [
      numCell(e.id, e.id),
      h('td', { class: 'mono' }, e.task_name),
      h('td', { class: 'status-bad' }, e.status),
      h('td', {}, e.device),
      h('td', { class: 'msg' }, e.message),
      h('td', {}, e.created_at),
    ],
    empty: 'No failed trials.',
  });
}

// The farm: the tracker's keys and servers, or why there is none.
class FarmSection {
  constructor() {
    this.note = h('p', { class: 'muted' });
    this.keys = new Table({
      columns: [['key'], ['free', 'num'], ['busy', 'num'], ['queued', 'num']],
      rowKey: (k) => k.key,
      cells: (k) => [
        h('td', {}, k.key),
        numCell(k.free, k.free),
        numCell(k.busy, k.busy),
        numCell(k.pending, k.pending),
      ],
    });
    this.servers = new Table({
      columns: [['server'], ['key'], ['address'], ['state'], ['device'], ['measured', 'num'], ['heartbeat', 'num']],
      rowKey: (s) => s.server_id,
      cells: (s) => [
        h('td', {}, s.server_id),
        h('td', {}, s.key),
        h('td', { class: 'mono' }, s.address),
        h('td', { class: s.state === 'busy' ? 'state-running' : '' }, s.state),
        h('td', {}, s.device),
        numCell(s.measurements_done, fmt.int(s.measurements_done)),
        numCell(s.last_heartbeat_ms_ago, s.last_heartbeat_ms_ago + ' ms ago'),
      ],
    });
    this.el = h('div', { id: 'farm' }, this.note, this.keys.el, this.servers.el);
  }

  update(farm) {
    const ok = Boolean(farm && !farm.error);
    this.note.className = farm && farm.error ? 'status-bad' : 'muted';
    if (!farm) setText(this.note, 'No tracker: start the dashboard with --tracker HOST:PORT to see the farm.');
    else if (farm.error) setText(this.note, farm.error);
    else {
      setText(
        this.note,
        `Tracker ${farm.address}, up ${fmt.duration(farm.uptime_s)}; leases granted ${farm.leases_granted}, ` +
          `expired ${farm.leases_expired}; servers lost ${farm.servers_lost}.`,
      );
    }
    this.keys.el.hidden = !ok;
    this.servers.el.hidden = !ok;
    this.keys.update(ok ? farm.keys : []);
    this.servers.update(ok ? farm.servers : []);
  }
}

export function overviewView(ctx) {
  let parts = null;
  const load = async () => {
    const overview = await api.get('overview', { db: ctx.db });
    const models = await api.get('models', { db: ctx.db });
    return { overview, models };
  };

  function build(root) {
    const cards = {
      trials: card('trials', 'overview-trials'),
      running: card('jobs running'),
      records: card('records'),
      servers: card('servers free / busy'),
      queued: card('lease requests queued'),
      rate: card('measurements/s', 'farm-rate'),
    };
    parts = { cards, jobs: jobsTable(ctx), models: modelsTable(), farm: new FarmSection(), errors: errorsTable() };
    root.replaceChildren(
      h('h1', {}, 'Overview'),
      h(
        'div',
        { class: 'cards' },
        Object.values(cards).map((c) => c.el),
      ),
      h('h2', {}, 'Jobs'),
      parts.jobs.el,
      h('h2', {}, 'Models'),
      parts.models.el,
      h('h2', {}, 'Farm'),
      parts.farm.el,
      h('h2', {}, 'Recent errors'),
      parts.errors.el,
    );
  }

  function show({ overview, models }) {
    const { cards } = parts;
    const canCancel = Boolean(ctx.config && ctx.config.can_cancel);
    setText(cards.trials.value, fmt.int(overview.trials));
    setText(cards.running.value, runningJobs(overview.jobs));
    setText(cards.records.value, overview.path);
    const farm = farmTotals(overview.farm);
    for (const c of [cards.servers, cards.queued, cards.rate]) c.el.hidden = !farm;
    if (farm) {
      setText(cards.servers.value, farm.free + ' / ' + farm.busy);
      setText(cards.queued.value, farm.queued);
      setText(cards.rate.value, farm.rate === null ? 'measuring…' : fmt.num(farm.rate, 1));
    }
    parts.jobs.update(overview.jobs.map((j) => jobRow(j, canCancel)));
    parts.models.update(models.models);
    parts.farm.update(overview.farm);
    parts.errors.update(overview.recent_errors);
  }

  return {
    pollAlways: true,
    async mount(root) {
      const data = await load();
      build(root);
      show(data);
    },
    async poll() {
      show(await load());
    },
  };
}
