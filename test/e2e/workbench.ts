// The VS Code workbench in Debian's Chromium, driven as a person would: the command palette,
// the status bar, notification toasts and their buttons, modal dialogs, the Output panel.
// Selectors are those of VS Code 1.139 (code-server 4.139.1); they held from 1.100 on, except that
// a closing quick input is `inert` while it fades out (openPalette waits for it to go).
import { chromium, type BrowserContext, type Frame, type Locator, type Page } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './codeServer';

export const CHROMIUM = process.env.KIMI_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--disable-breakpad',
];

/** Status bar item of the extension: `<publisher>.<name>.<itemId>` or `<publisher>.<name>`. */
export const EXTENSION_ID = 'kimi-tools.kimi-service';
export const STATUS_ITEM_SELECTOR = `.part.statusbar .statusbar-item[id^="${EXTENSION_ID}"]`;
export const STATUS_NAME = 'Kimi service';

let resultsDirCache: string | undefined;
/** test-results/e2e-<timestamp>/ (gitignored), shared by every scenario of one run. */
export function resultsDir(): string {
  if (!resultsDirCache) {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/Z$/, '');
    resultsDirCache = process.env.KIMI_E2E_RESULTS ?? join(REPO_ROOT, 'test-results', `e2e-${stamp}`);
    mkdirSync(resultsDirCache, { recursive: true });
  }
  return resultsDirCache;
}

export interface StatusSample {
  /** ms since the recorder started */
  t: number;
  at: string;
  text: string;
}

export interface NotificationSample {
  t: number;
  at: string;
  severity: string;
  text: string;
  buttons: string[];
}

export interface Workbench {
  page: Page;
  context: BrowserContext;
  close(): Promise<void>;
}

