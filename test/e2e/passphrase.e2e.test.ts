// A key with a passphrase and no agent, over the system OpenSSH (kimiService.ssh.client
// "openssh"): OpenSSH's own question comes through the packaged askpass helper into a VS Code
// input box that hides what is typed; a wrong passphrase is asked again, the right one logs in
// once and the restart reaches ready. The passphrase is in no log.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isRestartConfirm, printResultsDir, simForLoad, useScenario } from './scenario';
import {
  answerInputBox,
  clickDialogButton,
  formatStatusHistory,
  resetRecorders,
  runCommand,
  screenshot,
  waitForDialog,
  waitForInputBox,
  waitForStatus,
} from './workbench';

after(printResultsDir);

describe('e2e: an SSH key passphrase asked in VS Code over OpenSSH', function () {
  const scenario = useScenario({
    name: 'passphrase',
    gpuHost: { sim: simForLoad(8) },
    hostKeyPolicy: 'strict',
    settings: (host) => ({
      'kimiService.ssh.client': 'openssh',
      'kimiService.servers': [
        {
          name: 'sim',
          host: host.sshHost,
          port: host.sshPort,
          username: host.username,
          identityFile: host.encryptedClientKeyPath,
          unit: host.unitName,
          url: host.serverUrl,
        },
      ],
    }),
  });

  it("OpenSSH's question in an input box; wrong, asked again; right, one login and ready", async () => {
    const { page, host, cs } = scenario();
    const logins = () => host.sshdLog().filter((l) => /Accepted publickey for /.test(l)).length;
    const before = logins();
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    await resetRecorders(page);
    // The command logs in first (to read the unit's state), then asks to confirm the restart.
    await runCommand(page, 'Restart Kimi service');

    const first = await waitForInputBox(page, { text: /passphrase/i, timeoutMs: 90_000 });
    await screenshot(page, 'passphrase-asked');
    assert.match(first.title, /Kimi Service: .* asks/, JSON.stringify(first));
    assert.match(first.prompt, /Enter passphrase for key '.*client_ed25519_enc'/, JSON.stringify(first));
    assert.equal(first.password, true, 'what is typed is hidden');
    await answerInputBox(page, 'not the passphrase');

    const again = await waitForInputBox(page, { text: /passphrase/i, timeoutMs: 30_000 });
    assert.match(again.prompt, /Enter passphrase for key/, JSON.stringify(again));
    await answerInputBox(page, host.encryptedKeyPassphrase);
    const confirm = await waitForDialog(page, { timeoutMs: 60_000 });
    assert.ok(isRestartConfirm(confirm), JSON.stringify(confirm));
    await clickDialogButton(page, 'Restart');

    const history = await waitForStatus(page, /^Kimi: ready/, {
      timeoutMs: 180_000,
      failOn: /failed|unreachable|refused/,
    });
    console.log(`    status bar texts:\n${formatStatusHistory(history)}`);
    assert.equal(logins() - before, 1, `one login:\n${host.sshdLog().join('\n')}`);
    const [logFile] = cs.findLogFiles(/Kimi Service\.log$/);
    assert.ok(logFile, 'the output channel was written');
    const log = readFileSync(logFile, 'utf8');
    assert.match(log, /OpenSSH/);
    assert.ok(!log.includes(host.encryptedKeyPassphrase), 'the passphrase is in no log line');
    assert.ok(!log.includes('not the passphrase'), 'nor the wrong one');
  });
});
