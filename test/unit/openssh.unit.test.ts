import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import { chooseClient, type ClientFacts } from '../../src/transport/openssh/chooseClient';
import { certificateProblem, parseCertificateListing } from '../../src/transport/openssh/certificates';
import { all, first, parseEffectiveConfig, yes } from '../../src/transport/openssh/effectiveConfig';
import {
  changedHostKey,
  classifyOpenSshFailure,
  unknownHostKeyRefusal,
} from '../../src/transport/openssh/opensshErrors';
import type { AuthDiagnosis } from '../../src/present/words/opensshWords';
import { isMuxFailure } from '../../src/transport/openssh/muxProcess';
import { parseKeyscan } from '../../src/transport/openssh/unknownHostKey';
import { OpenSshTransport } from '../../src/transport/openssh/opensshTransport';
import { TransportError } from '../../src/transport/transport';
import { waitFor } from '../util/waitFor';
import { NO_CLIENT_FACTS } from '../util/clientFacts';

const none: ClientFacts = NO_CLIENT_FACTS;

describe('the SSH client choice', () => {
  it('auto is ssh2 when nothing needs OpenSSH', () => {
    assert.equal(chooseClient('auto', none, 'linux').client, 'ssh2');
  });

  const needs: [string, Partial<ClientFacts>, RegExp][] = [
    ['a CertificateFile', { certificateFiles: ['/h/.ssh/id-cert.pub'] }, /CertificateFile \/h\/\.ssh\/id-cert\.pub/],
    ['a certificate beside the identity', { certificatesBesideIdentities: ['/h/id_ed25519-cert.pub'] }, /beside/],
    ['a certificate in the agent', { agentCertificates: 1 }, /1 certificate in ssh-agent/],
    ['an @cert-authority line', { markerLines: ['/kh line 3 (@cert-authority)'] }, /\/kh line 3 \(@cert-authority\)/],
    ['GSSAPI', { gssapiAuthentication: true }, /GSSAPIAuthentication yes/],
    ['PKCS#11', { pkcs11Provider: '/usr/lib/softhsm/libsofthsm2.so' }, /PKCS11Provider/],
    ['Match exec', { matchExec: true }, /Match exec/],
    ['KnownHostsCommand', { knownHostsCommand: '/bin/kh %H' }, /KnownHostsCommand/],
    ['a config ssh2 cannot read', { ssh2ConfigError: 'bad line' }, /bad line/],
  ];
  for (const [what, facts, reason] of needs) {
    it(`auto is OpenSSH for ${what}, and says why`, () => {
      const c = chooseClient('auto', { ...none, ...facts }, 'linux');
      assert.equal(c.client, 'openssh');
      assert.match(c.reason, reason);
    });
  }

  it('a setting other than auto wins, and auto without an OpenSSH client is ssh2', () => {
    assert.equal(chooseClient('ssh2', { ...none, gssapiAuthentication: true }).client, 'ssh2');
    assert.equal(chooseClient('openssh', none).client, 'openssh');
    assert.equal(chooseClient('auto', undefined).client, 'ssh2');
  });

  it('auto on Windows is ssh2 (no ControlMaster there), and says what ssh2 may not do', () => {
    const c = chooseClient('auto', { ...none, gssapiAuthentication: true }, 'win32');
    assert.equal(c.client, 'ssh2');
    assert.match(c.reason, /no ControlMaster.*GSSAPI/);
  });

  it('"openssh" set on Windows is refused when connecting, saying why and what to use, before any ssh runs', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'openssh-win32-'));
    const t = new OpenSshTransport({
      host: { host: 'gpu1' },
      knownHostsFile: path.join(parent, 'known_hosts'),
      decideUnknownHostKey: async () => 'reject',
      platform: 'win32',
      // Not a program: had the transport run ssh (ssh -G first), the refusal would say it is not installed.
      sshPath: path.join(parent, 'no-ssh-here'),
      controlParent: parent,
    });
    try {
      await assert.rejects(t.connect(), (err: unknown) => {
        assert.ok(err instanceof TransportError && err.kind === 'config', String(err));
        assert.match(
          err.message,
          /kimiService\.ssh\.client is "openssh".*OpenSSH of Windows has no ControlMaster.*use "ssh2"/,
        );
        return true;
      });
      assert.equal(t.state.kind, 'down');
    } finally {
      t.dispose();
      await waitFor(() => fs.readdirSync(parent).length === 0, { message: 'the control folder removed' });
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

  it('kimiService.ssh.client defaults to auto and takes only its three values', () => {
    const ok = parseSettings({ servers: [] });
    assert.ok(ok.ok && ok.settings.sshClient === 'auto');
    const set = parseSettings({ 'ssh.client': 'openssh' });
    assert.ok(set.ok && set.settings.sshClient === 'openssh');
    assert.equal(parseSettings({ 'ssh.client': 'putty' }).ok, false);
  });
});

