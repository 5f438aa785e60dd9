// Opens a report file in the system's headless Chromium with every network request refused, and prints what the
// test asserts on as one JSON line: console errors, page errors, refused requests, every chart's datasets as Chart.js
// holds them (elements laid out with finite coordinates = drawn, marker and dash) and the x axis' tick labels, and each
// section's rendered text; and saves a screenshot of the first screenful (the report file itself is kept beside it).
// Usage: node check-report.mjs REPORT.html SCREENSHOT.png
//        node check-report.mjs --serve   (one browser for many reports: each stdin line "ID<tab>REPORT<tab>SCREENSHOT"
//                                         is answered with a line "ID<tab>JSON"; the browser closes when stdin does)
// The tests use --serve: a Chromium start is ~3.5 CPU-s of a check's ~7 (a full-page screenshot of a long report took
// ~4 more, 2026-11-30), and the report tests open about ten pages.
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const executablePath = process.env.IPCBENCH_CHROMIUM || '/usr/bin/chromium';

function launch() {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

// A context of its own per report: no cache, storage or route shared with another report's check.
async function check(browser, report, screenshot) {
  const result = { consoleErrors: [], pageErrors: [], refused: [], charts: [], canvases: 0, chartsAttribute: null };
  let context;
  try {
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      result.refused.push(url);
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') result.consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => result.pageErrors.push(String(e)));
    await page.goto(pathToFileURL(report).href, { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.dataset.charts !== undefined, null, { timeout: 30000 }).catch(() => {});
    Object.assign(result, await page.evaluate(() => ({
      chartsAttribute: document.body.dataset.charts ?? null,
      canvases: document.querySelectorAll('canvas').length,
      // The text each section shows as rendered (innerText honours CSS), for the tables' marks and notes.
      sections: [...document.querySelectorAll('section[id]')].map((section) => ({ id: section.id, text: section.innerText })),
      charts: Object.values(window.Chart ? Chart.instances : {}).map((c) => ({
        kind: c.canvas.dataset.kind,
        title: c.canvas.getAttribute('aria-label'),
        width: c.width,
        height: c.height,
        // The x axis' tick labels as laid out (after the tick callback), to check they name what was measured.
        xTicks: c.scales.x ? c.scales.x.ticks.map((t) => String(t.label)) : [],
        datasets: c.data.datasets.map((d, i) => {
          const meta = c.getDatasetMeta(i);
          return {
            label: String(d.label),
            points: d.data.length,
            elements: meta.data.length,
            drawn: meta.data.filter((e) => Number.isFinite(e.x) && Number.isFinite(e.y)).length,
            visible: c.isDatasetVisible(i),
            colours: Array.isArray(d.backgroundColor) ? d.backgroundColor.map(String) : [],
            colour: Array.isArray(d.backgroundColor) ? null : String(d.backgroundColor),
            pointStyle: typeof d.pointStyle === 'string' ? d.pointStyle : null,
            dash: Array.isArray(d.borderDash) ? d.borderDash : [],
          };
        }),
      })),
    })));
    await page.screenshot({ path: screenshot });
  } catch (e) {
    result.pageErrors.push('check-report: ' + (e && e.stack ? e.stack : String(e)));
  } finally {
    if (context) await context.close().catch(() => {});
  }
  return result;
}

const browser = await launch();
try {
  if (process.argv[2] === '--serve') {
    const pending = [];
    for await (const line of createInterface({ input: process.stdin })) {
      const [id, report, screenshot] = line.split('\t');
      if (!screenshot) continue;
      pending.push(check(browser, report, screenshot).then((result) => process.stdout.write(`${id}\t${JSON.stringify(result)}\n`)));
    }
    await Promise.all(pending);
  } else {
    const [report, screenshot] = process.argv.slice(2);
    process.stdout.write(JSON.stringify(await check(browser, report, screenshot)) + '\n');
  }
} finally {
  await browser.close();
}
