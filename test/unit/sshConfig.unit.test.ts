import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TransportError } from '../../src/transport/transport';
import { expandTokens } from '../../src/transport/ssh/sshPaths';
import { loadSshTarget, resolveSshTarget } from '../../src/transport/ssh/sshConfig';
import { parseJumpHop } from '../../src/transport/ssh/sshJumpHop';

const env = { homeDir: '/home/ann', localUser: 'ann' };

const CONFIG = `
# lab hosts
Host gpu7
  HostName 10.0.0.7
  User root
  Port 2222
  IdentityFile ~/.ssh/gpu_ed25519
  IdentityFile %d/.ssh/%r@%h
  ProxyJump bastion

Host bastion
  HostName bastion.example
  User jump
  IdentityFile ~/.ssh/bastion

Host outer
  HostName outer.example
  User o

Host inner
  HostName inner.internal
  ProxyJump outer

Host deep
  HostName deep.internal
  ProxyJump inner,ops@[fd00::9]:2022

Host tmpl
  HostName %h.lab.example

Host loop1
  ProxyJump loop2
Host loop2
  ProxyJump loop1

Host nojump
  ProxyJump none

Host *
  User fallback
  ServerAliveInterval 10
`;

describe('ssh config resolution', () => {
  it('applies HostName, User, Port, IdentityFile list with ~ and tokens', () => {
    const t = resolveSshTarget({ host: 'gpu7' }, CONFIG, env);
    assert.equal(t.alias, 'gpu7');
    assert.equal(t.hostName, '10.0.0.7');
    assert.equal(t.port, 2222);
    assert.equal(t.username, 'root');
    assert.deepEqual(t.identityFiles, ['/home/ann/.ssh/gpu_ed25519', '/home/ann/.ssh/root@10.0.0.7']);
    assert.ok(t.identityFilesConfigured);
  });

  it('explicit settings win over the config', () => {
    const t = resolveSshTarget({ host: 'gpu7', port: 22, username: 'svc', identityFile: '~/keys/k' }, CONFIG, env);
    assert.equal(t.port, 22);
    assert.equal(t.username, 'svc');
    assert.deepEqual(t.identityFiles, ['/home/ann/keys/k']);
  });

  it('resolves each ProxyJump hop through the config', () => {
    const t = resolveSshTarget({ host: 'gpu7' }, CONFIG, env);
    assert.equal(t.jumps.length, 1);
    const j = t.jumps[0];
    assert.equal(j.hostName, 'bastion.example');
    assert.equal(j.username, 'jump');
    assert.equal(j.port, 22);
    assert.deepEqual(j.identityFiles, ['/home/ann/.ssh/bastion']);
  });

  it('chains hops: a first hop with its own ProxyJump is dialed through it; user@[v6]:port hops', () => {
    const t = resolveSshTarget({ host: 'deep' }, CONFIG, env);
    assert.deepEqual(
      t.jumps.map((j) => `${j.username}@${j.hostName}:${j.port}`),
      ['o@outer.example:22', 'fallback@inner.internal:22', 'ops@fd00::9:2022'],
    );
  });

  it('unknown hosts: the name itself, Host * defaults, OpenSSH default key files', () => {
    const t = resolveSshTarget({ host: 'gpu9.example' }, CONFIG, env);
    assert.equal(t.hostName, 'gpu9.example');
    assert.equal(t.username, 'fallback');
    assert.equal(t.port, 22);
    assert.equal(t.identityFilesConfigured, false);
    assert.deepEqual(t.identityFiles, [
      '/home/ann/.ssh/id_ed25519',
      '/home/ann/.ssh/id_ecdsa',
      '/home/ann/.ssh/id_rsa',
    ]);
    assert.deepEqual(t.jumps, []);
  });

  it('no config at all: local user, port 22', () => {
    const t = resolveSshTarget({ host: '10.1.2.3' }, '', env);
    assert.equal(t.username, 'ann');
    assert.equal(t.port, 22);
  });

  it('%h in HostName, ProxyJump none, loops refused', () => {
    assert.equal(resolveSshTarget({ host: 'tmpl' }, CONFIG, env).hostName, 'tmpl.lab.example');
    assert.deepEqual(resolveSshTarget({ host: 'nojump' }, CONFIG, env).jumps, []);
    assert.throws(() => resolveSshTarget({ host: 'loop1' }, CONFIG, env), /loop/);
  });

  it('rejects an invalid Port', () => {
    assert.throws(() => resolveSshTarget({ host: 'x' }, 'Host x\n  Port abc\n', env), /Invalid Port/);
  });

  it('parses jump hops', () => {
    assert.deepEqual(parseJumpHop('bastion'), { host: 'bastion', user: undefined, port: undefined });
    assert.deepEqual(parseJumpHop('me@b:2200'), { host: 'b', user: 'me', port: 2200 });
    assert.deepEqual(parseJumpHop('ssh://me@b:2200'), { host: 'b', user: 'me', port: 2200 });
    assert.deepEqual(parseJumpHop('[::1]:22'), { host: '::1', user: undefined, port: 22 });
    assert.throws(() => parseJumpHop('b:99999'));
  });

  it('expands tokens', () => {
    assert.equal(
      expandTokens('%u-%r@%h:%p %%', { host: 'h', port: 2, remoteUser: 'r', localUser: 'u', homeDir: '/d' }),
      'u-r@h:2 %',
    );
  });

  it('loadSshTarget reads the file; a missing file is no config', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sshcfg-'));
    try {
      const none = await loadSshTarget({ host: 'gpu7' }, { homeDir: home, localUser: 'ann' });
      assert.equal(none.hostName, 'gpu7');
      fs.mkdirSync(path.join(home, '.ssh'));
      fs.writeFileSync(path.join(home, '.ssh', 'config'), CONFIG);
      const t = await loadSshTarget({ host: 'gpu7' }, { homeDir: home, localUser: 'ann' });
      assert.equal(t.hostName, '10.0.0.7');
      assert.equal(t.identityFiles[0], path.join(home, '.ssh', 'gpu_ed25519'));
      await assert.rejects(
        loadSshTarget({ host: 'loop1' }, { homeDir: home }),
        (e: TransportError) => e.kind === 'config' && /loop/.test(e.message),
      );
      // An unreadable config (here a directory) is a config error the user reads with its path, not a raw EISDIR.
      const dir = path.join(home, '.ssh');
      await assert.rejects(
        loadSshTarget({ host: 'gpu7' }, { homeDir: home, configPath: dir }),
        (e: unknown) => e instanceof TransportError && e.kind === 'config' && e.message.startsWith(`${dir}: `),
      );
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
