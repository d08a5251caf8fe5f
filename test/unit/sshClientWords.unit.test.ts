import { strict as assert } from 'node:assert';
import { parseSettings } from '../../src/config/parseSettings';
import { statusTooltip } from '../../src/fronts/vscode/statusBarText';
import { initialState } from '../../src/monitor/loadState';
import { sshClientLine } from '../../src/present/sshClientWords';
import { chooseClient, type ClientFacts } from '../../src/transport/openssh/chooseClient';

const none: ClientFacts = {
  certificateFiles: [],
  certificatesBesideIdentities: [],
  agentCertificates: 0,
  markerLines: [],
  gssapiAuthentication: false,
  matchExec: false,
};

const lineFor = (facts: Partial<ClientFacts> | undefined, setting: 'auto' | 'ssh2' | 'openssh' = 'auto') =>
  sshClientLine(chooseClient(setting, facts === undefined ? undefined : { ...none, ...facts }, 'linux'));

describe('the SSH client line of the tooltip', () => {
  it('names the client and the short reason the choice was made for', () => {
    assert.equal(lineFor({ agentCertificates: 2 }), 'SSH: OpenSSH client (certificate in the agent)');
    assert.equal(lineFor({}), 'SSH: built-in client');
    assert.equal(
      lineFor({ certificateFiles: ['/h/a-cert.pub'], certificatesBesideIdentities: ['/h/b-cert.pub'] }),
      'SSH: OpenSSH client (certificate file)',
      'one reason said once, however many files',
    );
    assert.equal(
      lineFor({ markerLines: ['/kh line 2 (@cert-authority)', '/kh line 5 (@revoked)'], gssapiAuthentication: true }),
      'SSH: OpenSSH client (host certificate authority in known_hosts, revoked keys in known_hosts, Kerberos ticket)',
    );
    assert.equal(lineFor({ pkcs11Provider: '/usr/lib/p11.so' }), 'SSH: OpenSSH client (PKCS#11 token)');
    assert.equal(lineFor({}, 'openssh'), 'SSH: OpenSSH client (set by kimiService.ssh.client)');
    assert.equal(lineFor({ agentCertificates: 1 }, 'ssh2'), 'SSH: built-in client (set by kimiService.ssh.client)');
    assert.equal(lineFor(undefined), 'SSH: built-in client (no OpenSSH client found)');
    assert.equal(
      sshClientLine(chooseClient('auto', { ...none, agentCertificates: 1 }, 'win32')),
      "SSH: built-in client (Windows' OpenSSH cannot share one login)",
    );
  });

  it('the tooltip shows it under the server line, watched or not, and not at all before a session exists', () => {
    const parsed = parseSettings({ servers: [{ name: 'gpu1', host: 'gpu1.example.org', unit: 'kimi.service' }] });
    assert.ok(parsed.ok);
    const server = parsed.settings.servers[0]!;
    const sshClient = chooseClient('auto', { ...none, agentCertificates: 1 }, 'linux');
    const now = Date.UTC(2026, 11, 6, 12, 0, 0);
    for (const watching of [true, false]) {
      const lines = statusTooltip({ server, state: initialState(now), watching, sshClient }, now).split('\n');
      assert.match(lines[0]!, /^Server: gpu1 \(gpu1\.example\.org\)/);
      assert.equal(lines[1], 'SSH: OpenSSH client (certificate in the agent)');
    }
    const before = statusTooltip({ server, state: undefined, watching: false }, now);
    assert.doesNotMatch(before, /SSH:/);
  });
});
