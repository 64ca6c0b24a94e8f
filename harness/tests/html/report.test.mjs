// The HTML report in a real headless browser (Debian's chromium through playwright-core):
// the counts it shows match the JSON report of the same run, a filter changes the visible rows,
// a non-pass verdict (a failure when the run has one) expands to its evidence, and the page
// loads nothing from anywhere.
//
//   REPORT_HTML=reports/reference.html REPORT_JSON=reports/reference.json \
//     node --test harness/tests/html/report.test.mjs
//
// CHROMIUM overrides the browser (default /usr/bin/chromium); SCREENSHOT=FILE.png saves the
// page after the filter was applied and the evidence expanded.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { openPage } from './browser.mjs';

const htmlPath = resolve(process.env.REPORT_HTML ?? 'reports/reference.html');
const jsonPath = resolve(process.env.REPORT_JSON ?? 'reports/reference.json');
const report = JSON.parse(readFileSync(jsonPath, 'utf8'));
const VERDICTS = ['pass', 'fail', 'warn', 'info', 'inconclusive', 'skip', 'error'];

let browser;
let page;
let outside;

before(async () => {
  ({ browser, page, outside } = await openPage(htmlPath));
});

after(async () => {
  await browser?.close();
});

const rows = () => page.locator('#verdicts tbody tr.check');
const visibleRows = () => page.locator('#verdicts tbody tr.check:visible');
const shown = async () => Number(await page.getByTestId('shown').textContent());

test('the page is self-contained: no request leaves it, no external resource', async () => {
  assert.deepEqual(outside, []);
  assert.equal(await page.locator('link[href], script[src], img[src], iframe').count(), 0);
});

test('the counts shown are the run counts of the JSON report', async () => {
  const c = report.counts;
  for (const v of [...VERDICTS, 'baselined']) {
    const text = await page.locator(`[data-count="${v}"]`).textContent();
    assert.equal(Number(text), c[v], `count of ${v}`);
  }
  // Every row is counted once: a scenario premise that held is a row, counted apart from passes.
  const total = VERDICTS.reduce((n, v) => n + c[v], c.baselined + (c.premises ?? 0));
  assert.equal(await rows().count(), total, 'one row per check');
  assert.equal(await shown(), total);
  assert.equal(Number(await page.getByTestId('total').textContent()), total);
  const verdict = await page.getByTestId('run-verdict').textContent();
  const expected = { 0: 'NO FAILURE', 1: 'NOT CONFORMANT' }[report.exit_code] ?? 'INCOMPLETE';
  assert.ok(verdict.includes(expected), `${verdict} (exit code ${report.exit_code})`);
  // The level shown is the JSON report's, which the matrix computes the same way.
  const level = await page.getByTestId('level').textContent();
  assert.ok(
    level.includes(`generic level: ${report.level.generic.level}`) &&
      level.includes(`Pallas level: ${report.level.pallas.level}`),
    `${level} vs ${JSON.stringify(report.level.generic.level)}`,
  );
  console.log(`counts shown: ${VERDICTS.map((v) => `${v} ${c[v]}`).join(', ')}, expected failures ${c.baselined}; ${total} rows`);
});

test('a verdict filter and a level filter change the visible rows', async () => {
  const total = await rows().count();
  const passes = await page.locator('#verdicts tbody tr.check[data-verdict="pass"]').count();
  assert.ok(passes > 0 && passes < total, `passes ${passes} of ${total}`);
  await page.locator('input[data-filter="verdict"][value="pass"]').uncheck();
  assert.equal(await visibleRows().count(), total - passes);
  assert.equal(await shown(), total - passes);
  assert.equal(await page.locator('#verdicts tbody tr.check[data-verdict="pass"]:visible').count(), 0);
  console.log(`verdict filter: without pass, ${total - passes} of ${total} rows visible`);

  const must = await page.locator('#verdicts tbody tr.check[data-level="MUST"]:not([data-verdict="pass"])').count();
  await page.locator('input[data-filter="level"][value="MUST"]').uncheck();
  assert.equal(await visibleRows().count(), total - passes - must);
  await page.locator('input[data-filter="level"][value="MUST"]').check();

  const family = await page.locator('input[data-filter="family"]').first().getAttribute('value');
  const inFamily = await page.locator(`#verdicts tbody tr.check[data-family="${family}"]:not([data-verdict="pass"])`).count();
  await page.locator(`input[data-filter="family"][value="${family}"]`).uncheck();
  assert.equal(await visibleRows().count(), total - passes - inFamily);
  await page.locator(`input[data-filter="family"][value="${family}"]`).check();
  assert.equal(await visibleRows().count(), total - passes);
});

test("a failure's evidence expands with its rule, values and reproduce command", async () => {
  const fails = page.locator('#verdicts tbody tr.check[data-verdict="fail"]');
  const nonPass = page.locator('#verdicts tbody tr.check:not([data-verdict="pass"])');
  const row = (await fails.count()) > 0 ? fails.first() : nonPass.first();
  const what = `${await row.getAttribute('data-check')} (${await row.getAttribute('data-verdict')}) in ${await row.getAttribute('data-scenario')}`;
  const reproduce = row.locator('pre.reproduce');
  assert.equal(await reproduce.isVisible(), false, 'evidence starts folded');
  await row.locator('details > summary').click();
  assert.ok(await reproduce.isVisible(), 'evidence unfolds');
  assert.match(await reproduce.textContent(), /^cargo run -p pallas-conformance -- run \S+ --target \S+$/);
  if ((await row.getAttribute('data-check')) !== 'HARNESS' && (await row.getAttribute('data-check')) !== 'ASSERT') {
    assert.ok(await row.locator('blockquote.quote').isVisible(), 'the rule is quoted');
  }
  if ((await fails.count()) > 0) {
    assert.ok((await row.locator('dl.ev dd').count()) > 0, 'expected and seen values');
  }
  console.log(`expanded the evidence of ${what}`);
  if (process.env.SCREENSHOT) {
    await page.screenshot({ path: process.env.SCREENSHOT, fullPage: false });
  }
});

test('a pass unfolds to what it observed, as the JSON report records it', async () => {
  const passes = page.locator('#verdicts tbody tr.check[data-verdict="pass"]');
  if ((await passes.count()) === 0) {
    console.log('no pass in this report');
    return;
  }
  // Earlier tests leave filters unchecked: every row shown again.
  for (const box of await page.locator('input[data-filter]').all()) {
    await box.check();
  }
  const row = passes.first();
  const [sid, cid] = [await row.getAttribute('data-scenario'), await row.getAttribute('data-check')];
  const scenario = report.scenarios.find((s) => s.id === sid);
  const check = scenario.checks.find((c) => c.verdict === 'pass' && c.id === cid);
  assert.ok(check.observed?.length > 0, `the JSON pass ${check.id} has its witness`);
  const observed = row.locator('details.observed');
  const first = observed.locator('li').first();
  assert.equal(await first.isVisible(), false, 'the witness starts folded');
  await observed.locator('summary').click();
  assert.ok(await first.isVisible(), 'the witness unfolds');
  assert.ok((await first.textContent()).includes(check.observed[0].what), await first.textContent());
  console.log(`unfolded the witness of ${check.id} in ${scenario.id}: ${check.observed[0].seen.slice(0, 80)}`);
});
