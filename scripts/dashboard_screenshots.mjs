// node scripts/dashboard_screenshots.mjs URL OUT_DIR VIEW...   (VIEW: overview | model | task | compare)
// Photographs dashboard views in headless Chromium (Debian's, via playwright-core from
// tuner/dashboard/web/node_modules): dashboard-<view>.png. The model is job 1; the task and the
// compare views show the task with the most trials.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [url, out, ...views] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const { launchChromium } = await import(pathToFileURL(path.join(here, '../tuner/dashboard/web/chromium.mjs')).href);

const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const model = await (await fetch(url + '/api/model?job=1')).json();
const busiest = (model.tasks || []).filter(t => t.task_id).sort((a, b) => b.trials - a.trials)[0];
const hashes = {
  overview: '/#/', model: '/#/model/1',
  task: busiest ? '/#/task/' + busiest.task_id : null,
  compare: busiest ? '/#/compare?workload=' + encodeURIComponent(busiest.workload) : null,
};
for (const view of views) {
  if (!hashes[view]) { console.log('no data for the ' + view + ' view yet'); continue; }
  await page.goto(url + hashes[view]);
  await page.waitForFunction((v) => document.body.dataset.view === v, view, { timeout: 30000 });
  // The overview's measurement rate needs two polls of the tracker (2 s apart).
  if (view === 'overview') await page.waitForFunction(() => !document.querySelector('#farm-rate') ||
    !document.querySelector('#farm-rate').textContent.includes('measuring'), null, { timeout: 10000 });
  const file = path.join(out, 'dashboard-' + view + '.png');
  await page.screenshot({ path: file, fullPage: true });
  console.log(file);
}
await browser.close();
