// As a user sees it: something else answers the server's port (a proxy, an old
// instance, a gateway: /health 200 "OK", HTML on /v1/models) while the weights still load. The
// status bar keeps saying `loading NN%` (never `warming up` or `ready` from the stand-in's
// answers), the tooltip names the stand-in with its pid and command, and once the stand-in
// leaves and the server opens its own port the load ends in `ready`.
import assert from 'node:assert/strict';
import { printResultsDir, simForLoad, unitWithParsers, useScenario, restartFromPalette } from './scenario';
import { formatStatusHistory, hoverStatusTooltip, screenshot, statusHistory, waitForStatus } from './workbench';
import { startStandIn, type StandInProcess } from '../gpu-host/portStandIn';
import { waitFor } from '../util/waitFor';

after(printResultsDir);

describe('e2e: a stand-in on the server port', function () {
  const scenario = useScenario({
    name: 'port-stand-in',
    // Weights for ~60 s: time for the stand-in to come, be named, answer for a third of them and leave.
    gpuHost: { sim: simForLoad(60) },
    unitText: (h) => unitWithParsers(h),
    hostKeyPolicy: 'strict',
  });
  let standIn: StandInProcess | undefined;
  afterEach(async () => {
    await standIn?.stop();
    standIn = undefined;
  });

  it('loading NN% while the stand-in answers, the tooltip names it; ready once the server holds the port', async () => {
    const { page, host, tmp } = scenario();
    await restartFromPalette(page);
    // The new run reads its weights: the old server's port is closed.
    await waitForStatus(page, /^Kimi: loading \d+%/, { timeoutMs: 120_000, failOn: /failed|unreachable|ready/ });

    standIn = await startStandIn(host, tmp);
    const from = (await statusHistory(page)).length;
    const named = `port ${host.httpPort} is answered by pid ${standIn.pid} (node), not by ${host.unitName}`;
    const tooltip = await waitFor(
      async () => {
        const text = await hoverStatusTooltip(page, /is answered by/);
        return text.includes(named) ? text : undefined;
      },
      { timeoutMs: 60_000, message: `the tooltip names the stand-in (${named})` },
    );
    await page.mouse.move(700, 300);
    console.log(`    tooltip while the stand-in answers:\n${tooltip.replace(/^/gm, '      ')}`);
    assert.match(tooltip, /State: loading/);
    // It answers the extension's /health (200 "OK") meanwhile, and the item still says loading.
    const asked = standIn.requests();
    await waitFor(() => standIn!.requests() >= asked + 2, { timeoutMs: 60_000, message: 'the stand-in asked again' });
    // And on while the weights go on (a third of them): the stand-in answers all along.
    await waitForStatus(page, /^Kimi: loading (3\d|[4-9]\d)%/, { timeoutMs: 120_000, failOn: /warming|ready|failed/ });
    await screenshot(page, 'port-stand-in-loading');
    // What the item showed when the stand-in started, and every change until it left.
    const during = (await statusHistory(page)).slice(Math.max(0, from - 1));
    const requests = standIn.requests();
    await standIn.stop();
    standIn = undefined;
    console.log(
      `    status bar while the stand-in answered (${requests} requests to it):\n${formatStatusHistory(during)}`,
    );
    assert.ok(requests >= 2, `the stand-in was asked: ${requests}`);
    assert.ok(during.length >= 1, 'the item was seen while the stand-in answered');
    assert.ok(
      during.every((s) => /^Kimi: loading\b/.test(s.text)),
      `only "loading" while the stand-in answered:\n${formatStatusHistory(during)}`,
    );

    const hist = await waitForStatus(page, /^Kimi: ready$/, { timeoutMs: 180_000, failOn: /failed|unreachable/ });
    console.log(`    status bar from the restart:\n${formatStatusHistory(hist)}`);
    const after = await hoverStatusTooltip(page, /State: ready/);
    await page.mouse.move(700, 300);
    assert.ok(!after.includes('is answered by'), `no stand-in named once ready:\n${after}`);
  });
});
