// The certification matrix (`pallas-conformance matrix`) in a real headless browser (Debian's
// chromium through playwright-core): every implementation's level and counts as the page shows
// them equal matrix.json (both levels: MCP agent bridge and Pallas), each capability's standing
// (claimed, never seen, shown but not tested…) equals matrix.json's, every cell shows the verdict
// matrix.json gives it, a cell's link leads to its entries, each badge is an image the browser
// renders with its scale and level in its text, the downstream side shows each bridge's results
// as matrix.json gives them, and the page loads nothing from anywhere.
//
//   MATRIX_DIR=reports/matrix node --test harness/tests/html/matrix.test.mjs
//
// CHROMIUM overrides the browser (default /usr/bin/chromium).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openPage } from './browser.mjs';

const dir = resolve(process.env.MATRIX_DIR ?? 'reports/matrix');
const matrix = JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8'));
const COUNTS = ['pass', 'fail', 'warn', 'info', 'inconclusive', 'error', 'skip'];

let browser;
let page;
let outside;

before(async () => {
  ({ browser, page, outside } = await openPage(join(dir, 'index.html')));
});

after(async () => {
  await browser?.close();
});

test('the page is self-contained: no request leaves it, no external resource', async () => {
  assert.deepEqual(outside, []);
  assert.equal(await page.locator('link[href], script[src], iframe').count(), 0);
});

test('each implementation shows the level and the counts matrix.json gives it', async () => {
  assert.ok(matrix.implementations.length > 0, 'matrix.json lists no implementation');
  for (const imp of matrix.implementations) {
    const row = page.locator(`tr[data-implementation="${imp.name}"]`);
    assert.equal(await row.count(), 1, `${imp.name}: one header row`);
    assert.ok(await row.isVisible(), `${imp.name}: header row rendered`);
    assert.equal(await row.getAttribute('data-level'), imp.score.level, imp.name);
    assert.equal((await row.getByTestId('level').textContent()).trim(), imp.score.level, imp.name);
    assert.equal(await row.getAttribute('data-pallas-level'), imp.pallas.level, imp.name);
    assert.equal(
      (await row.getByTestId('pallas-level').textContent()).trim(),
      imp.pallas.level,
      imp.name,
    );
    for (const verdict of COUNTS) {
      const shown = await row.locator(`[data-count="${verdict}"]`).textContent();
      assert.equal(Number(shown), imp.counts[verdict], `${imp.name}: ${verdict}`);
    }
  }
});

test("each implementation's capabilities show the standing matrix.json gives them", async () => {
  let rows = 0;
  for (const imp of matrix.implementations) {
    for (const cap of imp.capabilities ?? []) {
      const row = page.locator(
        `tr[data-capabilities-of="${imp.name}"][data-capability="${cap.capability}"]`,
      );
      assert.equal(await row.count(), 1, `${imp.name} ${cap.capability}: one row`);
      assert.ok(await row.isVisible(), `${imp.name} ${cap.capability}: rendered`);
      assert.equal(await row.getAttribute('data-standing'), standingLabel(cap.standing));
      rows += 1;
    }
  }
  assert.ok(rows > 0, 'matrix.json gives no implementation a capability row');
});

// The page's words for matrix.json's `standing`.
function standingLabel(standing) {
  return {
    claimed: 'claimed, no MUST fails',
    claimed_not_judged: 'claimed, nothing judged',
    claimed_no_must_judged: 'claimed, no MUST entry judged',
    claimed_seen_elsewhere: "claimed, seen only off the call's stream",
    claimed_must_fails: 'claimed, a MUST fails',
    claimed_not_seen: 'claimed, never seen in this run',
    not_tested: 'shown, not tested',
  }[standing];
}

test('every cell shows the verdict matrix.json gives it', async () => {
  const fromJson = new Map();
  for (const family of matrix.families) {
    for (const row of family.rows) {
      for (const [name, cell] of Object.entries(row.cells)) {
        fromJson.set(`${name}|${row.check}`, cell.verdict);
      }
    }
  }
  assert.ok(fromJson.size > 0, 'matrix.json has no cell');
  const onPage = await page.locator('section.cell').evaluateAll((sections) =>
    sections.map((s) => [`${s.dataset.implementation}|${s.dataset.check}`, s.dataset.verdict]),
  );
  assert.equal(onPage.length, fromJson.size, 'one entry section per cell');
  for (const [key, verdict] of onPage) {
    assert.equal(verdict, fromJson.get(key), key);
  }
});

