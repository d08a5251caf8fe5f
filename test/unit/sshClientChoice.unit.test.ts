import { strict as assert } from 'node:assert';
import { parseSettings } from '../../src/config/parseSettings';
import { statusTooltip } from '../../src/fronts/vscode/status/statusBarText';
import { initialState } from '../../src/monitor/state/loadState';
import { sshClientLine } from '../../src/present/sshClientWords';
import { chooseClient, clientSettingFor, type ClientFacts } from '../../src/transport/openssh/chooseClient';
import { isUserOnly } from '../../src/config/userOnlySettings';
import { nodeServerProfile } from '../../src/fleet/sessions/multiNodeSession';
import { NO_CLIENT_FACTS } from '../util/clientFacts';

const none: ClientFacts = NO_CLIENT_FACTS;

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

describe("a server's own ssh.client", () => {
  const entry = { name: 'gpu1', host: 'gpu1', unit: 'kimi.service' };

  it('is read from the entry, absent when not set, and only its three values are accepted', () => {
    const parsed = parseSettings({
      servers: [
        { ...entry, ssh: { client: 'openssh' } },
        { ...entry, name: 'gpu2' },
      ],
    });
    assert.ok(parsed.ok);
    assert.equal(parsed.settings.servers[0]!.sshClient, 'openssh');
    assert.equal(parsed.settings.servers[1]!.sshClient, undefined);
    assert.ok(!('sshClient' in parsed.settings.servers[1]!), 'no key at all: profiles compare by their JSON');
    const bad = parseSettings({ servers: [{ ...entry, ssh: { client: 'putty' } }] });
    assert.equal(bad.ok, false);
    const unknown = parseSettings({ servers: [{ ...entry, ssh: { client: 'auto', proxyCommand: 'nc %h %p' } }] });
    assert.equal(unknown.ok, false, 'nothing else under ssh: no way to hand a command to a login');
  });

  it('a multi-node server gives it to every node', () => {
    const parsed = parseSettings({
      servers: [
        {
          name: 'big',
          ssh: { client: 'ssh2' },
          nodes: [
            { host: 'gpu-a', unit: 'kimi.service' },
            { host: 'gpu-b', unit: 'kimi.service' },
          ],
        },
      ],
    });
    assert.ok(parsed.ok);
    const server = parsed.settings.servers[0]!;
    assert.equal(server.sshClient, 'ssh2');
    for (const node of server.nodes!) assert.equal(nodeServerProfile(server, node).sshClient, 'ssh2');
  });

  it('wins over kimiService.ssh.client, and says where the choice came from', () => {
    assert.deepEqual(clientSettingFor({ sshClient: 'openssh' }, 'ssh2'), { setting: 'openssh', where: 'server' });
    assert.deepEqual(clientSettingFor({}, 'ssh2'), { setting: 'ssh2', where: 'global' });
    const { setting, where } = clientSettingFor({ sshClient: 'openssh' }, 'auto');
    const choice = chooseClient(setting, undefined, 'linux', where);
    assert.equal(choice.reason, 'the server\'s ssh.client is "openssh"');
    assert.equal(sshClientLine(choice), 'SSH: OpenSSH client (set for this server)');
    const auto = clientSettingFor({ sshClient: 'auto' }, 'ssh2');
    assert.equal(chooseClient(auto.setting, { ...none, agentCertificates: 1 }, 'linux', auto.where).client, 'openssh');
  });

  it('ssh2 set by hand keeps ssh2, and carries what the host asks that ssh2 cannot do (for a refusal to say)', () => {
    const forced = chooseClient('ssh2', { ...none, gssapiAuthentication: true }, 'linux', 'server');
    assert.equal(forced.client, 'ssh2');
    assert.deepEqual(forced.ssh2Gaps, ['GSSAPIAuthentication yes (ssh2 has no Kerberos)']);
    assert.equal(chooseClient('ssh2', none, 'linux').ssh2Gaps, undefined);
    assert.equal(chooseClient('openssh', { ...none, gssapiAuthentication: true }, 'linux').ssh2Gaps, undefined);
  });

  it('is a user value only, like every login setting: it lives in kimiService.servers', () => {
    assert.ok(isUserOnly('servers'));
    assert.ok(isUserOnly('ssh.client'));
  });
});
