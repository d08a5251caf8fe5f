// The window reloaded mid-load (concurrency): restart -> loading NN% -> the page is
// reloaded (code-server ends the extension host and starts a new one) -> the new activation
// offers "Resume watching" -> clicked -> loading -> ready, and the unit was restarted exactly
// once on the host. After the watch has ended, another reload offers nothing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { waitFor } from '../util/waitFor';
import { restartFromPalette, printResultsDir, simForLoad, useScenario } from './scenario';
import {
  clickNotificationButton,
  formatStatusHistory,
  loadingPercentages,
  notificationHistory,
  reloadWorkbench,
  screenshot,
  statusText,
  waitForNotification,
  waitForStatus,
} from './workbench';

after(printResultsDir);

/** Long enough that the reload and the offer happen while the weights are still loading. */
const LOAD_SECONDS = 30;
const OFFER = /was being watched when the window closed/;

describe('e2e: window reloaded mid-load', function () {
  const scenario = useScenario({
    name: 'reload',
    gpuHost: { sim: simForLoad(LOAD_SECONDS) },
    hostKeyPolicy: 'strict',
    knownHost: true,
  });

  const restarts = async () => (await scenario().host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l));
  /** What each activation decided to offer back after a window closed, from the extension's log files. */
  const resumeDecisions = (): string[] =>
    scenario()
      .cs.findLogFiles(/Kimi Service\.log$/)
      .flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/Resume offers after the window opened: (.*)\.$/gm)].map((m) => m[1]!),
      );

  it('reload mid-load -> "Resume watching" -> loading -> ready, restarted exactly once', async () => {
    const page = scenario().page;
    await restartFromPalette(page);
    await waitForStatus(page, /Kimi: loading \d+%/, { timeoutMs: 60_000, failOn: /failed|unreachable|ready/ });
    // Well into the weights, so that the new activation finds a load visibly under way.
    const before = await waitForStatus(page, /Kimi: loading ([1-5]\d)%/, {
      timeoutMs: 60_000,
      failOn: /failed|unreachable|ready/,
    });
    const pctBefore = Math.max(...loadingPercentages(before));
    await screenshot(page, 'reload-loading-before');
    assert.equal((await restarts()).length, 1, 'one restart so far');

    const tReload = Date.now();
    await reloadWorkbench(page);
    console.log(`    page reloaded at ${pctBefore}% in ${((Date.now() - tReload) / 1000).toFixed(1)} s`);

    const offer = await waitForNotification(page, OFFER, { timeoutMs: 60_000, severity: 'info' });
    await screenshot(page, 'reload-offer');
    console.log(`    offer: ${JSON.stringify(offer)}`);
    assert.match(offer.text, /Kimi on sim\b/, 'names the server');
    assert.match(offer.text, /nothing is restarted/);
    assert.ok(offer.buttons.includes('Resume watching'), `buttons: ${offer.buttons}`);
    assert.equal((await restarts()).length, 1, 'the new activation restarted nothing by itself');

    await clickNotificationButton(page, OFFER, 'Resume watching');
    const resumed = await waitForStatus(page, /Kimi: loading \d+%/, {
      timeoutMs: 60_000,
      failOn: /failed|unreachable|ready/,
    });
    await screenshot(page, 'reload-resumed-loading');
    const pctAfter = loadingPercentages(resumed);
    // A new watch replays the journal since the unit started: the first text after resuming can
    // be a brief "loading 0%" before it catches up (not a new load: the exec log says so).
    console.log(`    percentage before the reload: ${pctBefore}%; first after resuming: ${pctAfter.join(', ')}%`);

    const hist = await waitForStatus(page, /Kimi: ready/, { timeoutMs: 180_000, failOn: /failed|unreachable/ });
    await screenshot(page, 'reload-ready');
    const pcts = loadingPercentages(hist);
    assert.ok(Math.max(...pcts) >= pctBefore, `the resumed watch followed the same load past ${pctBefore}%: ${pcts}`);
    console.log(`    status bar texts since the reload:\n${formatStatusHistory(hist)}`);
    const words = hist.map((h) => h.text.replace(/^Kimi: /, ''));
    const firstLoading = words.findIndex((w) => /^loading/.test(w));
    assert.ok(
      firstLoading >= 0 && firstLoading < words.lastIndexOf('ready'),
      `loading before ready: ${JSON.stringify(words)}`,
    );

    const ready = await waitForNotification(page, /ready/, { timeoutMs: 30_000, severity: 'info' });
    console.log(`    ready notification: ${JSON.stringify(ready)}`);

    const lines = await restarts();
    console.log(`    restart commands on the host:\n${lines.join('\n').replace(/^/gm, '      ')}`);
    assert.equal(lines.length, 1, 'the unit was restarted exactly once over the whole scenario');
    assert.equal(await statusText(page), 'Kimi: ready');
  });

  it('after the watch has ended, a reload offers nothing', async () => {
    const page = scenario().page;
    // Only meaningful once the resumed watch has ended (else an offer is right).
    assert.equal(await statusText(page), 'Kimi: ready', 'precondition: the previous test reached ready');
    const decided = resumeDecisions().length;
    await reloadWorkbench(page);
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    // The new window logs its decision on resume offers before it would show one.
    const decisions = await waitFor(() => (resumeDecisions().length > decided ? resumeDecisions() : undefined), {
      timeoutMs: 60_000,
      message: "the new window's decision on resume offers in its log",
    });
    assert.equal(decisions[decisions.length - 1], 'none');
    await screenshot(page, 'reload-no-offer');
    const notes = await notificationHistory(page);
    console.log(`    notifications after the second reload: ${JSON.stringify(notes)}`);
    assert.deepEqual(
      notes.filter((n) => OFFER.test(n.text)),
      [],
      'no resume offer',
    );
    assert.equal((await restarts()).length, 1, 'still one restart');
  });
});