export async function openWorkbench(
  url: string,
  opts: { headless?: boolean; timeoutMs?: number; deviceScaleFactor?: number } = {},
): Promise<Workbench> {
  const profile = mkdtempSync(join(tmpdir(), 'kimi-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: opts.headless ?? true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: opts.deviceScaleFactor ?? 1,
    // Chromium writes "Crash Reports" under $XDG_CONFIG_HOME/chromium even with a
    // user-data-dir: keep that inside the throwaway profile too.
    env: {
      ...process.env,
      XDG_CONFIG_HOME: join(profile, 'xdg-config'),
      XDG_CACHE_HOME: join(profile, 'xdg-cache'),
    } as Record<string, string>,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const timeout = opts.timeoutMs ?? 90_000;
  await page.goto(url, { timeout });
  await page.waitForSelector('.monaco-workbench', { timeout });
  // The status bar and the activity bar are drawn once the workbench is restored.
  await page.waitForSelector('.part.statusbar', { timeout });
  await installRecorders(page);
  return {
    page,
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Reloads the workbench page (in code-server this ends the extension host and starts a new
 * one) and waits for it as openWorkbench does; the in-page recorders start afresh.
 */
export async function reloadWorkbench(page: Page, opts: { timeoutMs?: number } = {}): Promise<void> {
  const timeout = opts.timeoutMs ?? 90_000;
  await page.reload({ timeout });
  await page.waitForSelector('.monaco-workbench', { timeout });
  await page.waitForSelector('.part.statusbar', { timeout });
  await installRecorders(page);
}

/**
 * Records, inside the page, every distinct text of the Kimi status bar item and every
 * notification toast that appears, with timestamps (MutationObserver + a 50 ms sampler, so
 * a state shown for a moment is not missed between two polls from the test).
 */
async function installRecorders(page: Page): Promise<void> {
  // A string, not a function: tsx/esbuild would wrap named inner functions in a `__name`
  // helper that does not exist in the page.
  await page.evaluate(
    RECORDER_SOURCE.replace('ITEM_SELECTOR', JSON.stringify(STATUS_ITEM_SELECTOR)).replace(
      'STATUS_NAME',
      JSON.stringify(STATUS_NAME),
    ),
  );
}

const RECORDER_SOURCE = `(() => {
  if (window.__kimiRec) return;
  const itemSelector = ITEM_SELECTOR;
  const statusName = STATUS_NAME.toLowerCase();
  const t0 = Date.now();
  const status = [];
  const notes = [];
  const seenNotes = new Set();
  function findItem() {
    const byId = document.querySelector(itemSelector);
    if (byId) return byId;
    for (const el of document.querySelectorAll('.part.statusbar .statusbar-item')) {
      const label = ((el.getAttribute('aria-label') || '') + ' ' + el.id).toLowerCase();
      if (label.includes(statusName) || /^\\s*Kimi:/.test(el.innerText)) return el;
    }
    return null;
  }
  function itemText() {
    const el = findItem();
    if (!el) return '';
    const label = el.querySelector('.statusbar-item-label') || el;
    return label.innerText.replace(/\\s+/g, ' ').trim();
  }
  function sample() {
    const text = itemText();
    const last = status[status.length - 1];
    if (!last || last.text !== text) status.push({ t: Date.now() - t0, at: new Date().toISOString(), text });
    for (const toast of document.querySelectorAll('.notifications-toasts .notification-list-item')) {
      const m = toast.querySelector('.notification-list-item-message');
      const msg = m ? m.innerText.trim() : '';
      if (!msg) continue;
      const iconEl = toast.querySelector('.notification-list-item-icon');
      const icon = iconEl ? iconEl.className : '';
      const severity = /error/.test(icon) ? 'error' : /warning/.test(icon) ? 'warning' : 'info';
      const key = severity + '|' + msg;
      if (seenNotes.has(key)) continue;
      seenNotes.add(key);
      const buttons = Array.from(toast.querySelectorAll('.notification-list-item-buttons-container .monaco-button')).map((b) => b.innerText.trim());
      notes.push({ t: Date.now() - t0, at: new Date().toISOString(), severity, text: msg, buttons });
    }
  }
  new MutationObserver(sample).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['aria-label', 'class'] });
  setInterval(sample, 50);
  sample();
  window.__kimiRec = { status, notes, t0, reset() { status.length = 0; notes.length = 0; seenNotes.clear(); sample(); } };
})()`;

/** Clears the recorded status texts and notifications (e.g. between scenarios). */
export async function resetRecorders(page: Page): Promise<void> {
  await page.evaluate(() => (window as unknown as { __kimiRec: { reset(): void } }).__kimiRec.reset());
}

export async function statusHistory(page: Page): Promise<StatusSample[]> {
  return page.evaluate(() => (window as unknown as { __kimiRec: { status: StatusSample[] } }).__kimiRec.status.slice());
}

export async function notificationHistory(page: Page): Promise<NotificationSample[]> {
  return page.evaluate(() =>
    (window as unknown as { __kimiRec: { notes: NotificationSample[] } }).__kimiRec.notes.slice(),
  );
}

/** The Kimi status bar item (by its id, else by aria-label / text). */
export function statusItem(page: Page): Locator {
  return page
    .locator(STATUS_ITEM_SELECTOR)
    .or(page.locator('.part.statusbar .statusbar-item').filter({ hasText: /^\s*Kimi:/ }))
    .first();
}

/** The item's visible text, e.g. "Kimi: loading 42%" (codicons carry no text). */
export async function statusText(page: Page): Promise<string> {
  const item = statusItem(page);
  if ((await item.count()) === 0) return '';
  return (await item.innerText()).replace(/\s+/g, ' ').trim();
}

/**
 * The names of the status bar entries, as the status bar's context menu lists them (the
 * place where a StatusBarItem's `name` is shown: "Hide 'Kimi service'" / its checkbox).
 */
export async function statusBarEntryNames(page: Page): Promise<string[]> {
  await statusItem(page).click({ button: 'right' });
  const items = page.locator('.monaco-menu .action-item .action-label');
  await items.first().waitFor({ state: 'visible', timeout: 5000 });
  const names = (await items.allInnerTexts()).map((t) => t.trim()).filter(Boolean);
  await page.keyboard.press('Escape');
  return names;
}

export async function statusTooltip(page: Page): Promise<string> {
  await statusItem(page).hover();
  const hover = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: /\S/ }).last();
  await hover.waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
  const text = (await hover.count()) ? await hover.innerText() : '';
  await page.mouse.move(700, 300);
  return text.trim();
}

/**
 * Waits until the status bar text matches `re`; returns every distinct text seen since the
 * recorder was last reset. Fails early when `failOn` matches (e.g. /failed|unreachable/).
 */
export async function waitForStatus(
  page: Page,
  re: RegExp,
  opts: { timeoutMs?: number; failOn?: RegExp } = {},
): Promise<StatusSample[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    const hist = await statusHistory(page);
    const last = hist[hist.length - 1]?.text ?? '';
    if (re.test(last)) return hist;
    if (opts.failOn && opts.failOn.test(last)) {
      throw new Error(`status bar shows "${last}" while waiting for ${re}; history:\n${formatStatusHistory(hist)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`status bar never matched ${re} (last "${last}"); history:\n${formatStatusHistory(hist)}`);
    }
    await page.waitForTimeout(100);
  }
}

export function formatStatusHistory(hist: StatusSample[]): string {
  return hist.map((s) => `  +${(s.t / 1000).toFixed(1)}s  ${s.text || '(no item)'}`).join('\n');
}

/** Percentages of every `loading NN%` text, in the order seen. */
export function loadingPercentages(hist: StatusSample[]): number[] {
  return hist
    .map((s) => /loading\s+(\d+)%/.exec(s.text))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => Number(m[1]));
}

// ---------------------------------------------------------------------------------------
// Command palette

export async function openPalette(page: Page, text = ''): Promise<Locator> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  // Focus the window through its title bar: a click in the editor area could press something
  // there (a walkthrough's step, a button).
  await page
    .locator('.monaco-workbench')
    .click({ position: { x: 700, y: 12 } })
    .catch(() => undefined);
  // A palette that opens late must not be toggled shut by the next key press: press only while
  // it is not visible, then wait for it once more before typing.
  // A palette that is closing (VS Code 1.139 marks it inert while it fades out) is not open.
  const usable = async () =>
    (await input.isVisible()) && !(await input.evaluate((e) => e.closest('[inert]') !== null).catch(() => true));
  for (let round = 0; ; round++) {
    for (let attempt = 0; attempt < 3 && !(await usable()); attempt++) {
      await input.waitFor({ state: 'hidden', timeout: 2000 }).catch(() => undefined);
      await page.keyboard.press(attempt === 1 ? 'F1' : 'Control+Shift+P');
      await input.waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
    }
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    // Something that takes the focus as the palette opens (an editor being restored) closes it again.
    const filled = await input.fill(`>${text}`, { timeout: round < 2 ? 5000 : 30_000 }).then(
      () => true,
      (e: unknown) => (round < 2 ? false : Promise.reject(e)),
    );
    if (filled) return input;
  }
}

/**
 * The palette's rows for `text`. With `until`, retypes until a row satisfies it (extensions
 * register their contributions a few seconds after the workbench appears) or the timeout.
 */
export async function paletteRows(
  page: Page,
  text: string,
  opts: { until?: (row: string) => boolean; timeoutMs?: number } = {},
): Promise<string[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  let labels: string[] = [];
  const input = await openPalette(page, text);
  for (;;) {
    await rows
      .first()
      .waitFor({ state: 'visible', timeout: 5_000 })
      .catch(() => undefined);
    await page.waitForTimeout(300);
    labels = await rows.evaluateAll((els) =>
      els.map((e) => (e.getAttribute('aria-label') ?? (e as HTMLElement).innerText).trim()),
    );
    if (!opts.until || labels.some(opts.until) || Date.now() > deadline) break;
    await page.waitForTimeout(1000);
    await input.fill('>');
    await input.fill(`>${text}`);
  }
  await page.keyboard.press('Escape');
  await input.waitFor({ state: 'hidden', timeout: 5000 }).catch(() => undefined);
  return labels;
}

/**
 * Runs a command by its palette title ("Restart Kimi service" or "Kimi Service: Restart Kimi
 * service"): Control+Shift+P, type, pick the row whose label is that command, Enter.
 */
export async function runCommand(page: Page, title: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  const input = await openPalette(page, title);
  const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  const wanted = (label: string) => {
    const l = label.replace(/\s+/g, ' ').trim().toLowerCase();
    const t = title.toLowerCase();
    return (
      l === t ||
      l.startsWith(`${t},`) ||
      l.startsWith(`${t} `) ||
      l.endsWith(`: ${t}`) ||
      l.includes(`: ${t},`) ||
      l.includes(`: ${t} `) ||
      l.startsWith(`kimi service: ${t}`)
    );
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let lastType = Date.now();
  for (;;) {
    const labels = await rows.evaluateAll((els) =>
      els.map((e) => (e.getAttribute('aria-label') ?? (e as HTMLElement).innerText).trim()),
    );
    const i = labels.findIndex(wanted);
    if (i >= 0) {
      // The list may be redrawn (or the palette closed by a late toast taking focus) between
      // reading it and clicking: then open it again and look once more.
      const clicked = await rows
        .nth(i)
        .click({ timeout: 5000 })
        .then(
          () => true,
          () => false,
        );
      if (clicked) {
        await input.waitFor({ state: 'hidden', timeout: 5000 }).catch(() => undefined);
        return;
      }
      await openPalette(page, title);
      lastType = Date.now();
      continue;
    }
    if (Date.now() > deadline) {
      await page.keyboard.press('Escape');
      throw new Error(`command "${title}" not found in the palette; rows: ${JSON.stringify(labels)}`);
    }
    await page.waitForTimeout(200);
    if (Date.now() - lastType > 2000) {
      // The list is computed when typed: retype so late-registered commands show up.
      lastType = Date.now();
      await input.fill('>');
      await input.fill(`>${title}`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Notifications and dialogs

/** The notification toasts currently shown. */
export async function visibleNotifications(
  page: Page,
): Promise<{ severity: string; text: string; buttons: string[] }[]> {
  return page.locator('.notifications-toasts .notification-list-item').evaluateAll((els) =>
    els.map((el) => {
      const icon = el.querySelector('.notification-list-item-icon')?.className ?? '';
      return {
        severity: /error/.test(icon) ? 'error' : /warning/.test(icon) ? 'warning' : 'info',
        text: (el.querySelector<HTMLElement>('.notification-list-item-message')?.innerText ?? '').trim(),
        buttons: Array.from(
          el.querySelectorAll<HTMLElement>('.notification-list-item-buttons-container .monaco-button'),
        ).map((b) => b.innerText.trim()),
      };
    }),
  );
}

/**
 * Waits for a notification (toast, or one recorded earlier) whose text matches `re`.
 * Returns it as recorded.
 */
export async function waitForNotification(
  page: Page,
  re: RegExp,
  opts: { timeoutMs?: number; severity?: string } = {},
): Promise<NotificationSample> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const hit = (await notificationHistory(page)).find(
      (n) => re.test(n.text) && (!opts.severity || n.severity === opts.severity),
    );
    if (hit) return hit;
    if (Date.now() > deadline) {
      throw new Error(
        `no notification matched ${re}; seen: ${JSON.stringify(await notificationHistory(page), null, 1)}`,
      );
    }
    await page.waitForTimeout(100);
  }
}

/** A toast whose message matches `re` (opening the notification center if it was hidden). */
export async function notificationItem(page: Page, re: RegExp): Promise<Locator> {
  const toast = page
    .locator('.notifications-toasts .notification-list-item')
    .filter({ has: page.locator('.notification-list-item-message', { hasText: re }) });
  if (await toast.count()) return toast.first();
  // Toasts hide after a while; the notification center keeps them.
  await runCommand(page, 'Notifications: Show Notifications');
  const inCenter = page
    .locator('.notifications-center .notification-list-item')
    .filter({ has: page.locator('.notification-list-item-message', { hasText: re }) });
  await inCenter.first().waitFor({ state: 'visible', timeout: 5000 });
  return inCenter.first();
}

/**
 * Shows the whole message of a notification (a long one is cut to one line until expanded);
 * nothing when it has nothing more to show.
 */
export async function expandNotification(item: Locator): Promise<void> {
  if (/\bexpanded\b/.test((await item.getAttribute('class')) ?? '')) return;
  await item.hover();
  const toggle = item.locator('.codicon-notifications-expand').first();
  if (await toggle.isVisible()) await toggle.click();
}

/** Clicks a button (e.g. "Show log") of the notification whose text matches `re`. */
export async function clickNotificationButton(page: Page, re: RegExp, button: string): Promise<void> {
  const item = await notificationItem(page, re);
  await item.hover();
  await item.locator('.notification-list-item-buttons-container .monaco-button', { hasText: button }).first().click();
}

export interface DialogInfo {
  message: string;
  detail: string;
  buttons: string[];
}

/** Waits for a modal dialog (VS Code's own, in the browser) and returns its texts. */
export async function waitForDialog(page: Page, opts: { timeoutMs?: number; text?: RegExp } = {}): Promise<DialogInfo> {
  const box = page.locator('.monaco-dialog-box');
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (await box.isVisible()) {
      const info = await box.evaluate((el) => ({
        message: (el.querySelector<HTMLElement>('.dialog-message-text')?.innerText ?? '').trim(),
        detail: (el.querySelector<HTMLElement>('.dialog-message-detail')?.innerText ?? '').trim(),
        buttons: Array.from(el.querySelectorAll<HTMLElement>('.dialog-buttons .monaco-button')).map((b) =>
          b.innerText.trim(),
        ),
      }));
      if (!opts.text || opts.text.test(`${info.message}\n${info.detail}`)) return info;
    }
    if (Date.now() > deadline)
      throw new Error(`no modal dialog${opts.text ? ` matching ${opts.text}` : ''} within the timeout`);
    await page.waitForTimeout(100);
  }
}

/** Clicks a button of the modal dialog by its exact title ("Restart", "Trust"). */
export async function clickDialogButton(page: Page, title: string): Promise<void> {
  const box = page.locator('.monaco-dialog-box');
  await box
    .locator('.dialog-buttons .monaco-button')
    .filter({ hasText: new RegExp(`^\\s*${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) })
    .first()
    .click();
  await box.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** An input box (showInputBox) as the user sees it: its title, its prompt, whether it hides what is typed. */
export interface InputBoxInfo {
  title: string;
  prompt: string;
  password: boolean;
}

/** Waits for an input box whose title or prompt matches `text` (any, without). */
export async function waitForInputBox(
  page: Page,
  opts: { timeoutMs?: number; text?: RegExp } = {},
): Promise<InputBoxInfo> {
  const widget = page.locator('.quick-input-widget');
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (await widget.isVisible()) {
      const { closing, ...info } = await widget.evaluate((el) => ({
        title: (el.querySelector<HTMLElement>('.quick-input-title')?.innerText ?? '').trim(),
        prompt: (el.querySelector<HTMLElement>('.quick-input-message')?.innerText ?? '').trim(),
        password: el.querySelector<HTMLInputElement>('.quick-input-box input')?.type === 'password',
        // A box just answered stays visible a moment while it closes: not a question.
        closing: el.classList.contains('quick-input-widget-closing'),
      }));
      if (!closing && (!opts.text || opts.text.test(`${info.title}\n${info.prompt}`))) return info;
    }
    if (Date.now() > deadline)
      throw new Error(`no input box${opts.text ? ` matching ${opts.text}` : ''} within the timeout`);
    await page.waitForTimeout(100);
  }
}

/**
 * Types `value` into the open input box and accepts it (Enter); returns once that box is gone: the
 * widget hidden or closing, or already showing the next question with an empty box (OpenSSH can ask
 * again within a second, before the widget was ever seen hidden: VS Code reuses its element).
 */
export async function answerInputBox(page: Page, value: string): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.fill(value);
  await input.press('Enter');
  await page.waitForFunction(
    (typed) => {
      const widget = document.querySelector<HTMLElement>('.quick-input-widget');
      if (!widget || widget.getClientRects().length === 0 || getComputedStyle(widget).display === 'none') return true;
      if (widget.classList.contains('quick-input-widget-closing')) return true;
      return widget.querySelector<HTMLInputElement>('.quick-input-box input')?.value !== typed;
    },
    value,
    { timeout: 10_000 },
  );
}

// ---------------------------------------------------------------------------------------
// Output panel

/** The channel selected in the Output view (its dropdown in the panel's title bar). */
export async function outputChannelShown(page: Page): Promise<string> {
  const select = page
    .locator('.part.panel .title-actions select.monaco-select-box, .part.panel select.monaco-select-box')
    .first();
  if (!(await select.count())) return '';
  return select.evaluate((s) => {
    const sel = s as HTMLSelectElement;
    return sel.options[sel.selectedIndex]?.text ?? '';
  });
}

/**
 * Reads the Output panel's editor as a person scrolling through it would: every rendered
 * line, from the top to the bottom (Monaco renders only the visible lines).
 */
export async function readOutputPanel(
  page: Page,
  opts: { timeoutMs?: number; channel?: string } = {},
): Promise<string> {
  const editor = page.locator('.part.panel .output-view .monaco-editor, .part.panel .monaco-editor').first();
  await editor.waitFor({ state: 'visible', timeout: opts.timeoutMs ?? 15_000 });
  if (opts.channel) {
    const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
    while (!(await outputChannelShown(page)).includes(opts.channel)) {
      if (Date.now() > deadline)
        throw new Error(`Output view shows "${await outputChannelShown(page)}", not "${opts.channel}"`);
      await page.waitForTimeout(200);
    }
  }
  await page.waitForTimeout(500);
  const lines = new Map<number, string>();
  const collect = async () => {
    const rows = await editor.locator('.view-lines .view-line').evaluateAll((els) =>
      els.map((e) => ({
        top: parseFloat((e as HTMLElement).style.top || '0'),
        text: (e as HTMLElement).innerText.replace(/\u00a0/g, ' '),
      })),
    );
    // A line's `top` is its position in the whole document (the container scrolls).
    let added = 0;
    for (const r of rows) {
      const key = Math.round(r.top);
      if (!lines.has(key)) added++;
      lines.set(key, r.text);
    }
    return added;
  };
  // Click inside the editor's visible box (not .view-lines: it spans the whole document, so
  // its centre can lie outside the panel).
  await editor.click({ position: { x: 60, y: 8 } });
  await page.keyboard.press('Control+Home');
  await page.waitForTimeout(200);
  await collect();
  for (let i = 0; i < 200; i++) {
    await page.keyboard.press('PageDown');
    await page.waitForTimeout(80);
    if ((await collect()) === 0) {
      await page.keyboard.press('PageDown');
      await page.waitForTimeout(150);
      if ((await collect()) === 0) break;
    }
  }
  return [...lines.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, t]) => t)
    .join('\n');
}

