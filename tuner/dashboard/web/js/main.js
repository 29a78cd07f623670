// The tunefarm dashboard page: views over the JSON API (docs/dashboard.md), charts by ECharts
// (embedded; nothing is fetched from elsewhere). Loads the configuration, then shows the view the
// address names and refreshes it every 2 s.
import * as api from './api.js';
import { h, showError } from './dom.js';
import { Router } from './router.js';
import { compareView } from './views/compare.js';
import { modelView } from './views/model.js';
import { modelsView } from './views/models.js';
import { overviewView } from './views/overview.js';
import { taskView } from './views/task.js';

const POLL_MS = 2000;

const VIEWS = {
  overview: overviewView,
  models: modelsView,
  model: modelView,
  task: taskView,
  compare: compareView,
};

async function main() {
  // What views share: the records database shown (its position in --records), the dashboard's
  // configuration, and a way to show the current view afresh.
  const ctx = { db: 0, config: null, reload: () => router.route() };
  try {
    ctx.config = await api.get('config');
  } catch (err) {
    showError(err);
    return;
  }
  const router = new Router({ root: document.getElementById('view'), views: VIEWS, ctx });
  const select = document.getElementById('db-select');
  ctx.config.records.forEach((path, i) => select.appendChild(h('option', { value: i }, path)));
  select.addEventListener('change', () => {
    ctx.db = Number(select.value);
    router.route();
  });
  window.addEventListener('hashchange', () => router.route());
  window.addEventListener('resize', () => router.resize());
  await router.route();
  const poll = async () => {
    await router.refresh();
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
}

main();
