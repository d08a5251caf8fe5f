// Two windows, one watch (docs/broker.md): two pages of one code-server (one extension
// host each). "Restart Kimi service" asked in the second window is confirmed there and run by the
// first; both status bars follow the load to ready; the host sees one SSH login and one parser
// verification round; the ready notification appears in one window only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../util/waitFor';
import { isRestartConfirm, printResultsDir, simForLoad, unitWithParsers, useScenario } from './scenario';
import {
  clickDialogButton,
  formatStatusHistory,
  loadingPercentages,
  notificationHistory,
  openWorkbench,
  resetRecorders,
  runCommand,
  screenshot,
  waitForDialog,
  waitForStatus,
  type Workbench,
} from './workbench';

after(printResultsDir);

describe('e2e: two windows share one watch', function () {
  const scenario = useScenario({
    name: 'two-windows',
    gpuHost: { sim: simForLoad(20) },
    unitText: unitWithParsers,
    hostKeyPolicy: 'strict',
    settings: { 'kimiService.verifyParsersWhenReady': true },
  });
  let second: Workbench | undefined;
  after(async () => {
    await second?.close();
  });

  it('a restart asked in the second window: both status bars right, one login, one verification round, one ready toast', async () => {
    const { page: first, host, cs } = scenario();
    await waitForStatus(first, /^Kimi: /, { timeoutMs: 60_000 });
    second = await openWorkbench(cs.url);
    const page2 = second.page;
    await waitForStatus(page2, /^Kimi: /, { timeoutMs: 60_000 });
    // Both windows joined the broker: one owns, one shows its watches.
    const logs = () => cs.findLogFiles(/Kimi Service\.log$/).map((f) => readFileSync(f, 'utf8'));
    await waitFor(
      () => {
        const all = logs().join('\n');
        return (
          /Broker: this process watches for every window/.test(all) && /Broker: this window shows the watches/.test(all)
        );
      },
      { timeoutMs: 60_000, message: 'one window owns the broker, the other is its client' },
    );
    const chatLog = join(host.stateDir, 'chat-requests.jsonl');
    const chatRequests = (): string[] => {
      try {
        return readFileSync(chatLog, 'utf8').trim().split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    const chatBefore = chatRequests().length;
    await resetRecorders(first);
    await resetRecorders(page2);

    await runCommand(page2, 'Restart Kimi service');
    const confirm = await waitForDialog(page2);
    assert.ok(
      isRestartConfirm(confirm),
      `the confirmation is asked in the window that asked: ${JSON.stringify(confirm)}`,
    );
    await clickDialogButton(page2, 'Restart');

    const [hist1, hist2] = await Promise.all(
      [first, page2].map((p) => waitForStatus(p, /Kimi: ready/, { timeoutMs: 180_000, failOn: /failed|unreachable/ })),
    );
    console.log(
      `    first window:\n${formatStatusHistory(hist1!)}\n    second window:\n${formatStatusHistory(hist2!)}`,
    );
    for (const [name, hist] of [
      ['first', hist1!],
      ['second', hist2!],
    ] as const)
      assert.ok(loadingPercentages(hist).length >= 1, `the ${name} window showed the load's percentage`);
    await screenshot(first, 'two-windows-first-ready');
    await screenshot(page2, 'two-windows-second-ready');

    // The verification after ready: its notification in one window, its requests sent once.
    const verified = async () =>
      (await Promise.all([first, page2].map((p) => notificationHistory(p)))).map((n) =>
        n.filter((x) => /parsers verified|Parsers verified|verified for agents/.test(x.text)),
      );
    const shown = await waitFor(async () => ((await verified()).flat().length > 0 ? verified() : undefined), {
      timeoutMs: 120_000,
      message: 'the parser verification notification',
    });
    const readyToasts = (await Promise.all([first, page2].map((p) => notificationHistory(p)))).map(
      (n) => n.filter((x) => /is ready/.test(x.text)).length,
    );
    console.log(
      `    ready toasts per window: ${readyToasts}; verification notes per window: ${shown.map((s) => s.length)}`,
    );
    assert.equal(readyToasts[0]! + readyToasts[1]!, 1, 'the ready notification appears in one window');
    assert.equal(shown[0]!.length + shown[1]!.length, 1, 'the verification is reported in one window');
    const requests = chatRequests().slice(chatBefore);
    const bodies = requests.map((l) => JSON.stringify((JSON.parse(l) as { body: unknown }).body));
    console.log(`    verification requests on the host: ${requests.length}`);
    assert.ok(requests.length > 0);
    assert.equal(new Set(bodies).size, bodies.length, 'no verification request was sent twice (one round)');
    // Once verified, the chat model of each window looks at /v1/models, /server_info and the model
    // folder: a client window's looks go through the owner's connection too (brokeredTransport.ts).
    await waitFor(
      () =>
        (
          logs()
            .join('\n')
            .match(/Chat model offered/g) ?? []
        ).length >= 2,
      {
        timeoutMs: 60_000,
        message: 'the chat model offered in both windows',
      },
    );
    assert.equal(host.handshakes(), 1, 'one SSH login for both windows');
  });
});
