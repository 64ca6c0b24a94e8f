// The headless browser both page tests use: Debian's chromium through playwright-core (CHROMIUM
// overrides the path), offline, with every request that leaves `file:` recorded.

import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

// Opens `file` in a new headless browser; `outside` collects the URLs of requests that left
// the file system (a self-contained page makes none).
export async function openPage(file) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const page = await browser.newPage();
  const outside = [];
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) outside.push(r.url());
  });
  await page.goto(pathToFileURL(file).href);
  return { browser, page, outside };
}