describe('ssh -G output', () => {
  it('keeps every value of repeated keywords and reads yes/no', () => {
    const c = parseEffectiveConfig(
      'host gpu\nhostname 10.0.0.7\nidentityfile ~/.ssh/a\nidentityfile /k/b\ncertificatefile none\ngssapiauthentication yes\npubkeyauthentication true\n',
    );
    assert.equal(first(c, 'hostname'), '10.0.0.7');
    assert.deepEqual(all(c, 'identityfile'), ['~/.ssh/a', '/k/b']);
    assert.deepEqual(all(c, 'certificatefile'), []);
    assert.ok(yes(c, 'gssapiauthentication') && yes(c, 'pubkeyauthentication') && !yes(c, 'batchmode'));
  });
});

const listing = (valid: string, principals: string[]) =>
  [
    '/h/id-cert.pub:',
    '        Type: ssh-ed25519-cert-v01@openssh.com user certificate',
    '        Public key: ED25519-CERT SHA256:cj89MfKe8TJtky6hGKyZCyg1qHuWqZS8gn+kngHzZz4',
    '        Signing CA: ED25519 SHA256:xVUfY7xn5RIljPgiKFtRT+5Pbp2aQwh5Zs296o+sMR8 (using ssh-ed25519)',
    '        Key ID: "alice@corp"',
    '        Serial: 0',
    `        Valid: ${valid}`,
    '        Principals: ',
    ...principals.map((p) => `                ${p}`),
    '        Critical Options: (none)',
    '        Extensions: ',
    '                permit-pty',
  ].join('\n');

describe('user certificates (ssh-keygen -L)', () => {
  const now = new Date('2026-12-06T12:00:00');
  it('reads the validity and principals', () => {
    const c = parseCertificateListing(
      '/h/id-cert.pub',
      listing('from 2026-12-06T11:00:00 to 2026-12-06T13:00:00', ['root', 'kimi']),
    )!;
    assert.deepEqual(c.principals, ['root', 'kimi']);
    assert.equal(c.keyId, 'alice@corp');
    assert.equal(c.signingCa, 'ED25519 SHA256:xVUfY7xn5RIljPgiKFtRT+5Pbp2aQwh5Zs296o+sMR8');
    assert.equal(certificateProblem(c, 'kimi', now), undefined);
  });
  it('says expired, not yet valid, and another principal', () => {
    const expired = parseCertificateListing(
      '/c',
      listing('from 2026-12-06T10:00:00 to 2026-12-06T11:59:00', ['kimi']),
    )!;
    assert.match(certificateProblem(expired, 'kimi', now)!, /expired at .*Valid/);
    const future = parseCertificateListing('/c', listing('from 2026-12-07T10:00:00 to 2026-12-08T11:59:00', ['kimi']))!;
    assert.match(certificateProblem(future, 'kimi', now)!, /not valid before/);
    const other = parseCertificateListing('/c', listing('forever', ['bob']))!;
    assert.match(certificateProblem(other, 'kimi', now)!, /principals bob, not for the user kimi/);
    const any = parseCertificateListing('/c', listing('forever', []))!;
    assert.equal(certificateProblem(any, 'kimi', now), undefined);
  });
});

