// node bench/dashboard/page_load.mjs URL TASK_ID JOB_ID
// Times the dashboard page in headless Chromium (Debian's /usr/bin/chromium via playwright-core from
// tuner/dashboard/web/node_modules): from navigation until the view has fetched its data and drawn
// its tables and charts (the page sets body[data-view]). 5 loads of each view, best and median.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [url, taskId, jobId] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const { launchChromium } = await import(pathToFileURL(path.join(here, '../../tuner/dashboard/web/chromium.mjs')).href);

const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
async function time(hash, view) {
  const ms = [];
  for (let i = 0; i < 5; i++) {
    await page.goto('about:blank');
    const start = Date.now();
    await page.goto(url + hash);
    await page.waitForFunction((v) => document.body.dataset.view === v, view, { timeout: 30000 });
    ms.push(Date.now() - start);
  }
  ms.sort((a, b) => a - b);
  console.log(`${view.padEnd(9)} page load best ${ms[0]} ms  median ${ms[2]} ms  (${hash})`);
}
await time('/#/', 'overview');
await time('/#/task/' + taskId, 'task');
await time('/#/model/' + jobId, 'model');
await browser.close();