// ---------------------------------------------------------------------------------------
// Screenshots

let shotCounter = 0;
/** Saves a screenshot as <resultsDir>/<NN>-<name>.png and returns its path. */
export async function screenshot(page: Page, name: string, opts: { settleMs?: number } = {}): Promise<string> {
  // Toasts and dialogs fade in over ~0.3 s.
  await page.waitForTimeout(opts.settleMs ?? 400);
  shotCounter++;
  const file = join(resultsDir(), `${String(shotCounter).padStart(2, '0')}-${name.replace(/[^\w.-]+/g, '_')}.png`);
  await page.screenshot({ path: file });
  return file;
}

export interface CropOptions {
  /** CSS pixels of the page kept around the parts (default 8). */
  margin?: number;
  /** Wait this long first: hovers, toasts and dialogs fade in over ~0.3 s (default 400). */
  settleMs?: number;
}

/**
 * Saves, at `file`, only the part of the window that holds every locator of `parts` (their
 * bounding boxes' union, a margin around it, within the viewport); locators inside webview
 * frames count too, as their boxes are in the page's coordinates. Returns the clip.
 */
export async function cropScreenshot(
  page: Page,
  parts: Locator[],
  file: string,
  opts: CropOptions = {},
): Promise<{ x: number; y: number; width: number; height: number }> {
  await page.waitForTimeout(opts.settleMs ?? 400);
  const boxes = [];
  for (const part of parts) {
    const box = await part.boundingBox();
    if (!box) throw new Error(`nothing to crop: ${part} is not on screen`);
    boxes.push(box);
  }
  const margin = opts.margin ?? 8;
  const view = page.viewportSize() ?? { width: 1440, height: 900 };
  const left = Math.max(0, Math.floor(Math.min(...boxes.map((b) => b.x)) - margin));
  const top = Math.max(0, Math.floor(Math.min(...boxes.map((b) => b.y)) - margin));
  const right = Math.min(view.width, Math.ceil(Math.max(...boxes.map((b) => b.x + b.width)) + margin));
  const bottom = Math.min(view.height, Math.ceil(Math.max(...boxes.map((b) => b.y + b.height)) + margin));
  const clip = { x: left, y: top, width: right - left, height: bottom - top };
  await page.screenshot({ path: file, clip });
  return clip;
}