describe("OpenSSH's refusals in the user's words", () => {
  const empty: AuthDiagnosis = { certificateProblems: [], certificates: [], lockedKeys: [] };
  const who = 'kimi@127.0.0.1:2222';
  const denied = 'kimi@127.0.0.1: Permission denied (publickey).';

  it('a plain key: authorized_keys', () => {
    const e = classifyOpenSshFailure(denied, { who, diagnosis: empty });
    assert.equal(e.kind, 'auth');
    assert.match(e.message, /authorized_keys/);
  });
  it('only a code or a password left (the key taken): an interactive login, never authorized_keys', () => {
    for (const methods of ['keyboard-interactive', 'password', 'keyboard-interactive,password']) {
      const log = `kimi@127.0.0.1: Permission denied (${methods}).`;
      const batch = classifyOpenSshFailure(log, { who, diagnosis: empty });
      assert.equal(batch.kind, 'auth');
      assert.match(
        batch.message,
        /^kimi@127\.0\.0\.1:2222 needs an interactive login \(.*: a one-time code or a password\), and nobody can answer it here/,
      );
      assert.ok(batch.message.includes(`(${methods.replace(',', ', ')}:`), batch.message);
      const asked = classifyOpenSshFailure(log, { who, diagnosis: empty, prompts: true });
      assert.match(asked.message, /did not accept the answers given to its questions.*NumberOfPasswordPrompts/);
      for (const e of [batch, asked]) assert.doesNotMatch(e.message, /authorized_keys/);
    }
    // A key could still have done it: the key's words.
    assert.match(
      classifyOpenSshFailure('kimi@h: Permission denied (publickey,password).', { who }).message,
      /authorized_keys/,
    );
  });
  it('an expired certificate: the reason, never authorized_keys', () => {
    const e = classifyOpenSshFailure(denied, {
      who,
      diagnosis: { ...empty, certificateProblems: ['the certificate /c expired at 2026-12-06T11:59:00.000Z'] },
    });
    assert.match(e.message, /expired/);
    assert.doesNotMatch(e.message, /authorized_keys/);
  });
  it('a valid certificate refused: the CA, never authorized_keys', () => {
    const e = classifyOpenSshFailure(denied, { who, diagnosis: { ...empty, certificates: ['/c'] } });
    assert.match(e.message, /TrustedUserCAKeys/);
    assert.doesNotMatch(e.message, /authorized_keys/);
  });
  it('no Kerberos ticket: run kinit', () => {
    const e = classifyOpenSshFailure('kimi@h: Permission denied (gssapi-with-mic,publickey).', {
      who,
      diagnosis: { ...empty, gssapi: { hasTicket: false } },
    });
    assert.match(e.message, /run kinit/);
  });
  it('a token that wanted its PIN: ssh-add -s with the provider, and the missing agent named', () => {
    const lib = '/usr/lib/softhsm/libsofthsm2.so';
    const e = classifyOpenSshFailure(`pin required\n${denied}`, { who, diagnosis: { ...empty, pkcs11Provider: lib } });
    assert.equal(e.kind, 'auth');
    assert.match(e.message, /needs its PIN.*BatchMode.*ssh-add -s \/usr\/lib\/softhsm\/libsofthsm2\.so/);
    assert.match(e.message, /names no agent.*IdentityAgent/);
    assert.doesNotMatch(e.message, /authorized_keys/);
    const withAgent = classifyOpenSshFailure(`pin required\n${denied}`, {
      who,
      diagnosis: { ...empty, pkcs11Provider: lib, agentSocket: '/run/a.sock' },
    });
    assert.match(withAgent.message, /The agent this host uses: \/run\/a\.sock/);
  });
  it('a token key the agent holds, or no PIN asked: the key was refused, not a PIN', () => {
    const lib = '/usr/lib/softhsm/libsofthsm2.so';
    const held = { ...empty, pkcs11Provider: lib, agentSocket: '/run/a.sock', tokenKeysInAgent: true };
    for (const [log, diagnosis] of [
      [`pin required\n${denied}`, held],
      [denied, { ...empty, pkcs11Provider: lib }],
    ] as const) {
      const e = classifyOpenSshFailure(log, { who, diagnosis });
      assert.doesNotMatch(e.message, /PIN/);
      assert.match(e.message, /authorized_keys.*ssh-keygen -D \/usr\/lib\/softhsm\/libsofthsm2\.so/);
    }
  });
  it('a locked key: load it into ssh-agent', () => {
    const e = classifyOpenSshFailure(denied, { who, diagnosis: { ...empty, lockedKeys: ['/k'] } });
    assert.match(e.message, /\/k needs a passphrase.*ssh-agent/);
  });
  it('network faults keep their kinds', () => {
    assert.equal(
      classifyOpenSshFailure('ssh: connect to host 127.0.0.1 port 1: Connection refused', { who }).kind,
      'refused',
    );
    assert.equal(
      classifyOpenSshFailure('ssh: Could not resolve hostname nohost: Name or service not known', { who }).kind,
      'dns',
    );
    assert.equal(
      classifyOpenSshFailure('ssh: connect to host 10.9.9.9 port 22: Connection timed out', { who }).kind,
      'timeout',
    );
  });
  it('reads an unknown and a changed host key', () => {
    assert.deepEqual(
      unknownHostKeyRefusal(
        'No ED25519 host key is known for [127.0.0.1]:59701 and you have requested strict checking.\nHost key verification failed.',
      ),
      { keyType: 'ED25519', name: '[127.0.0.1]:59701' },
    );
    const changed = changedHostKey(
      [
        '@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @',
        'The fingerprint for the ED25519 key sent by the remote host is',
        'SHA256:8J0nmBUxdUcHp5SPiSXnlGsjHAmIBqwcccfwO6PqS1w.',
        'Offending ED25519 key in /tmp/kh3:1',
        'Host key for [127.0.0.1]:59701 has changed and you have requested strict checking.',
        'Host key verification failed.',
      ].join('\n'),
    )!;
    assert.equal(changed.offered, 'SHA256:8J0nmBUxdUcHp5SPiSXnlGsjHAmIBqwcccfwO6PqS1w');
    assert.deepEqual(changed.offending, [{ file: '/tmp/kh3', line: 1 }]);
    assert.equal(changed.name, '[127.0.0.1]:59701');
  });
  it('tells a client that found no master from a command that exited 255', () => {
    assert.ok(isMuxFailure(255, 'kex_exchange_identification: Connection closed by remote host\n'));
    assert.ok(!isMuxFailure(255, ''));
    assert.ok(!isMuxFailure(0, 'kex_exchange_identification'));
  });
  it('reads ssh-keyscan', () => {
    const k = parseKeyscan(
      '# 127.0.0.1:22 SSH-2.0-OpenSSH_9.2\n[127.0.0.1]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==\n',
    )!;
    assert.equal(k.keyType, 'ssh-ed25519');
    assert.ok(k.blob.length > 0);
  });
});