test("a cell's link leads to its entries", async () => {
  // A failing cell if there is one: that is the cell a reader follows.
  let target;
  for (const family of matrix.families) {
    for (const row of family.rows) {
      for (const cell of Object.values(row.cells)) {
        if (!target || (cell.verdict === 'fail' && target.verdict !== 'fail')) target = cell;
      }
    }
  }
  const link = page.locator(`a[href="#${target.anchor}"]`).first();
  assert.ok(await link.isVisible(), `${target.anchor}: the cell's link is rendered`);
  await link.click();
  assert.ok(page.url().endsWith(`#${target.anchor}`), page.url());
  const section = page.locator(`[id="${target.anchor}"]`);
  assert.ok(await section.isVisible(), `${target.anchor}: its entries are rendered`);
  const text = await section.textContent();
  for (const entry of target.entries) {
    assert.ok(text.includes(entry.scenario), `${target.anchor}: names ${entry.scenario}`);
  }
});

test('each badge renders as an image whose text is the level', async () => {
  const badgePage = await browser.newPage();
  try {
    for (const imp of matrix.implementations) {
      const badges = [
        [imp.badge, `MCP agent bridge: ${imp.score.level}`],
        [imp.pallas_badge, `Pallas: ${imp.pallas.level}`],
      ];
      for (const [file, expected] of badges) {
        await badgePage.goto(pathToFileURL(join(dir, file)).href);
        const label = await badgePage.locator('svg').getAttribute('aria-label');
        assert.equal(label, expected, `${imp.name}: ${file}`);
        const box = await badgePage.locator('svg').boundingBox();
        assert.ok(box && box.width > 0 && box.height > 0, `${imp.name}: ${file} has a size`);
      }
    }
  } finally {
    await badgePage.close();
  }
});

test("the client side shows each client's level, cells and badge as matrix.json gives them", async () => {
  const clients = matrix.clients;
  assert.ok(clients && clients.implementations.length > 0, 'matrix.json has no client side');
  for (const imp of clients.implementations) {
    const row = page.locator(`tr[data-client="${imp.name}"]`);
    assert.equal(await row.count(), 1, `${imp.name}: one row`);
    assert.equal(await row.getAttribute('data-client-level'), imp.score.level, imp.name);
  }
  let cells = 0;
  for (const family of clients.families) {
    for (const r of family.rows) {
      for (const [name, cell] of Object.entries(r.cells)) {
        const td = page.locator(`tr[data-client-check="${r.check}"] td[data-client="${name}"]`);
        assert.equal(await td.getAttribute('data-verdict'), cell.verdict, `${name} ${r.check}`);
        cells += 1;
      }
    }
  }
  assert.ok(cells > 0, 'the client side has no cell');
  const badgePage = await browser.newPage();
  try {
    for (const imp of clients.implementations) {
      await badgePage.goto(pathToFileURL(join(dir, imp.badge)).href);
      const label = await badgePage.locator('svg').getAttribute('aria-label');
      assert.equal(label, `Daedalus client: ${imp.score.level}`, imp.name);
    }
  } finally {
    await badgePage.close();
  }
});

test("the downstream side shows each bridge's result per scenario as matrix.json gives it", async () => {
  const d = matrix.downstream;
  assert.ok(d && Object.keys(d.targets).length > 0, 'matrix.json has no downstream side');
  let cells = 0;
  for (const [bridge, t] of Object.entries(d.targets)) {
    for (const [scenario, result] of Object.entries(t.results)) {
      const td = page.locator(`#downstream-table tr[data-bridge="${bridge}"] td[data-scenario="${scenario}"]`);
      assert.equal((await td.textContent()).trim(), result, `${bridge} ${scenario}`);
      cells += 1;
    }
  }
  assert.ok(cells > 0, 'the downstream side has no cell');
  for (const imp of matrix.implementations) {
    const shown = page.locator(`tr[data-implementation="${imp.name}"] [data-testid="downstream"]`);
    const t = d.targets[imp.name];
    const text = (await shown.textContent()).trim();
    if (t) {
      const passed = Object.values(t.results).filter((r) => r === 'pass').length;
      assert.ok(text.startsWith(`${passed}/${Object.keys(t.results).length} pass`), `${imp.name}: ${text}`);
    } else {
      assert.equal(text, 'not driven', imp.name);
    }
  }
});