/** Drags the side bar's edge (its sash) `byPx` to the right: its rows' descriptions are cut at the default width. */
export async function widenSideBar(page: Page, byPx: number): Promise<void> {
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar) throw new Error('no side bar on screen');
  const edge = bar.x + bar.width;
  const sashes = await page.locator('.monaco-sash.vertical').evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2, height: r.height };
    }),
  );
  const sash = sashes.filter((b) => b.height > 100).sort((a, b) => Math.abs(a.x - edge) - Math.abs(b.x - edge))[0];
  if (!sash || Math.abs(sash.x - edge) > 8) throw new Error(`no sash at the side bar's edge (x ${edge})`);
  await page.mouse.move(sash.x, sash.y);
  await page.waitForTimeout(300);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(sash.x + (byPx * i) / 10, sash.y);
  await page.mouse.up();
  await page.mouse.move(700, 300);
}

// ---------------------------------------------------------------------------------------
// Views of the extension: the servers view, the dashboard

/** The rows of the Kimi Servers tree as the user reads them (label and description). */
export async function serverRows(page: Page): Promise<string[]> {
  return page.locator('.part.sidebar .monaco-list-row').evaluateAll((els) =>
    els
      .map((el) =>
        ['.label-name', '.label-description']
          .map((selector) => (el.querySelector<HTMLElement>(selector)?.innerText ?? '').replace(/\s+/g, ' ').trim())
          .filter(Boolean)
          .join(' '),
      )
      .filter(Boolean),
  );
}

