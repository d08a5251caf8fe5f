/**
 * kimiService.hostKeyPolicy over the OpenSSH client, end to end against a real sshd: the
 * transport the extension builds (createTransport, `ssh.client` "openssh"), the known-hosts file
 * the user set, and the question the policy asks. Every case runs over ssh2 too, and the refusals
 * must be word for word the same over both clients. A changed key is then a reinstalled host: a
 * new sshd with a new key on the same address.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HostKeyPolicy } from '../../src/config/config';
import { parseSettings } from '../../src/config/parseSettings';
import { createTransport, type SessionUi, type UnknownHostKey } from '../../src/fleet/sessions/sessionFactory';
import type { Transport } from '../../src/transport/transport';
import { startLoopbackSshd, type LoopbackSshd } from '../gpu-host/loopbackSshd';
import { rejection } from './loginHosts';

const CLIENTS = ['openssh', 'ssh2'] as const;
type Client = (typeof CLIENTS)[number];

const fingerprintOf = (knownHostsLine: string) =>
  /SHA256:\S+/.exec(
    execFileSync('ssh-keygen', ['-lf', '-'], { input: knownHostsLine, encoding: 'utf8', stdio: 'pipe' }),
  )![0];

const keyOf = (knownHostsLine: string) => knownHostsLine.trim().split(/\s+/).slice(-2).join(' ');
/**
 * The key `file` records for [127.0.0.1]:port, as OpenSSH itself finds it (`ssh-keygen -F`): the
 * line may be hashed (HashKnownHosts yes in Debian's /etc/ssh/ssh_config, which OpenSSH applies).
 */
const recordedKey = (file: string, port: number) => {
  const found = execFileSync('ssh-keygen', ['-F', `[127.0.0.1]:${port}`, '-f', file], { encoding: 'utf8' });
  const lines = found.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  assert.equal(lines.length, 1, found);
  return keyOf(lines[0]!);
};

