// The restart rule in VS Code (docs/restart-rule.md): "Restart Kimi service" while a load is
// under way offers "Follow this load" and "Restart anyway"; following restarts nothing and the
// load goes on to ready (one systemctl restart on the host).
import assert from 'node:assert/strict';
import { isRestartConfirm, printResultsDir, simForLoad, useScenario } from './scenario';
import { clickDialogButton, resetRecorders, runCommand, screenshot, waitForDialog, waitForStatus } from './workbench';

after(printResultsDir);

describe('e2e: the restart rule — a restart during a load follows it', function () {
  const LOAD_SECONDS = 60;
  const scenario = useScenario({
    name: 'restart-rule',
    gpuHost: { sim: simForLoad(LOAD_SECONDS) },
    hostKeyPolicy: 'strict',
  });

  it('Restart during "loading NN%": Follow this load / Restart anyway; Follow -> the same load to ready, one systemctl restart', async () => {
    const { page, host } = scenario();
    const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    await resetRecorders(page);
    const before = await restarts();
    await runCommand(page, 'Restart Kimi service');
    const confirm = await waitForDialog(page);
    assert.ok(isRestartConfirm(confirm), `confirmation dialog: ${JSON.stringify(confirm)}`);
    await clickDialogButton(page, 'Restart');
    await waitForStatus(page, /^Kimi: loading [1-9]\d*%/, { timeoutMs: 90_000, failOn: /failed|unreachable|ready/ });

    await runCommand(page, 'Restart Kimi service');
    const choice = await waitForDialog(page);
    await screenshot(page, 'restart-rule-follow-or-restart');
    console.log(`    dialog: ${JSON.stringify(choice)}`);
    assert.match(choice.message, /is loading already/);
    assert.deepEqual(
      ['Follow this load', 'Restart anyway'].filter((b) => choice.buttons.includes(b)),
      ['Follow this load', 'Restart anyway'],
      `buttons: ${JSON.stringify(choice.buttons)}`,
    );
    assert.match(choice.detail, /already loading/);
    await clickDialogButton(page, 'Follow this load');

    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000, failOn: /failed|unreachable|not watched/ });
    assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));
  });
});