export async function waitForRows(
  page: Page,
  wanted: (rows: string[]) => boolean,
  timeoutMs: number,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let rows: string[] = [];
  while (Date.now() < deadline) {
    rows = await serverRows(page);
    if (wanted(rows)) return rows;
    await page.waitForTimeout(250);
  }
  throw new Error(`servers view rows never matched; last: ${JSON.stringify(rows)}`);
}

/** The dashboard page: the frame (any depth) whose document has the dashboard's #timeline. */
export async function dashboardFrame(page: Page, timeoutMs = 30_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      const ok = await f
        .evaluate(() => !!document.getElementById('timeline') && !!document.getElementById('figures'))
        .catch(() => false);
      if (ok) return f;
    }
    if (Date.now() > deadline)
      throw new Error(
        `no dashboard webview among ${page.frames().length} frames: ${page
          .frames()
          .map((f) => f.url())
          .join(', ')}`,
      );
    await page.waitForTimeout(200);
  }
}

// ---------------------------------------------------------------------------------------
// The item's look and the dialogs seen (the status bar tells the truth)

/**
 * The codicons drawn in the Kimi item, as class lists: `$(loading~spin)` renders as
 * `<span class="codicon codicon-loading codicon-modifier-spin">`.
 */
export async function statusIcons(page: Page): Promise<string[]> {
  const item = statusItem(page);
  if ((await item.count()) === 0) return [];
  return item.locator('.codicon').evaluateAll((els) => els.map((e) => e.className));
}

