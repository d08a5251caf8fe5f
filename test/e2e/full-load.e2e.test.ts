// A full load, as a person sees it: palette "Restart Kimi service" -> modal -> Restart ->
// status bar "Kimi: loading NN%" rising -> "Kimi: ready"; the ready notification; Show log ->
// the Output panel's "Kimi Service" channel; then the parser verification notification.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { isRestartConfirm, printResultsDir, simForLoad, useScenario, unitWithParsers } from './scenario';
import {
  clickDialogButton,
  clickNotificationButton,
  formatStatusHistory,
  loadingPercentages,
  readOutputPanel,
  resetRecorders,
  runCommand,
  screenshot,
  statusBarEntryNames,
  statusHistory,
  statusText,
  statusTooltip,
  waitForDialog,
  waitForNotification,
  waitForStatus,
} from './workbench';

after(printResultsDir);

const LOAD_SECONDS = 15;

describe('e2e: full load', function () {
  const scenario = useScenario({
    name: 'full-load',
    gpuHost: { sim: simForLoad(LOAD_SECONDS) },
    unitText: (h) => unitWithParsers(h),
    hostKeyPolicy: 'strict',
    knownHost: true,
  });

  it('restart -> Restart confirmed -> loading NN% rising -> ready, with the ready notification', async () => {
    const page = scenario().page;
    // The item is there from activation on (its first word depends on the unit's state).
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    await screenshot(page, 'full-initial');
    // The item's `name` is what the status bar's context menu shows.
    const names = await statusBarEntryNames(page);
    assert.ok(names.includes("Hide 'Kimi service'"), `status bar entry named "Kimi service": ${JSON.stringify(names)}`);
    await resetRecorders(page);

    await runCommand(page, 'Restart Kimi service');
    const dlg = await waitForDialog(page);
    assert.ok(isRestartConfirm(dlg), `confirmation dialog: ${JSON.stringify(dlg)}`);
    await screenshot(page, 'full-confirm');
    await clickDialogButton(page, 'Restart');

    await waitForStatus(page, /Kimi: loading \d+%/, { timeoutMs: 60_000, failOn: /failed|unreachable/ });
    await waitForStatus(page, /Kimi: loading ([3-9]\d)%/, {
      timeoutMs: 60_000,
      failOn: /failed|unreachable|ready/,
    }).catch(() => undefined);
    await screenshot(page, 'full-loading');
    const tooltip = await statusTooltip(page);
    console.log(`    tooltip while loading:\n${tooltip.replace(/^/gm, '      ')}`);

    const hist = await waitForStatus(page, /Kimi: ready/, { timeoutMs: 180_000, failOn: /failed|unreachable/ });
    await screenshot(page, 'full-ready');
    console.log(`    status bar texts:\n${formatStatusHistory(hist)}`);

    const words = hist.map((h) => h.text.replace(/^Kimi: /, ''));
    const firstLoading = words.findIndex((w) => /^loading/.test(w));
    const lastReady = words.lastIndexOf('ready');
    assert.ok(firstLoading >= 0 && firstLoading < lastReady, `loading before ready: ${JSON.stringify(words)}`);
    const between = words.slice(firstLoading, lastReady);
    // "loading 42%", optionally followed by an ETA ("loading 61% · 9s left", "loading 20% · 40-55s left"); warming up too.
    assert.ok(
      between.every((w) => /^(loading( \d+%)?( · .+)?|warming up( · .+)?|restarting)$/.test(w)),
      `only load states between loading and ready: ${JSON.stringify(between)}`,
    );
    const pcts = loadingPercentages(hist);
    assert.ok(new Set(pcts).size >= 3, `at least three distinct percentages: ${pcts}`);
    for (let i = 1; i < pcts.length; i++) assert.ok(pcts[i] >= pcts[i - 1], `percentages never go down: ${pcts}`);
    assert.ok(
      pcts.every((p) => p >= 0 && p <= 100),
      `percentages in 0..100: ${pcts}`,
    );
    if (!words.includes('warming up')) console.log('    note: "warming up" was not seen between loading and ready');

    const note = await waitForNotification(page, /ready/, { timeoutMs: 30_000, severity: 'info' });
    console.log(`    ready notification: ${JSON.stringify(note)}`);
    assert.match(note.text, /sim/, 'names the server');
    assert.match(note.text, /\d+\s*(m|s)\b|\d+m \d+s/, 'says how long the load took');
    assert.ok(note.buttons.includes('Show log'), `buttons: ${note.buttons}`);
    assert.ok(note.buttons.includes('Forward port'), `the ready notification offers the forward: ${note.buttons}`);
    assert.equal(await statusText(page), 'Kimi: ready');
  });

  it('Show log opens the Output panel on "Kimi Service" with the state changes', async () => {
    const page = scenario().page;
    await clickNotificationButton(page, /ready/, 'Show log');
    const text = await readOutputPanel(page, { channel: 'Kimi Service' });
    await screenshot(page, 'full-log');
    console.log(
      `    Output "Kimi Service" (${text.split('\n').length} lines), tail:\n${text.split('\n').slice(-15).join('\n').replace(/^/gm, '      ')}`,
    );
    assert.match(text, /\d{2}:\d{2}:\d{2}/, 'timestamps');
    assert.match(text, /systemctl\b[^\n]*\brestart\b/, 'the restart command is logged');
    assert.match(text, /loading/, 'the loading state');
    assert.match(text, /ready/, 'the ready state');
    const iLoading = text.search(/loading/);
    const iReady = text.lastIndexOf('ready');
    assert.ok(iLoading < iReady, 'loading is logged before ready');
  });

  it('parser verification is visible after ready', async () => {
    const page = scenario().page;
    const note = await waitForNotification(page, /ready, parsers verified for agents \(\d+ checks\)/, {
      timeoutMs: 60_000,
    });
    console.log(`    parser notification: ${JSON.stringify(note)}`);
    await screenshot(page, 'full-parsers-verified');
    // Verification never changes the server state.
    assert.equal(await statusText(page), 'Kimi: ready');
    const failed = (await statusHistory(page)).filter((h) => /failed/.test(h.text));
    assert.deepEqual(failed, []);
  });

  it('Forward server port: the base URL shown, a request from this machine through it, in the tooltip; Close forward frees it', async () => {
    const page = scenario().page;
    await runCommand(page, 'Forward server port');
    const note = await waitForNotification(page, /forwarded to this machine/, { timeoutMs: 30_000, severity: 'info' });
    console.log(`    forward notification: ${JSON.stringify(note)}`);
    await screenshot(page, 'full-forwarded');
    const port = Number(/http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(note.text)?.[1]);
    assert.ok(port > 0, `a base URL in: ${note.text}`);
    assert.ok(
      note.buttons.includes('Copy base URL') && note.buttons.includes('Close forward'),
      `buttons: ${note.buttons}`,
    );
    // The extension host runs on this machine: its 127.0.0.1 is ours.
    const models = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/v1/models', agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        })
        .on('error', reject);
    });
    assert.equal(models.status, 200, models.body);
    assert.match(models.body, /"object":\s*"list"/);
    const tooltip = await statusTooltip(page);
    assert.match(tooltip, new RegExp(`Forwarded to this machine: http://127\\.0\\.0\\.1:${port}/v1`), tooltip);

    await clickNotificationButton(page, /forwarded to this machine/, 'Close forward');
    const refused = async () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port });
        socket.once('connect', () => (socket.destroy(), resolve(false)));
        socket.once('error', () => resolve(true));
      });
    const deadline = Date.now() + 10_000;
    while (!(await refused())) {
      assert.ok(Date.now() < deadline, `127.0.0.1:${port} still open after Close forward`);
      await page.waitForTimeout(100);
    }
    assert.doesNotMatch(await statusTooltip(page), /Forwarded to this machine/);
  });
});
