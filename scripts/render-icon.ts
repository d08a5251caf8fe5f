// Renders media/icon.svg to media/icon.png (256 x 256, the Marketplace icon) with Debian's Chromium
// through playwright-core (no other image tool needed):  npx tsx scripts/render-icon.ts
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/e2e/workbench';

async function main(): Promise<void> {
  const root = join(__dirname, '..');
  const svg = readFileSync(join(root, 'media', 'icon.svg'), 'utf8');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 256, height: 256 }, deviceScaleFactor: 1 });
    await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path: join(root, 'media', 'icon.png'), omitBackground: true });
  } finally {
    await browser.close();
  }
}

void main();