describe('host-key policies over the OpenSSH client, against a real sshd', function () {
  this.timeout(180_000);
  let tmp: string;
  let identity: string;
  let sshd: LoopbackSshd;
  let run = 0;
  const open: Transport[] = [];

  async function startSshd(port?: number): Promise<LoopbackSshd> {
    return startLoopbackSshd({
      dir: path.join(tmp, `sshd-${++run}`),
      lines: ['PubkeyAuthentication yes', `AuthorizedKeysFile ${identity}.pub`, 'PermitRootLogin prohibit-password'],
      ...(port !== undefined ? { port } : {}),
    });
  }

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openssh-hostkeys-'));
    identity = path.join(tmp, 'id');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', identity], { stdio: 'pipe' });
    sshd = await startSshd();
  });

  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });

  after(async () => {
    await sshd?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The extension's transport for the sshd under `policy`, the known-hosts file the user set, the questions recorded. */
  async function connectTo(client: Client, policy: HostKeyPolicy, knownHostsFile: string, trust = false) {
    const settings = parseSettings({
      servers: [
        { name: 'hk', host: '127.0.0.1', port: sshd.port, username: 'root', identityFile: identity, unit: 'sim' },
      ],
      knownHostsFile,
      hostKeyPolicy: policy,
      'ssh.client': client,
    });
    if (!settings.ok) throw new Error(settings.errors.join('\n'));
    const asked: UnknownHostKey[] = [];
    const logs: string[] = [];
    const ui: SessionUi = {
      trustUnknownHostKey: async (key) => {
        asked.push(key);
        return trust;
      },
      requestPassphrase: async () => undefined,
    };
    const t = await createTransport(settings.settings.servers[0]!, settings.settings, ui, (level, m) =>
      logs.push(`${level}: ${m}`),
    );
    open.push(t);
    return { t, asked, logs };
  }

  const accepted = () => sshd.count(/Accepted publickey for root from 127\.0\.0\.1/);
  const knownHosts = (name: string, text = '') => {
    const file = path.join(tmp, `${name}-${++run}`);
    fs.writeFileSync(file, text);
    return file;
  };
  /** The message with the per-test file names made alike, to compare the two clients' words. */
  const words = (e: Error, file: string) => e.message.split(file).join('<known_hosts>');

  it('strict: an unknown key is refused with its SHA256 fingerprint, nothing written, no login', async () => {
    const said: Partial<Record<Client, string>> = {};
    for (const client of CLIENTS) {
      const file = knownHosts('strict');
      const before = accepted();
      const { t, asked, logs } = await connectTo(client, 'strict', file);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'host-key-unknown', `${client}: ${err.message}`);
      assert.ok(err.message.includes(`ssh-ed25519 ${fingerprintOf(sshd.knownHostsLine)}`), `${client}: ${err.message}`);
      assert.match(err.message, /was not trusted \(kimiService\.hostKeyPolicy\)/);
      assert.ok(
        logs.some((l) => l.includes(`Refused the unknown host key ${fingerprintOf(sshd.knownHostsLine)}`)),
        logs.join('\n'),
      );
      assert.deepEqual(asked, []);
      assert.equal(fs.readFileSync(file, 'utf8'), '');
      assert.equal(accepted(), before, `${client} logged in`);
      said[client] = words(err, file);
    }
    assert.equal(said.openssh, said.ssh2);
  });

  it('accept-new: the key is written to the file the user set and the login goes on; a changed key is then refused', async () => {
    const said: Partial<Record<Client, string>> = {};
    const old = sshd;
    const oldFingerprint = fingerprintOf(old.knownHostsLine);
    const files: Partial<Record<Client, string>> = {};
    for (const client of CLIENTS) {
      const file = (files[client] = knownHosts('accept-new'));
      const before = accepted();
      const { t, asked } = await connectTo(client, 'accept-new', file);
      assert.equal((await t.exec('echo $((6*7))')).stdout, '42\n');
      assert.deepEqual(asked, []);
      assert.equal(accepted(), before + 1);
      assert.equal(recordedKey(file, old.port), keyOf(old.knownHostsLine), client);
    }
    // The host is reinstalled: the same address, a new host key.
    await old.stop();
    sshd = await startSshd(old.port);
    const newFingerprint = fingerprintOf(sshd.knownHostsLine);
    assert.notEqual(newFingerprint, oldFingerprint);
    for (const client of CLIENTS) {
      const file = files[client]!;
      const kept = fs.readFileSync(file, 'utf8');
      const { t, asked } = await connectTo(client, 'accept-new', file);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'host-key-changed', `${client}: ${err.message}`);
      assert.ok(
        err.message.includes(newFingerprint) && err.message.includes(oldFingerprint),
        `${client}: both fingerprints in ${err.message}`,
      );
      assert.deepEqual(asked, []);
      assert.equal(fs.readFileSync(file, 'utf8'), kept, 'known_hosts left as it was');
      assert.equal(accepted(), 0, `${client} logged in to the new host`);
      said[client] = words(err, file);
    }
    assert.equal(said.openssh, said.ssh2);
  });

  it('ask: the question shows the fingerprint and the file; Trust writes the key and connects, No refuses', async () => {
    const fingerprint = fingerprintOf(sshd.knownHostsLine);
    const said: Partial<Record<Client, string>> = {};
    for (const client of CLIENTS) {
      const refused = knownHosts('ask-no');
      const no = await connectTo(client, 'ask', refused, false);
      const err = await rejection(no.t.connect());
      assert.equal(err.kind, 'host-key-unknown', `${client}: ${err.message}`);
      assert.equal(no.asked.length, 1);
      assert.equal(fs.readFileSync(refused, 'utf8'), '');
      said[client] = words(err, refused);

      const file = knownHosts('ask-yes');
      const before = accepted();
      const yes = await connectTo(client, 'ask', file, true);
      assert.equal((await yes.t.exec('echo yes')).stdout, 'yes\n');
      assert.equal(yes.asked.length, 1, `${client} asked once`);
      const q = yes.asked[0]!;
      assert.deepEqual(
        {
          host: q.host,
          port: q.port,
          keyType: q.keyType,
          fingerprint: q.fingerprint,
          knownHostsFile: q.knownHostsFile,
        },
        { host: '127.0.0.1', port: sshd.port, keyType: 'ssh-ed25519', fingerprint, knownHostsFile: file },
        client,
      );
      assert.equal(recordedKey(file, sshd.port), keyOf(sshd.knownHostsLine), client);
      assert.equal(accepted(), before + 1);
    }
    assert.equal(said.openssh, said.ssh2);
  });

  it('ask: a changed key is refused with both fingerprints, without asking (under every policy)', async () => {
    const other = path.join(tmp, 'other_host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other], { stdio: 'pipe' });
    const recorded = `[127.0.0.1]:${sshd.port} ${fs.readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')}`;
    const said: Partial<Record<Client, string>> = {};
    for (const client of CLIENTS) {
      const file = knownHosts('ask-changed', `${recorded}\n`);
      const before = accepted();
      const { t, asked } = await connectTo(client, 'ask', file, true);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'host-key-changed', `${client}: ${err.message}`);
      assert.ok(err.message.includes(fingerprintOf(sshd.knownHostsLine)), err.message);
      assert.ok(err.message.includes(fingerprintOf(recorded)), err.message);
      assert.match(err.message, new RegExp(`ssh-keygen -R '\\[127\\.0\\.0\\.1\\]:${sshd.port}'`));
      assert.deepEqual(asked, [], `${client} asked about a changed key`);
      assert.equal(fs.readFileSync(file, 'utf8'), `${recorded}\n`);
      assert.equal(accepted(), before);
      said[client] = words(err, file);
    }
    assert.equal(said.openssh, said.ssh2);
  });
});
