// A host that takes only OpenSSH certificates (TrustedUserCAKeys, AuthorizedKeysFile none) and
// proves itself with a host certificate, known only by an @cert-authority line: the packaged
// extension picks the system OpenSSH by itself, logs in once with the certificate beside the key
// and restarts the server to ready from the palette, under the strict host-key policy.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printResultsDir, restartFromPalette, simForLoad, useScenario } from './scenario';
import { formatStatusHistory, screenshot, waitForStatus } from './workbench';

after(printResultsDir);

const keygen = (...args: string[]) => execFileSync('ssh-keygen', ['-q', ...args], { stdio: 'pipe' });

describe('e2e: a certificate-only host checked by its certificate authority', function () {
  const dir = mkdtempSync(join(tmpdir(), 'kimi-e2e-cert-'));
  const f = (name: string) => join(dir, name);
  const caKnownHosts = f('known_hosts_ca');
  before(() => {
    keygen('-t', 'ed25519', '-N', '', '-C', 'user-ca', '-f', f('user_ca'));
    keygen('-t', 'ed25519', '-N', '', '-C', 'host-ca', '-f', f('host_ca'));
    // The user's key and, beside it, the certificate OpenSSH picks up by its name (id-cert.pub).
    keygen('-t', 'ed25519', '-N', '', '-f', f('id'));
    keygen('-s', f('user_ca'), '-I', 'e2e-cert', '-n', 'root', '-V', '-5m:+1h', f('id.pub'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const scenario = useScenario({
    name: 'certificate-login',
    gpuHost: {
      sim: simForLoad(8),
      sshdConfig: ({ sshDir, hostKey }) => {
        copyFileSync(f('user_ca.pub'), join(sshDir, 'user_ca.pub'));
        keygen('-s', f('host_ca'), '-h', '-I', 'sim-host', '-n', '127.0.0.1,localhost', `${hostKey}.pub`);
        // The harness's own checks log in with its key: a certificate beside it lets them in.
        keygen('-s', f('user_ca'), '-I', 'harness', '-n', 'root', join(sshDir, 'harness_ed25519.pub'));
        return [
          `TrustedUserCAKeys ${join(sshDir, 'user_ca.pub')}`,
          'AuthorizedKeysFile none',
          `HostCertificate ${hostKey}-cert.pub`,
        ];
      },
    },
    hostKeyPolicy: 'strict',
    settings: (host) => {
      writeFileSync(
        caKnownHosts,
        `@cert-authority [127.0.0.1]:${host.sshPort} ${readFileSync(f('host_ca.pub'), 'utf8')}`,
      );
      return {
        'kimiService.knownHostsFile': caKnownHosts,
        'kimiService.servers': [
          {
            name: 'sim',
            host: '127.0.0.1',
            port: host.sshPort,
            username: 'root',
            identityFile: f('id'),
            unit: host.unitName,
            url: host.serverUrl,
          },
        ],
      };
    },
  });

  it('OpenSSH is chosen by itself, one certificate login, and the restart reaches ready', async () => {
    const { page, host, cs } = scenario();
    const certLogins = () =>
      host.sshdLog().filter((l) => /Accepted publickey for root .*ED25519-CERT .*ID e2e-cert /.test(l)).length;
    await restartFromPalette(page);
    const history = await waitForStatus(page, /^Kimi: ready/, {
      timeoutMs: 180_000,
      failOn: /failed|unreachable|refused/,
    });
    await screenshot(page, 'certificate-ready');
    console.log(`    status bar texts:\n${formatStatusHistory(history)}`);
    assert.ok(
      history.some((h) => /^Kimi: loading \d+%/.test(h.text)),
      'the load was followed',
    );
    assert.equal(certLogins(), 1, `one login with the certificate:\n${host.sshdLog().join('\n')}`);
    const [logFile] = cs.findLogFiles(/Kimi Service\.log$/);
    assert.ok(logFile, 'the output channel was written');
    const log = readFileSync(logFile, 'utf8');
    assert.match(log, /SSH client: openssh \(auto: [^)]*certificate/i, 'the log says which client and why');
    assert.doesNotMatch(log, /authorized_keys/, 'no word of authorized_keys to a certificate user');
  });
});
