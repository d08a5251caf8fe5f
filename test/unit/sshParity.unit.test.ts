/**
 * The pure parts of "connect like OpenSSH": paths and tokens (platform injected, so the Windows
 * and macOS rules run here on Linux), agent choice per platform, Include expansion, unsupported
 * directives, ProxyCommand spawning and exit messages, public halves of identity files.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BaseAgent,
  utils as ssh2Utils,
  type IdentityCallback,
  type ParsedKey,
  type SignCallback,
  type SigningRequestOptions,
} from 'ssh2';
import {
  publicKeyFromLine,
  publicKeyFromOpenSshPrivate,
  publicKeyOf,
  readIdentityPublicKey,
} from '../../src/transport/ssh/identityFiles';
import { proxyCommandSpawn, proxyExitError } from '../../src/transport/ssh/proxyCommand';
import {
  agentCandidates,
  SelectedAgent,
  selectIdentities,
  WINDOWS_AGENT_PIPE,
  type AgentCandidate,
} from '../../src/transport/ssh/sshAgent';
import { loadSshTarget, resolveSshTarget } from '../../src/transport/ssh/sshConfig';
import { unevaluatedMatchCriteria, unsupportedDirectives } from '../../src/transport/ssh/sshDirectives';
import {
  collectConfigFiles,
  expandIncludes,
  globSegmentMatches,
  hostLineMatches,
  MAX_INCLUDE_DEPTH,
  type ConfigFiles,
} from '../../src/transport/ssh/sshInclude';
import {
  expandConfigPath,
  expandTilde,
  expandTokens,
  expandUserPath,
  expandWindowsEnv,
  passwdHome,
  TOKENS,
  type PathContext,
  type TokenValues,
} from '../../src/transport/ssh/sshPaths';

const linux: PathContext = {
  platform: 'linux',
  homeDir: '/home/ann',
  localUser: 'ann',
  env: { SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1', XDG_RUNTIME_DIR: '/run/user/1000' },
  userHome: (n) => ({ bob: '/srv/home/bob', root: '/root' })[n],
  localHost: 'laptop.lan',
};
const mac: PathContext = {
  ...linux,
  platform: 'darwin',
  homeDir: '/Users/ann',
  userHome: (n) => (n === 'bob' ? '/Users/bob' : undefined),
};
const win: PathContext = {
  platform: 'win32',
  homeDir: 'C:\\Users\\ann',
  localUser: 'ann',
  env: { USERPROFILE: 'C:\\Users\\ann', ProgramData: 'C:\\ProgramData' },
  localHost: 'DESKTOP-1',
};
const tokens: TokenValues = {
  host: '10.0.0.7',
  port: 2222,
  remoteUser: 'root',
  localUser: 'ann',
  homeDir: '/home/ann',
  alias: 'gpu7',
  localHost: 'laptop.lan',
};

describe('ssh paths (platform injected)', () => {
  it('~, ~/x, ~user/x on Linux and macOS; unknown users are an error', () => {
    assert.equal(expandTilde('~', linux), '/home/ann');
    assert.equal(expandTilde('~/.ssh/id', linux), '/home/ann/.ssh/id');
    assert.equal(expandTilde('~ann/.ssh/id', linux), '/home/ann/.ssh/id');
    assert.equal(expandTilde('~bob/.ssh/id', linux), '/srv/home/bob/.ssh/id');
    assert.equal(expandTilde('~root', linux), '/root');
    assert.equal(expandTilde('/abs/~x', linux), '/abs/~x');
    assert.throws(() => expandTilde('~nobody/x', linux), /No such user "nobody"/);
    assert.equal(expandTilde('~/.ssh/id', mac), '/Users/ann/.ssh/id');
    assert.equal(expandTilde('~bob/k', mac), '/Users/bob/k');
  });

  it('Windows: ~ with either slash, drive letters, %USERPROFILE%; ~user refused', () => {
    assert.equal(expandTilde('~\\.ssh\\id_ed25519', win), 'C:\\Users\\ann\\.ssh\\id_ed25519');
    assert.equal(expandTilde('~/.ssh/id_ed25519', win), 'C:\\Users\\ann\\.ssh\\id_ed25519');
    assert.throws(() => expandTilde('~bob/.ssh/id', win), /not supported on Windows/);
    assert.equal(expandWindowsEnv('%USERPROFILE%\\.ssh\\known_hosts', win), 'C:\\Users\\ann\\.ssh\\known_hosts');
    assert.equal(expandWindowsEnv('%userprofile%\\.ssh', win), 'C:\\Users\\ann\\.ssh', 'names are case-insensitive');
    assert.equal(expandWindowsEnv('%NOPE%\\x', win), '%NOPE%\\x');
    assert.equal(expandWindowsEnv('%USERPROFILE%/x', linux), '%USERPROFILE%/x', 'only on Windows');
    assert.equal(expandUserPath('%USERPROFILE%\\.ssh\\known_hosts', win), 'C:\\Users\\ann\\.ssh\\known_hosts');
    assert.equal(expandUserPath('~/.ssh/known_hosts', win), 'C:\\Users\\ann\\.ssh\\known_hosts');
    const t = { ...tokens, homeDir: win.homeDir };
    assert.equal(expandConfigPath('C:\\keys\\gpu', win, t, 'IdentityFile'), 'C:\\keys\\gpu');
    assert.equal(expandConfigPath('D:/keys/gpu', win, t, 'IdentityFile'), 'D:\\keys\\gpu');
    assert.equal(
      expandConfigPath('id_gpu', win, t, 'IdentityFile'),
      'C:\\Users\\ann\\.ssh\\id_gpu',
      'relative: under %USERPROFILE%\\.ssh',
    );
    assert.equal(expandConfigPath('%d\\.ssh\\%r@%h', win, t, 'IdentityFile'), 'C:\\Users\\ann\\.ssh\\root@10.0.0.7');
    assert.equal(expandConfigPath('"%USERPROFILE%\\my keys\\k"', win, t, 'IdentityFile'), 'C:\\Users\\ann\\my keys\\k');
    assert.equal(
      expandConfigPath('\\\\.\\pipe\\openssh-ssh-agent', win, t, 'IdentityAgent'),
      '\\\\.\\pipe\\openssh-ssh-agent',
    );
  });

  it('tokens %d %u %h %r %p %n %l %L %% and ${VAR}; a token the directive does not take is an error', () => {
    assert.equal(
      expandTokens('%d/%u/%r@%h:%p/%n/%l/%L/%%', tokens),
      '/home/ann/ann/root@10.0.0.7:2222/gpu7/laptop.lan/laptop/%',
    );
    assert.equal(
      expandTokens('${XDG_RUNTIME_DIR}/agent', tokens, TOKENS.path, 'IdentityAgent', linux.env),
      '/run/user/1000/agent',
    );
    assert.throws(
      () => expandTokens('${NOPE}/x', tokens, TOKENS.path, 'IdentityFile', linux.env),
      /IdentityFile: environment variable \$\{NOPE\} is not set/,
    );
    assert.throws(
      () => expandTokens('%d/%C', tokens, TOKENS.path, 'IdentityFile'),
      /IdentityFile: token %C is not supported/,
    );
    assert.throws(() => expandTokens('nc %d %p', tokens, TOKENS.proxyCommand, 'ProxyCommand'), /token %d/);
    assert.equal(
      expandTokens('nc %h %p # %r %n %%', tokens, TOKENS.proxyCommand, 'ProxyCommand'),
      'nc 10.0.0.7 2222 # root gpu7 %',
    );
    assert.equal(
      expandTokens('${NOT_EXPANDED} %h', tokens, TOKENS.proxyCommand, 'ProxyCommand'),
      '${NOT_EXPANDED} 10.0.0.7',
      'no env given: left to the shell',
    );
    assert.equal(
      expandConfigPath('~/.ssh/%r@%h-%p', linux, tokens, 'IdentityFile'),
      '/home/ann/.ssh/root@10.0.0.7-2222',
    );
    assert.equal(expandConfigPath('keys/gpu', linux, tokens, 'IdentityFile'), '/home/ann/.ssh/keys/gpu');
  });

  it('reads home directories from /etc/passwd text', () => {
    const text = 'root:x:0:0:root:/root:/bin/bash\nbob:x:1001:1001:Bob,,,:/srv/home/bob:/bin/sh\nbroken\n';
    assert.equal(passwdHome(text, 'bob'), '/srv/home/bob');
    assert.equal(passwdHome(text, 'root'), '/root');
    assert.equal(passwdHome(text, 'bo'), undefined);
  });
});

/**
 * A fresh ed25519 public key as an OpenSSH line, from node:crypto: ssh2's generateKeyPairSync
 * drops a leading zero byte of the key, so about 1 of its keys in 256 does not parse.
 */