/** The class list of the item's container (`error-kind` / `warning-kind` for its background). */
export async function statusItemClasses(page: Page): Promise<string> {
  const item = statusItem(page);
  if ((await item.count()) === 0) return '';
  return item.evaluate((el) => {
    const container = el.closest('.statusbar-item') ?? el;
    return `${container.className} ${el.className}`.trim();
  });
}

/** The hover box on screen whose text matches `re` (the status item's tooltip once hovered). */
export function statusHover(page: Page, re: RegExp = /\S/): Locator {
  return page.locator('.monaco-hover, .workbench-hover').filter({ hasText: re }).last();
}

/**
 * Hovers the item and returns its tooltip text, leaving the hover on screen (for a
 * screenshot); move the mouse away afterwards (`page.mouse.move`).
 */
export async function hoverStatusTooltip(page: Page, re: RegExp = /\S/): Promise<string> {
  const hover = statusHover(page, re);
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.mouse.move(700, 300);
    await statusItem(page).hover();
    try {
      await hover.waitFor({ state: 'visible', timeout: 5000 });
      return (await hover.innerText()).trim();
    } catch {
      /* the hover did not open (or not with that text yet): hover again */
    }
  }
  return '';
}

/**
 * Records, inside the page, every modal dialog that appears from now on (message, detail,
 * buttons), so a test can assert that none was shown, even one that came and went.
 */
