/**
 * Logins with one-time codes beyond the single host (ssh-login.int.test.ts): a ProxyJump whose
 * jump host and GPU host both ask (one question each, saying which host asks), a password login
 * (sshd hands the password to PAM, pam_oath checks it), and sshd's LoginGraceTime running out
 * while the question is open. Real sshds with PAM on loopback (test/gpu-host/pamOath.ts).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SshTransport } from '../../src/transport/ssh/sshTransport';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import type { OneTimeCodeOptions } from '../gpu-host/pamOath';
import { waitFor } from '../util/waitFor';
import {
  answering,
  endedBeforeLogin,
  freshCode,
  rejection,
  SECRET,
  sshdCount,
  transportTo,
  USER,
  wrongCode,
} from './loginHosts';

describe('SSH logins with one-time codes: ProxyJump, passwords, LoginGraceTime (sshd + PAM + pam_oath)', function () {
  this.timeout(180_000);
  const hosts: GpuHost[] = [];
  const opened: SshTransport[] = [];
  let dir: string;
  const hostWith = async (codes: Partial<OneTimeCodeOptions> = {}): Promise<GpuHost> => {
    const h = await startGpuHost({
      shards: 1,
      users: [USER],
      oneTimeCodes: { users: [USER], secretHex: SECRET, ...codes },
    });
    hosts.push(h);
    return h;
  };
  const open = (t: SshTransport) => (opened.push(t), t);

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-login-hops-'));
  });
  afterEach(async () => {
    while (opened.length) opened.pop()!.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
    await Promise.all(hosts.splice(0).map((h) => h.stop()));
  });

  it('ProxyJump through a second such host: one question per hop, each saying which host asks', async () => {
    const [jump, target] = await Promise.all([hostWith(), hostWith()]);
    const codes = { jump: await freshCode(jump), target: await freshCode(target) };
    const a = answering((q) => (q.jumpFor ? codes.jump : codes.target));
    const t = open(transportTo(dir, target, a.login, { jumps: [jump] }));
    assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
    assert.deepEqual(
      a.asked.map((q) => [q.alias, q.jumpFor, q.host]),
      [
        ['bastion', 'gpu', `${USER}@${jump.sshHost}:${jump.sshPort}`],
        ['gpu', undefined, `${USER}@${target.sshHost}:${target.sshPort}`],
      ],
    );
    assert.deepEqual(a.verdicts, [true, true]);
    for (const h of [jump, target]) assert.equal(sshdCount(h, /Accepted keyboard-interactive\/pam for kimi/), 1);
  });

  it('a wrong code at the jump host: refused there, the GPU host never asked', async () => {
    const [jump, target] = await Promise.all([hostWith(), hostWith()]);
    const a = answering(() => wrongCode());
    const err = await rejection(open(transportTo(dir, target, a.login, { jumps: [jump] })).exec('id -un'));
    assert.match(
      err.message,
      /^Login refused by kimi@127\.0\.0\.1:\d+ \(jump host for gpu\): it did not accept the code/,
    );
    assert.deepEqual(
      a.asked.map((q) => q.alias),
      ['bastion'],
    );
    await waitFor(() => endedBeforeLogin(jump) > 0, { message: 'the jump host logged the end of the connection' });
    assert.equal(sshdCount(jump, /Failed keyboard-interactive\/pam for kimi/), 1);
    assert.equal(sshdCount(target, /for kimi/), 0, 'the GPU host saw no login');
  });

  it('a password login (sshd hands the password to PAM): asked once as a password, a wrong one not retried', async () => {
    const pw = await hostWith({ then: 'password' });
    const wrong = answering(() => wrongCode());
    const err = await rejection(open(transportTo(dir, pw, wrong.login)).exec('id -un'));
    assert.match(
      err.message,
      /^Login refused by kimi@127\.0\.0\.1:\d+: it did not accept the password given to "Password for kimi@/,
    );
    await waitFor(() => endedBeforeLogin(pw) > 0, { message: 'sshd logged the end of the connection' });
    assert.equal(sshdCount(pw, /Failed password for kimi/), 1, pw.sshdLog().join('\n'));
    assert.deepEqual(
      wrong.asked.map((q) => [q.method, q.prompts[0]!.kind]),
      [['password', 'password']],
    );
    assert.deepEqual(wrong.verdicts, [false]);

    const code = await freshCode(pw);
    const right = answering(() => code);
    assert.equal((await open(transportTo(dir, pw, right.login)).exec('id -un')).stdout, `${USER}\n`);
    assert.equal(right.asked.length, 1);
    assert.deepEqual(right.verdicts, [true]);
    assert.equal(sshdCount(pw, /Accepted password for kimi/), 1);
  });

  it("sshd's LoginGraceTime runs out while the question is open: said so, the late answer is not sent", async () => {
    const slow = await hostWith({ loginGraceTimeSeconds: 3 });
    // the user answers only after sshd gave up on the login
    const a = answering(async () => {
      await waitFor(() => sshdCount(slow, /Timeout before authentication/) > 0, {
        timeoutMs: 60_000,
        message: 'sshd logged its LoginGraceTime timeout',
      });
      return freshCode(slow);
    });
    const err = await rejection(open(transportTo(dir, slow, a.login)).exec('id -un'));
    assert.equal(err.kind, 'auth');
    assert.match(
      err.message,
      /^Login refused: kimi@127\.0\.0\.1:\d+ closed the connection while its question was open \(sshd's LoginGraceTime/,
    );
    assert.equal(a.asked.length, 1);
    assert.equal(sshdCount(slow, /(Failed|Accepted) keyboard-interactive\/pam for kimi/), 0);
  });
});
