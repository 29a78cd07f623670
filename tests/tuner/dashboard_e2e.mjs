// End-to-end check of the dashboard page in headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core from tuner/dashboard/web/node_modules). Run by tests/tuner/dashboard_test.cc:
//
//   node dashboard_e2e.mjs SPEC.json
//
// SPEC: { url, web_dir, expected: { job, tasks: [{workload, task_id, best_gflops, trials, weight}] },
//         inject: { argv: [...], message }, screenshots: DIR or "" }
// Every check that fails is printed as "FAIL: ..."; the exit code is the number of failures.
// The script reads the page through its DOM and, for charts, the ECharts instance of a chart's
// element (echarts.getInstanceByDom; ECharts is the page's one global script), never the page's
// own variables: the page is ES modules.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { launchChromium } = await import(pathToFileURL(path.join(spec.web_dir, 'chromium.mjs')).href);

let failures = 0;
function check(ok, what) {
  if (ok) console.log('ok: ' + what);
  else { failures++; console.log('FAIL: ' + what); }
}

// The ECharts state of the chart drawn in the element with this id: its instance id, how many points
// each series has, its series names, the [start, end] (percent) of each dataZoom and the legend's
// selection. null when no chart is drawn there.
async function chartState(page, elementId) {
  return page.evaluate((id) => {
    const el = document.getElementById(id);
    const c = el && echarts.getInstanceByDom(el);
    if (!c) return null;
    const o = c.getOption();
    return {
      id: c.id,
      points: o.series.map(s => (s.data || []).length),
      names: o.series.map(s => s.name),
      zoom: (o.dataZoom || []).map(z => [z.start, z.end]),
      selected: o.legend && o.legend[0] ? o.legend[0].selected || {} : {},
    };
  }, elementId);
}

async function chartPoints(page, elementId) {
  const state = await chartState(page, elementId);
  return state && state.points;
}

async function chartAction(page, elementId, action) {
  await page.evaluate(([id, a]) => echarts.getInstanceByDom(document.getElementById(id)).dispatchAction(a),
    [elementId, action]);
}

async function waitForView(page, hash, name) {
  await page.goto(spec.url + hash);
  await page.waitForFunction((v) => document.body.dataset.view === v, name, { timeout: 20000 });
}