function ed25519PublicLine(): string {
  const x = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
  const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(Buffer.from(x, 'base64url'))]);
  return `ssh-ed25519 ${blob.toString('base64')}`;
}

describe('ssh agent choice (platform injected)', () => {
  const paths = (c: AgentCandidate[]) => c.map((x) => (x.kind === 'pageant' ? 'pageant' : `${x.source}:${x.path}`));

  it('Linux and macOS: IdentityAgent, else $SSH_AUTH_SOCK, else none', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      assert.deepEqual(paths(agentCandidates({ platform, env: { SSH_AUTH_SOCK: '/tmp/a' } })), [
        'SSH_AUTH_SOCK:/tmp/a',
      ]);
      assert.deepEqual(paths(agentCandidates({ platform, env: {} })), []);
      assert.deepEqual(
        paths(
          agentCandidates({
            platform,
            env: { SSH_AUTH_SOCK: '/tmp/a' },
            identityAgent: '/Users/ann/.secretive/socket.ssh',
          }),
        ),
        ['IdentityAgent:/Users/ann/.secretive/socket.ssh'],
      );
      assert.deepEqual(
        paths(agentCandidates({ platform, env: { SSH_AUTH_SOCK: '/tmp/a' }, identityAgent: 'none' })),
        [],
      );
    }
  });

  it('Windows: $SSH_AUTH_SOCK if set, then the OpenSSH agent pipe, then Pageant; IdentityAgent alone when set', () => {
    assert.deepEqual(paths(agentCandidates({ platform: 'win32', env: {} })), [
      `Windows OpenSSH agent:${WINDOWS_AGENT_PIPE}`,
      'pageant',
    ]);
    assert.equal(WINDOWS_AGENT_PIPE, String.raw`\\.\pipe\openssh-ssh-agent`);
    assert.deepEqual(
      paths(agentCandidates({ platform: 'win32', env: { SSH_AUTH_SOCK: 'C:\\Users\\ann\\agent.sock' } })),
      ['SSH_AUTH_SOCK:C:\\Users\\ann\\agent.sock', `Windows OpenSSH agent:${WINDOWS_AGENT_PIPE}`, 'pageant'],
    );
    assert.deepEqual(paths(agentCandidates({ platform: 'win32', env: { SSH_AUTH_SOCK: WINDOWS_AGENT_PIPE } })), [
      `SSH_AUTH_SOCK:${WINDOWS_AGENT_PIPE}`,
      'pageant',
    ]);
    assert.deepEqual(paths(agentCandidates({ platform: 'win32', env: {}, identityAgent: '\\\\.\\pipe\\1password' })), [
      'IdentityAgent:\\\\.\\pipe\\1password',
    ]);
    assert.deepEqual(paths(agentCandidates({ platform: 'win32', env: {}, identityAgent: 'none' })), []);
  });

  describe('SelectedAgent', () => {
    let keys: ParsedKey[];
    before(() => {
      keys = ['a', 'b', 'c'].map(() => {
        const k = ssh2Utils.parseKey(ed25519PublicLine());
        assert.ok(!(k instanceof Error) && !Array.isArray(k), String(k));
        return k;
      });
    });

    class FakeAgent extends BaseAgent<ParsedKey> {
      signed: string[] = [];
      constructor(
        private readonly ks: ParsedKey[] | Error,
        private readonly signError?: Error,
      ) {
        super();
      }
      getIdentities(cb: IdentityCallback<ParsedKey>): void {
        setImmediate(() => (this.ks instanceof Error ? cb(this.ks) : cb(undefined, this.ks)));
      }
      sign(pubKey: ParsedKey, _data: Buffer, options: SigningRequestOptions | SignCallback, cb?: SignCallback): void {
        const done = (typeof options === 'function' ? options : cb)!;
        this.signed.push(pubKey.getPublicSSH().toString('base64'));
        setImmediate(() => (this.signError ? done(this.signError) : done(undefined, Buffer.from('sig'))));
      }
    }

    const identities = (a: SelectedAgent) =>
      new Promise<ParsedKey[]>((resolve, reject) =>
        a.getIdentities((err, ks) => (err ? reject(err) : resolve((ks ?? []) as ParsedKey[]))),
      );

    it('falls through agents that do not answer (pipe down → Pageant) and says which answered', async () => {
      const pageant = new FakeAgent(keys);
      const created: string[] = [];
      const a = new SelectedAgent(agentCandidates({ platform: 'win32', env: {} }), {
        create: (c) => {
          created.push(c.kind);
          return c.kind === 'pageant' ? pageant : new FakeAgent(new Error('Failed to connect to agent'));
        },
      });
      assert.equal((await identities(a)).length, 3);
      assert.deepEqual(created, ['socket', 'pageant']);
      assert.match(a.summary, /^Pageant SHA256:/);
      assert.equal(a.offered, 3);
    });

    it('no agent answers: no keys (not an error), and the reasons', async () => {
      const a = new SelectedAgent([{ kind: 'socket', path: '/tmp/gone', source: 'SSH_AUTH_SOCK' }], {
        create: () => new FakeAgent(new Error('Failed to connect to agent')),
      });
      assert.deepEqual(await identities(a), []);
      assert.equal(a.summary, 'ssh-agent /tmp/gone (SSH_AUTH_SOCK): Failed to connect to agent');
    });

    it('IdentitiesOnly: only the agent keys whose public key is configured', async () => {
      assert.deepEqual(selectIdentities(keys, undefined), keys);
      assert.deepEqual(selectIdentities(keys, [keys[2].getPublicSSH()]), [keys[2]]);
      const a = new SelectedAgent([{ kind: 'socket', path: '/s', source: 'IdentityAgent' }], {
        create: () => new FakeAgent(keys),
        allowed: [keys[1].getPublicSSH()],
      });
      const got = await identities(a);
      assert.deepEqual(got, [keys[1]]);
      assert.match(a.summary, /IdentitiesOnly: 1 of 3 keys/);
      assert.ok(a.offeredKey(keys[1].getPublicSSH()));
      assert.ok(!a.offeredKey(keys[0].getPublicSSH()), 'not offered: its key file may still be tried');
    });

    it('a key the agent could not sign with is not "offered" any more (its file may be unlocked)', async () => {
      const a = new SelectedAgent([{ kind: 'socket', path: '/s', source: 'IdentityAgent' }], {
        create: () => new FakeAgent(keys, new Error('agent refused operation')),
      });
      await identities(a);
      assert.ok(a.offeredKey(keys[0].getPublicSSH()));
      const err = await new Promise<Error | null | undefined>((resolve) =>
        a.sign(keys[0], Buffer.from('x'), {}, (e) => resolve(e)),
      );
      assert.match(String(err), /refused/);
      assert.ok(!a.offeredKey(keys[0].getPublicSSH()));
    });
  });
});

