// A host that logs its users in with Kerberos (sshd with GSSAPI, a throwaway realm on loopback,
// a ticket from kinit): the packaged extension picks the system OpenSSH by itself for the ticket,
// logs in once with gssapi-with-mic, no key involved, and restarts the server to ready from the palette.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kerberosMissing, startKdc, type Kdc } from '../gpu-host/kerberos';
import { printResultsDir, restartFromPalette, simForLoad, useScenario } from './scenario';
import { formatStatusHistory, screenshot, waitForStatus } from './workbench';

after(printResultsDir);

describe('e2e: a Kerberos login (GSSAPI) from a ticket of kinit', function () {
  const dir = mkdtempSync(join(tmpdir(), 'kimi-e2e-krb-'));
  const f = (name: string) => join(dir, name);
  let kdc: Kdc | undefined;
  before(async () => {
    const missing = kerberosMissing();
    if (missing) throw new Error(`Cannot stand up a Kerberos realm: ${missing}`);
    kdc = await startKdc(f('kdc'));
    // The service principal is host/<HostName as the client writes it> (krb5.conf: no DNS).
    kdc.addToKeytab('host/127.0.0.1', f('host.keytab'));
    kdc.addToKeytab('root', f('client.keytab'));
    kdc.kinit('root', f('client.keytab'), f('ccache'));
  });
  after(async () => {
    await kdc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const scenario = useScenario({
    name: 'kerberos-login',
    gpuHost: {
      sim: simForLoad(8),
      sshdConfig: () => ['GSSAPIAuthentication yes', 'GSSAPIStrictAcceptorCheck no'],
      sshdEnv: () => ({ KRB5_CONFIG: kdc!.env.KRB5_CONFIG, KRB5_KTNAME: `FILE:${f('host.keytab')}` }),
    },
    hostKeyPolicy: 'strict',
    // The user's ticket, where kinit put it; no key file in the entry.
    env: () => ({ KRB5_CONFIG: kdc!.env.KRB5_CONFIG, KRB5CCNAME: `FILE:${f('ccache')}` }),
    settings: (host) => ({
      'kimiService.servers': [
        {
          name: 'sim',
          host: '127.0.0.1',
          port: host.sshPort,
          username: 'root',
          unit: host.unitName,
          url: host.serverUrl,
        },
      ],
    }),
  });

  it('OpenSSH is chosen for the ticket, one gssapi-with-mic login, and the restart reaches ready', async () => {
    const { page, host, cs } = scenario();
    const gssapiLogins = () =>
      host.sshdLog().filter((l) => new RegExp(`Accepted gssapi-with-mic for root .*: root@${kdc!.realm}`).test(l))
        .length;
    await restartFromPalette(page);
    const history = await waitForStatus(page, /^Kimi: ready/, {
      timeoutMs: 180_000,
      failOn: /failed|unreachable|refused/,
    });
    await screenshot(page, 'kerberos-ready');
    console.log(`    status bar texts:\n${formatStatusHistory(history)}`);
    assert.equal(gssapiLogins(), 1, `one Kerberos login:\n${host.sshdLog().join('\n')}`);
    assert.equal(host.handshakes(), 0, 'no key login but the harness’s own');
    const [logFile] = cs.findLogFiles(/Kimi Service\.log$/);
    assert.ok(logFile, 'the output channel was written');
    assert.match(readFileSync(logFile, 'utf8'), /SSH client: openssh \(auto: [^)]*GSSAPIAuthentication yes/);
  });
});