// Playwright gives the browser a fresh temporary profile of its own.
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const consoleErrors = [];
  page.on('pageerror', e => consoleErrors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  // Nothing may leave the dashboard's own origin (the page works offline).
  const foreign = [];
  page.on('request', r => { if (!r.url().startsWith(spec.url)) foreign.push(r.url()); });

  // Overview.
  await waitForView(page, '/#/', 'overview');
  const trialsCard = await page.textContent('#overview-trials .v');
  const totalTrials = spec.expected.tasks.reduce((a, t) => a + t.trials, 0);
  check(Number(trialsCard.replace(/,/g, '')) === totalTrials, `overview counts ${totalTrials} trials (shows ${trialsCard})`);
  check(await page.locator(`tr[data-job="${spec.expected.job}"]`).count() === 1, `overview lists job #${spec.expected.job}`);
  if (spec.screenshots) await page.screenshot({ path: path.join(spec.screenshots, 'overview.png'), fullPage: true });

  // Navigating while the overview's 2 s refresh is still waiting for the server must not let that
  // refresh paint the overview over the new view: hold /api/overview back, leave once a refresh has
  // asked for it, and look at the page after the held answer arrived.
  await page.route('**/api/overview*', async r => { await new Promise(done => setTimeout(done, 2500)); await r.continue(); });
  await page.waitForRequest(r => r.url().includes('/api/overview'), { timeout: 10000 });
  const heldAnswer = page.waitForResponse(r => r.url().includes('/api/overview'), { timeout: 10000 });
  await waitForView(page, '/#/model/' + spec.expected.job, 'model');
  await heldAnswer;
  await page.waitForTimeout(300);
  await page.unroute('**/api/overview*');
  const heading = await page.textContent('main h1');
  check(heading.startsWith('Model'), `a refresh of the previous view does not replace the Model view (the page shows "${heading}")`);

  // Model: the task table with the right figures.
  for (const t of spec.expected.tasks) {
    const row = page.locator(`#task-table tr[data-task="${t.task}"]`);
    check(await row.count() === 1, `model table has a row for ${t.task}`);
    if (await row.count() !== 1) continue;
    const cells = await row.locator('td').evaluateAll(tds => tds.map(td => td.dataset.value));
    // ID, Name, FLOP, Weight, Speed, Latency, Weighted Latency, Trials, Done
    const gflops = Number(cells[4]), trials = Number(cells[7]), weight = Number(cells[3]);
    check(Math.abs(gflops - t.best_gflops) <= 1e-6 * Math.max(1, t.best_gflops), `${t.workload}: best GFLOP/s ${gflops} == ${t.best_gflops}`);
    check(trials === t.trials, `${t.workload}: trials ${trials} == ${t.trials}`);
    check(weight === t.weight, `${t.workload}: weight ${weight} == ${t.weight}`);
    const latency = Number(cells[5]);
    check(Math.abs(latency - 1e3 * t.best_ms) <= 1e-6 * latency, `${t.workload}: latency ${latency} us == ${1e3 * t.best_ms}`);
  }
  const latencyPoints = await chartPoints(page, 'chart-latency');
  check(latencyPoints && latencyPoints[0] > 0, `the end-to-end latency chart has points (${latencyPoints})`);
  if (spec.screenshots) await page.screenshot({ path: path.join(spec.screenshots, 'model.png'), fullPage: true });

  // Task: every chart renders with data; a failing trial committed while the page is open appears.
  const task = spec.expected.tasks[0];
  await waitForView(page, '/#/task/' + task.task_id, 'task');
  for (const id of ['chart-best-trials', 'chart-best-time', 'chart-scatter', 'chart-importance', 'chart-parallel']) {
    const points = await chartPoints(page, id);
    check(points && points.length > 0 && points.every(n => n > 0), `task chart #${id} has data (${JSON.stringify(points)})`);
  }
  const canvases = await page.locator('.chart canvas').count();
  check(canvases >= 5, `the task view drew ${canvases} chart canvases`);
  if (spec.screenshots) await page.screenshot({ path: path.join(spec.screenshots, 'task.png'), fullPage: true });

  // A user zooms into the best-so-far chart and hides the successful trials of the scatter; the poll
  // that brings the next trial must keep both, drawing the new data into the same chart.
  const zoomed = await page.$('#chart-best-trials');
  await chartAction(page, 'chart-best-trials', { type: 'dataZoom', dataZoomIndex: 0, start: 20, end: 60 });
  await chartAction(page, 'chart-scatter', { type: 'legendUnSelect', name: 'ok' });
  const bestBefore = await chartState(page, 'chart-best-trials');
  check(bestBefore.zoom.length > 0 && bestBefore.zoom.every(([a, b]) => a === 20 && b === 60),
    `the best-so-far chart zooms to 20%..60% (${JSON.stringify(bestBefore.zoom)})`);
  const newestRows = () => page.locator('#latest-trials tbody tr').evaluateAll(trs => trs.map(tr => Number(tr.dataset.trial)));
  const rowsBefore = await newestRows();

  const before = Number((await page.textContent('#task-trials .v')).replace(/,/g, ''));
  const started = Date.now();
  execFileSync(spec.inject.argv[0], spec.inject.argv.slice(1), { stdio: 'pipe' });
  let seen = false;
  try {
    await page.waitForFunction((m) => {
      const t = document.getElementById('error-table');
      return t && t.textContent.includes(m);
    }, spec.inject.message, { timeout: 5000, polling: 100 });
    seen = true;
  } catch (e) { /* timed out */ }
  const elapsed = (Date.now() - started) / 1000;
  check(seen, `the injected failing trial's message is in the error breakdown ${elapsed.toFixed(2)} s after its commit (bar: 5 s)`);
  const after = Number((await page.textContent('#task-trials .v')).replace(/,/g, ''));
  check(after === before + 1, `the task's trial count went from ${before} to ${after}`);
  const scatter = await chartState(page, 'chart-scatter');
  check(scatter.names.includes('runtime_error'), `the trial scatter has a runtime_error series (${scatter.names})`);
  check(scatter.selected.ok === false, `the scatter's legend still hides "ok" (${JSON.stringify(scatter.selected)})`);
  console.log('live_update_seconds ' + elapsed.toFixed(3));

  const rowsAfter = await newestRows();
  check(rowsAfter.length === rowsBefore.length + 1 && rowsAfter[0] > Math.max(...rowsBefore) &&
    rowsAfter.slice(1).join() === rowsBefore.join(),
  `the newest-trials table grew by the new trial on top (${rowsBefore.length} rows, newest #${rowsBefore[0]}; ` +
    `then ${rowsAfter.length}, newest #${rowsAfter[0]})`);
  const bestAfter = await chartState(page, 'chart-best-trials');
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  check(sum(bestAfter.points) === sum(bestBefore.points) + 1,
    `the best-so-far chart drew the new trial (${sum(bestBefore.points)} -> ${sum(bestAfter.points)} points)`);
  check(JSON.stringify(bestAfter.zoom) === JSON.stringify(bestBefore.zoom),
    `the zoom survived the poll (${JSON.stringify(bestBefore.zoom)} -> ${JSON.stringify(bestAfter.zoom)})`);
  check(bestAfter.id === bestBefore.id, `the same chart instance drew it (${bestBefore.id} -> ${bestAfter.id})`);
  check(await zoomed.evaluate(el => el.isConnected && el === document.getElementById('chart-best-trials')),
    'the chart\'s element is the same node, not rebuilt');

  // Overview again: the recent errors list the injected message.
  await waitForView(page, '/#/', 'overview');
  check((await page.textContent('main')).includes(spec.inject.message), 'the overview lists the injected error');

  // Compare.
  await waitForView(page, '/#/compare?workload=' + encodeURIComponent(task.workload), 'compare');
  check(await page.locator('#compare-table tbody tr').count() >= 1, 'the compare table has rows');
  const comparePoints = await chartPoints(page, 'chart-compare');
  check(comparePoints && comparePoints[0] > 0, `the compare chart has bars (${comparePoints})`);
  if (spec.screenshots) await page.screenshot({ path: path.join(spec.screenshots, 'compare.png'), fullPage: true });

  check(consoleErrors.length === 0, `no script errors on the page (${consoleErrors.join(' | ')})`);
  check(foreign.length === 0, `no request left the dashboard (${foreign.join(', ')})`);
} catch (e) {
  failures++;
  console.log('FAIL: ' + (e.stack || e));
} finally {
  await browser.close();
}
process.exit(failures);