describe('Include', () => {
  const files = (texts: Record<string, string>, globs: Record<string, string[]> = {}): ConfigFiles => ({
    texts: new Map(Object.entries(texts)),
    globs: new Map(Object.entries(globs)),
  });

  it('glob segments like glob(3)', () => {
    assert.ok(globSegmentMatches('10-gpu.conf', '*.conf'));
    assert.ok(!globSegmentMatches('.hidden.conf', '*.conf'));
    assert.ok(globSegmentMatches('.hidden.conf', '.*.conf'));
    assert.ok(globSegmentMatches('a1', 'a[0-9]'));
    assert.ok(!globSegmentMatches('ab', 'a[!b]'));
    assert.ok(globSegmentMatches('a.c', 'a?c'));
    assert.ok(!globSegmentMatches('a.conf.bak', '*.conf'));
    assert.ok(hostLineMatches(['gpu*', '!gpu9'], 'GPU7'));
    assert.ok(!hostLineMatches(['gpu*', '!gpu9'], 'gpu9'));
  });

  it('top level, with a glob relative to ~/.ssh, in lexical order; the lines after it stay global', () => {
    const main = 'Include conf.d/*.conf\nUser after-include\nHost gpu7\n  Port 2222\n';
    const f = files(
      {
        '/home/ann/.ssh/conf.d/10-gpu.conf': 'Host gpu7\n  HostName 10.0.0.7\n  User first\n',
        '/home/ann/.ssh/conf.d/20-more.conf': 'Host gpu7\n  User second\n  IdentityFile ~/.ssh/gpu\n',
      },
      { '/home/ann/.ssh/conf.d/*.conf': ['/home/ann/.ssh/conf.d/10-gpu.conf', '/home/ann/.ssh/conf.d/20-more.conf'] },
    );
    const t = resolveSshTarget({ host: 'gpu7' }, main, { ...linux, files: f });
    assert.equal(t.hostName, '10.0.0.7');
    assert.equal(t.username, 'first', 'first value wins, in include order');
    assert.equal(t.port, 2222);
    assert.deepEqual(t.identityFiles, ['/home/ann/.ssh/gpu']);
    const other = resolveSshTarget({ host: 'elsewhere' }, main, { ...linux, files: f });
    assert.equal(other.username, 'after-include', 'a global line after a top-level Include applies to every host');
  });

  it('inside a Host block: only for that host, and the block goes on after it', () => {
    const main = 'Host gpu*\n  Include gpu.conf\n  Port 2200\nHost *\n  User everyone\n';
    const f = files({ '/home/ann/.ssh/gpu.conf': 'User gpuuser\nHost gpu7\n  HostName 10.0.0.7\n' });
    const t = resolveSshTarget({ host: 'gpu7' }, main, { ...linux, files: f });
    assert.deepEqual([t.hostName, t.username, t.port], ['10.0.0.7', 'gpuuser', 2200]);
    const o = resolveSshTarget({ host: 'web1' }, main, { ...linux, files: f });
    assert.deepEqual([o.hostName, o.username, o.port], ['web1', 'everyone', 22]);
  });

  it('absolute and ~ paths, missing files ignored, nesting, loops refused, Include in Match noted', () => {
    const f = files({
      '/etc/ssh/extra.conf': 'Include ~/.ssh/nested\n',
      '/home/ann/.ssh/nested': 'Host x\n  User nested\n',
      '/home/ann/.ssh/loop': 'Include loop\n',
    });
    assert.equal(
      resolveSshTarget({ host: 'x' }, 'Include /etc/ssh/extra.conf /nope/missing\n', { ...linux, files: f }).username,
      'nested',
    );
    assert.throws(
      () => expandIncludes('Include loop\n', f, 'x', linux),
      new RegExp(`more than ${MAX_INCLUDE_DEPTH} levels`),
    );
    const r = expandIncludes('Match host x\n  Include nested\n', f, 'x', linux);
    assert.match(r.notes.join(), /Include inside a Match block is not supported/);
  });

  it('Windows: Include relative to %USERPROFILE%\\.ssh', () => {
    const f = files({ 'C:\\Users\\ann\\.ssh\\work.conf': 'Host w\n  HostName w.example\n' });
    assert.equal(resolveSshTarget({ host: 'w' }, 'Include work.conf\n', { ...win, files: f }).hostName, 'w.example');
  });

  it('the fs collector follows globs and nested Includes in a real folder', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sshinc-'));
    try {
      const ssh = path.join(home, '.ssh');
      fs.mkdirSync(path.join(ssh, 'conf.d'), { recursive: true });
      fs.writeFileSync(path.join(ssh, 'config'), 'Include conf.d/*\nHost *\n  User dflt\n');
      fs.writeFileSync(path.join(ssh, 'conf.d', 'b.conf'), 'Host gpu\n  Port 2201\n');
      fs.writeFileSync(path.join(ssh, 'conf.d', 'a.conf'), 'Include deeper\n'); // relative to ~/.ssh, as OpenSSH
      fs.writeFileSync(path.join(ssh, 'conf.d', '.hidden'), 'Host gpu\n  Port 9\n');
      fs.mkdirSync(path.join(ssh, 'conf.d', 'dir.conf'));
      fs.writeFileSync(path.join(ssh, 'deeper'), 'Host gpu\n  HostName 10.9.9.9\n');
      const ctx = { ...linux, homeDir: home, env: {} };
      const collected = await collectConfigFiles(fs.readFileSync(path.join(ssh, 'config'), 'utf8'), ctx);
      assert.deepEqual(collected.globs.get(path.join(ssh, 'conf.d', '*')), [
        path.join(ssh, 'conf.d', 'a.conf'),
        path.join(ssh, 'conf.d', 'b.conf'),
      ]);
      const t = await loadSshTarget({ host: 'gpu' }, { homeDir: home, localUser: 'ann', env: {} });
      assert.deepEqual([t.hostName, t.port, t.username], ['10.9.9.9', 2201, 'dflt']);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('~/.ssh/config directives', () => {
  const CONFIG = `
Host gpu7
  HostName 10.0.0.7
  User root
  IdentityFile ~/.ssh/gpu
  IdentitiesOnly yes
  IdentityAgent ~/.1password/agent.sock
  UserKnownHostsFile ~/.ssh/known_hosts.d/%h "~/.ssh/kh two"
  HashKnownHosts yes
  ConnectTimeout 7
  ServerAliveInterval 15
  ServerAliveCountMax 4
  LocalForward 8080 localhost:80
  ControlMaster auto
  ControlPath ~/.ssh/cm-%C
  CertificateFile ~/.ssh/gpu-cert.pub
  PKCS11Provider /usr/lib/opensc-pkcs11.so
  KexAlgorithms curve25519-sha256
  StrictHostKeyChecking accept-new

Host viaproxy
  HostName 10.1.0.1
  Port 2022
  User ops
  ProxyCommand ssh -W %h:%p -l %r -o Tag=%n bastion

Host pjfirst
  ProxyJump bastion
  ProxyCommand nc %h %p

Host pcfirst
  ProxyCommand nc %h %p
  ProxyJump bastion

Host pcnone
  ProxyCommand none

Host bastion
  HostName bastion.example
  ProxyCommand corkscrew proxy 8080 %h %p

Host chain
  ProxyJump bastion,viaproxy

Host agentenv
  IdentityAgent SSH_AUTH_SOCK
Host agentdollar
  IdentityAgent $XDG_RUNTIME_DIR
Host agentnone
  IdentityAgent none

Match host 10.2.*
  User matched
Match exec "test -f /x"
  User exec

Host badtimeout
  ConnectTimeout soon
`;

  it('applies the supported ones and names every other one that applies to the host', () => {
    const t = resolveSshTarget({ host: 'gpu7' }, CONFIG, linux);
    assert.equal(t.identitiesOnly, true);
    assert.equal(t.identityAgent, '/home/ann/.1password/agent.sock');
    assert.deepEqual(t.knownHostsFiles, ['/home/ann/.ssh/known_hosts.d/10.0.0.7', '/home/ann/.ssh/kh two']);
    assert.equal(t.hashKnownHosts, true);
    assert.equal(t.connectTimeoutMs, 7000);
    assert.equal(t.serverAliveIntervalMs, 15000);
    assert.equal(t.serverAliveCountMax, 4);
    const notes = t.configNotes!.join('; ');
    for (const name of [
      'LocalForward',
      'ControlMaster',
      'ControlPath',
      'CertificateFile',
      'PKCS11Provider',
      'KexAlgorithms',
      'StrictHostKeyChecking',
    ]) {
      assert.ok(notes.includes(name), `${name} named in: ${notes}`);
    }
    assert.match(notes, /StrictHostKeyChecking \(kimiService\.hostKeyPolicy decides\)/);
    assert.match(notes, /Match exec \(not evaluated/);
    for (const applied of ['HostName', 'IdentityFile', 'IdentitiesOnly', 'UserKnownHostsFile', 'ConnectTimeout']) {
      assert.ok(!notes.includes(applied), `${applied} is applied, not named`);
    }
  });

  it('nothing applied → no hop fields; an unrelated host is not told about gpu7 directives', () => {
    const t = resolveSshTarget({ host: 'plain' }, 'Host gpu7\n  LocalForward 1 x:1\n', linux);
    assert.deepEqual(t.configNotes, []);
    assert.equal(t.identitiesOnly, false);
    assert.equal(t.identityAgent, undefined);
    assert.equal(t.knownHostsFiles, undefined);
    assert.equal(t.proxyCommand, undefined);
  });

  it('ProxyCommand: tokens expanded; whichever of ProxyCommand/ProxyJump comes first wins', () => {
    const t = resolveSshTarget({ host: 'viaproxy' }, CONFIG, linux);
    assert.equal(t.proxyCommand, 'ssh -W 10.1.0.1:2022 -l ops -o Tag=viaproxy bastion');
    assert.deepEqual(t.jumps, []);
    const pj = resolveSshTarget({ host: 'pjfirst' }, CONFIG, linux);
    assert.equal(pj.proxyCommand, undefined);
    assert.deepEqual(
      pj.jumps.map((j) => j.hostName),
      ['bastion.example'],
    );
    assert.equal(
      pj.jumps[0].proxyCommand,
      'corkscrew proxy 8080 bastion.example 22',
      "the first hop's own ProxyCommand dials it",
    );
    const pc = resolveSshTarget({ host: 'pcfirst' }, CONFIG, linux);
    assert.equal(pc.proxyCommand, 'nc pcfirst 22');
    assert.deepEqual(pc.jumps, []);
    assert.equal(resolveSshTarget({ host: 'pcnone' }, CONFIG, linux).proxyCommand, undefined);
  });

  it('ProxyJump chains: later hops are reached through the previous one (their ProxyCommand does not apply)', () => {
    const t = resolveSshTarget({ host: 'chain' }, CONFIG, linux);
    assert.deepEqual(
      t.jumps.map((j) => [j.hostName, j.proxyCommand]),
      [
        ['bastion.example', 'corkscrew proxy 8080 bastion.example 22'],
        ['10.1.0.1', undefined],
      ],
    );
  });

  it('IdentityAgent: SSH_AUTH_SOCK, $VAR, none', () => {
    assert.equal(resolveSshTarget({ host: 'agentenv' }, CONFIG, linux).identityAgent, '/tmp/ssh-x/agent.1');
    assert.equal(resolveSshTarget({ host: 'agentdollar' }, CONFIG, linux).identityAgent, '/run/user/1000');
    assert.equal(resolveSshTarget({ host: 'agentnone' }, CONFIG, linux).identityAgent, 'none');
    assert.equal(resolveSshTarget({ host: 'agentenv' }, CONFIG, { ...linux, env: {} }).identityAgent, 'none');
  });

  it('Match host is evaluated on the HostName', () => {
    assert.equal(resolveSshTarget({ host: '10.2.3.4' }, CONFIG, linux).username, 'matched');
    assert.equal(
      resolveSshTarget({ host: 'x' }, 'Host x\n  HostName 10.2.0.1\nMatch host 10.2.*\n  User m\n', linux).username,
      'm',
    );
    assert.deepEqual(unevaluatedMatchCriteria(CONFIG), ['exec']);
  });

  it('invalid numbers are config errors', () => {
    assert.throws(() => resolveSshTarget({ host: 'badtimeout' }, CONFIG, linux), /Invalid ConnectTimeout "soon"/);
  });

  it('names directives with their OpenSSH spelling', () => {
    assert.deepEqual(
      unsupportedDirectives({ hostname: 'x', localforward: ['1 a:1'], usekeychain: 'yes', somethingnew: 'x' }),
      ['LocalForward (no forwards are opened)', 'UseKeychain', 'somethingnew'],
    );
  });

  it('Windows: identity files under %USERPROFILE%\\.ssh', () => {
    const t = resolveSshTarget(
      { host: 'w' },
      'Host w\n  IdentityFile ~/.ssh/id_w\n  UserKnownHostsFile %d/.ssh/kh\n',
      win,
    );
    assert.deepEqual(t.identityFiles, ['C:\\Users\\ann\\.ssh\\id_w']);
    assert.deepEqual(t.knownHostsFiles, ['C:\\Users\\ann\\.ssh\\kh']);
    const d = resolveSshTarget({ host: 'w2' }, '', win);
    assert.deepEqual(d.identityFiles, [
      'C:\\Users\\ann\\.ssh\\id_ed25519',
      'C:\\Users\\ann\\.ssh\\id_ecdsa',
      'C:\\Users\\ann\\.ssh\\id_rsa',
    ]);
  });
});

describe('ProxyCommand (pure parts)', () => {
  it('runs through /bin/sh with exec on POSIX, cmd.exe on Windows', () => {
    assert.deepEqual(proxyCommandSpawn('nc 10.0.0.7 22', 'linux'), {
      file: '/bin/sh',
      args: ['-c', 'exec nc 10.0.0.7 22'],
    });
    assert.deepEqual(proxyCommandSpawn('nc 10.0.0.7 22', 'darwin'), {
      file: '/bin/sh',
      args: ['-c', 'exec nc 10.0.0.7 22'],
    });
    assert.deepEqual(proxyCommandSpawn('ssh -W h:22 b', 'win32', { ComSpec: 'C:\\Windows\\system32\\cmd.exe' }), {
      file: 'C:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/s', '/c', '"ssh -W h:22 b"'],
      windowsVerbatimArguments: true,
    });
  });

  it('says why the proxy ended, and what kind of failure that is', () => {
    const e = proxyExitError('nc 10.0.0.7 22', {
      code: 1,
      signal: null,
      stderr: 'nc: connect to 10.0.0.7 port 22 (tcp) failed: Connection refused\n',
    });
    assert.equal(e.kind, 'refused');
    assert.equal(
      e.message,
      'ProxyCommand "nc 10.0.0.7 22" exited with code 1 before the SSH connection was made: nc: connect to 10.0.0.7 port 22 (tcp) failed: Connection refused',
    );
    assert.equal(
      proxyExitError('x', {
        code: 255,
        signal: null,
        stderr: 'ssh: Could not resolve hostname b: Name or service not known',
      }).kind,
      'dns',
    );
    assert.equal(
      proxyExitError('x', { code: 255, signal: null, stderr: 'Host key verification failed.' }).kind,
      'host-key-rejected',
    );
    assert.equal(
      proxyExitError('x', { code: 255, signal: null, stderr: 'root@b: Permission denied (publickey).' }).kind,
      'auth',
    );
    assert.equal(
      proxyExitError('x', { code: null, signal: 'SIGKILL', stderr: '' }).message,
      'ProxyCommand "x" was killed by SIGKILL before the SSH connection was made',
    );
  });
});

describe('public halves of identity files', () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'idpub-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('from FILE.pub, from an encrypted OpenSSH key without its passphrase, from a bare public key file', async () => {
    const enc = path.join(tmp, 'enc');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret words', '-C', 'c', '-f', enc]);
    const pubText = fs.readFileSync(`${enc}.pub`, 'utf8');
    const blob = Buffer.from(pubText.split(' ')[1], 'base64');
    assert.ok(publicKeyFromLine(pubText)!.equals(blob));
    assert.ok(
      publicKeyFromOpenSshPrivate(fs.readFileSync(enc, 'utf8'))!.equals(blob),
      'the clear header of an encrypted key',
    );
    assert.ok(publicKeyOf(fs.readFileSync(enc), undefined)!.equals(blob));
    assert.ok((await readIdentityPublicKey(enc))!.equals(blob));
    fs.rmSync(`${enc}.pub`);
    assert.ok((await readIdentityPublicKey(enc))!.equals(blob), 'no .pub: the header still tells');
    const pubOnly = path.join(tmp, 'only.pub');
    fs.writeFileSync(pubOnly, pubText);
    assert.ok((await readIdentityPublicKey(pubOnly))!.equals(blob));
    const pem = path.join(tmp, 'pem');
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '1024', '-m', 'PEM', '-N', '', '-f', pem]);
    fs.rmSync(`${pem}.pub`);
    assert.ok(await readIdentityPublicKey(pem), 'an unencrypted PEM key is parsed');
    assert.equal(await readIdentityPublicKey(path.join(tmp, 'missing')), undefined);
    assert.equal(publicKeyFromLine(`ssh-rsa ${pubText.split(' ')[1]}`), undefined, 'type and blob disagree');
  });
});