export async function recordDialogs(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    if (window.__kimiDialogs) { window.__kimiDialogs.length = 0; return; }
    const seen = [];
    window.__kimiDialogs = seen;
    let open = null;
    function sample() {
      const box = document.querySelector('.monaco-dialog-box');
      if (!box) { open = null; return; }
      const q = (s) => { const e = box.querySelector(s); return e ? e.innerText.trim() : ''; };
      const info = {
        message: q('.dialog-message-text'),
        detail: q('.dialog-message-detail'),
        buttons: Array.from(box.querySelectorAll('.dialog-buttons .monaco-button')).map((b) => b.innerText.trim()),
      };
      if (open !== box) {
        open = box;
        seen.push({ at: new Date().toISOString(), ...info });
      } else {
        // Its texts may be filled in after the box is inserted.
        Object.assign(seen[seen.length - 1], info);
      }
    }
    new MutationObserver(sample).observe(document.body, { subtree: true, childList: true });
    setInterval(sample, 50);
    sample();
  })()`);
}

/** The dialogs recorded since recordDialogs(). */
export async function dialogHistory(page: Page): Promise<(DialogInfo & { at: string })[]> {
  return page.evaluate(() =>
    ((window as unknown as { __kimiDialogs?: (DialogInfo & { at: string })[] }).__kimiDialogs ?? []).slice(),
  );
}
