import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import { askLogin } from '../../src/fronts/cli/prompt';
import { HandshakeDeadline } from '../../src/transport/ssh/handshake';
import { HopLogin } from '../../src/transport/ssh/interactiveLogin';
import {
  cleanServerText,
  nextLogin,
  noAnswerRefusal,
  promptKind,
  refusedRefusal,
  type HopLoginState,
  type LoginAnswer,
  type LoginQuestion,
} from '../../src/transport/ssh/loginPolicy';
import type { SshEndpoint, SshTarget } from '../../src/transport/ssh/sshTargetTypes';
import type { DialContext } from '../../src/transport/ssh/sshOptions';
import type { TransportError } from '../../src/transport/transport';

const fresh = (): HopLoginState => ({ keyboardInteractiveTried: false, passwordTried: false });
const WHO = 'kimi@gpu7:22';
const HINT = 'Use a terminal.';
/** ssh2's keyboard-interactive auth method as HopLogin hands it over: the server's prompts go to `prompt`. */
interface KeyboardInteractive {
  type: string;
  prompt(
    name: string,
    instructions: string,
    lang: string,
    prompts: { prompt: string; echo: boolean }[],
    finish: (answers: string[]) => void,
  ): void;
}

const OATH = "One-time password (OATH) for `kimi': ";

const question = (over: Partial<LoginQuestion> = {}): LoginQuestion => ({
  host: WHO,
  alias: 'gpu7',
  method: 'keyboard-interactive',
  name: '',
  instructions: '',
  prompts: [{ text: OATH, echo: false, kind: 'code' }],
  ...over,
});

describe('login policy (keyboard-interactive and password)', () => {
  it('tells one-time codes from passwords (a code is never kept; a password may be)', () => {
    assert.equal(promptKind(OATH, false), 'code');
    assert.equal(promptKind('Verification code: ', false), 'code');
    assert.equal(promptKind('Passcode or option (1-3): ', true), 'code');
    assert.equal(promptKind('Password: ', false), 'password');
    assert.equal(promptKind("kimi@gpu7's password: ", false), 'password');
    assert.equal(promptKind('Password: ', true), 'other', 'an echoed "password" is not treated as one');
    assert.equal(promptKind('Your favourite colour: ', true), 'other');
  });

  it("removes the control characters of the server's text (no terminal escapes), keeps lines", () => {
    assert.equal(cleanServerText('\u001b[2J\u001b]0;owned\u0007Code:\nnext\t'), '[2J]0;ownedCode:\nnext\t');
    assert.equal(cleanServerText('a\u202eb'), 'ab');
    assert.equal(cleanServerText('x'.repeat(5000)).length, 2000);
  });

  it('after the keys: keyboard-interactive once, then a password once, then the refusal', () => {
    const s = fresh();
    assert.deepEqual(nextLogin(s, null, true, WHO, HINT), { kind: 'keyboard-interactive' });
    assert.deepEqual(nextLogin(s, ['publickey', 'keyboard-interactive'], true, WHO, HINT), {
      kind: 'keyboard-interactive',
    });
    assert.deepEqual(nextLogin(s, ['publickey'], true, WHO, HINT), { kind: 'end' }, 'nothing the server did not offer');
    s.keyboardInteractiveTried = true;
    s.refusal = 'refused';
    assert.deepEqual(nextLogin(s, ['keyboard-interactive'], true, WHO, HINT), { kind: 'end', refusal: 'refused' });
    assert.deepEqual(nextLogin(s, ['keyboard-interactive', 'password'], true, WHO, HINT), { kind: 'password' });
    s.passwordTried = true;
    assert.deepEqual(nextLogin(s, ['keyboard-interactive', 'password'], true, WHO, HINT), {
      kind: 'end',
      refusal: 'refused',
    });
    assert.deepEqual(nextLogin(fresh(), null, true, WHO, HINT).kind, 'keyboard-interactive');
  });

  it('nobody to ask: a host that lists only these methods is refused with the hint; unknown methods end plainly', () => {
    assert.deepEqual(nextLogin(fresh(), ['keyboard-interactive'], false, WHO, HINT), {
      kind: 'end',
      refusal:
        'kimi@gpu7:22 needs an interactive login (keyboard-interactive: a one-time code or a password), and nobody can answer it here. Use a terminal.',
    });
    assert.deepEqual(nextLogin(fresh(), null, false, WHO, HINT), { kind: 'end' });
    assert.deepEqual(nextLogin(fresh(), ['publickey'], false, WHO, HINT), { kind: 'end' });
    // the keys were refused by a server that also takes passwords: the usual "check authorized_keys" error, with a note
    assert.deepEqual(nextLogin(fresh(), ['publickey', 'password'], false, WHO, HINT), {
      kind: 'end',
      note: '(the server also allows password: nobody to answer here)',
    });
  });

  it('refusals name who asked and what it said; a jump host says which GPU host it leads to', () => {
    assert.equal(
      noAnswerRefusal(question({ jumpFor: 'gpu9' })),
      'Login refused: no code given to kimi@gpu7:22 (jump host for gpu9) (it asked "One-time password (OATH) for `kimi\':"). ' +
        'Nothing was sent, and it is not asked again until you connect again.',
    );
    assert.equal(
      refusedRefusal(question({ instructions: 'Duo: invalid passcode.' }), ['keyboard-interactive']),
      'Login refused by kimi@gpu7:22: it did not accept the code given to "One-time password (OATH) for `kimi\':" ' +
        '(it said: Duo: invalid passcode.); it now allows keyboard-interactive. ' +
        'Not tried again, since each failure counts against the account: connect again to give a new code.',
    );
    assert.match(
      noAnswerRefusal(question({ prompts: [{ text: 'Password: ', echo: false, kind: 'password' }] })),
      /^Login refused: no password given/,
    );
  });
});

describe('HopLogin (one hop: ssh2 method objects, questions, verdicts)', () => {
  // the GPU host itself (a jump host would be one of target.jumps)
  const target: SshTarget = {
    alias: 'gpu7',
    hostName: '10.0.0.7',
    port: 22,
    username: 'kimi',
    identityFiles: [],
    identityFilesConfigured: false,
    jumps: [],
  };
  const ep: SshEndpoint = target;
  const timers = { setTimeout: () => 1, clearTimeout: () => undefined };

  function hop(
    answer: (q: LoginQuestion, signal: AbortSignal) => LoginAnswer | undefined | Promise<LoginAnswer | undefined>,
  ) {
    const asked: LoginQuestion[] = [];
    const aborted: TransportError[] = [];
    const ctx = {
      options: {
        target,
        knownHostsFile: '/dev/null',
        decideUnknownHostKey: async () => 'reject' as const,
        requestPassphrase: async () => undefined,
        requestLogin: async (q: LoginQuestion, signal: AbortSignal) => {
          asked.push(q);
          return answer(q, signal);
        },
      },
      timers,
      log: () => undefined,
      dialing: new Set(),
      proxies: new Set(),
      passphrases: new Map(),
      isDisposed: () => false,
    } as unknown as DialContext;
    const login = new HopLogin(
      ctx,
      ep,
      new HandshakeDeadline(1000, () => undefined, timers),
      (e) => aborted.push(e),
      () => false,
    );
    return { login, asked, aborted };
  }

  it('asks the server’s question once, answers it, and does not offer a second round after a refusal', async () => {
    const verdicts: boolean[] = [];
    const h = hop(() => ({ answers: ['123456'], settled: (ok) => verdicts.push(ok) }));
    const tried: string[] = [];
    const method = (await h.login.next(['keyboard-interactive'], tried)) as unknown as KeyboardInteractive;
    assert.equal(method.type, 'keyboard-interactive');
    const sent = await new Promise<string[]>((resolve) =>
      method.prompt('', '', '', [{ prompt: OATH, echo: false }], resolve),
    );
    assert.deepEqual(sent, ['123456']);
    assert.equal(h.asked[0]!.host, 'kimi@10.0.0.7:22');
    h.login.settle(false, ['keyboard-interactive']);
    assert.deepEqual(verdicts, [false]);
    assert.match(h.login.refusal ?? '', /^Login refused by kimi@10\.0\.0\.7:22: it did not accept the code/);
    assert.equal(await h.login.next(['keyboard-interactive'], tried), false, 'no second round');
    assert.deepEqual(tried, ['keyboard-interactive']);
  });

  it('a cancelled question ends the handshake and sends nothing', async () => {
    const h = hop(() => undefined);
    const method = (await h.login.next(null, [])) as unknown as KeyboardInteractive;
    let finished = false;
    method.prompt('', '', '', [{ prompt: OATH, echo: false }], () => (finished = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(finished, false);
    assert.equal(h.aborted.length, 1);
    assert.equal(h.aborted[0]!.kind, 'auth');
    assert.match(h.aborted[0]!.message, /^Login refused: no code given to kimi@10\.0\.0\.7:22/);
  });

  it('a password login: asked as "Password for user@host", sent once', async () => {
    const h = hop(() => ({ answers: ['hunter2'] }));
    const tried: string[] = [];
    const first = (await h.login.next(['password'], tried)) as unknown as { type: string; password: string };
    assert.deepEqual([first.type, first.password], ['password', 'hunter2']);
    assert.equal(h.asked[0]!.prompts[0]!.text, 'Password for kimi@10.0.0.7:22: ');
    h.login.settle(false, ['password']);
    assert.equal(await h.login.next(['password'], tried), false);
    assert.equal(h.asked.length, 1);
  });

  it('a question still open when the attempt ends is withdrawn (its signal aborts), and nothing is sent', async () => {
    let signal: AbortSignal | undefined;
    const h = hop((_q, s) => {
      signal = s;
      return new Promise<undefined>((resolve) => s.addEventListener('abort', () => resolve(undefined)));
    });
    const method = (await h.login.next(null, [])) as unknown as KeyboardInteractive;
    let finished = false;
    method.prompt('', '', '', [{ prompt: OATH, echo: false }], () => (finished = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(h.login.asking, true);
    h.login.close();
    assert.equal(signal?.aborted, true);
    assert.equal(h.login.asking, false);
    await new Promise((r) => setImmediate(r));
    assert.equal(finished, false);
  });
});

describe('the CLI asks a login question on the terminal', () => {
  it('says who asks and the server’s words, then reads each answer; end of input cancels', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString('utf8')));
    const pending = askLogin({ input, output }, question({ instructions: 'Use your token.' }));
    input.write('654321\n');
    assert.deepEqual((await pending)?.answers, ['654321']);
    assert.match(shown, /^kimi@gpu7:22 asks \(keyboard-interactive\):\nUse your token\.\n/);
    assert.ok(shown.includes(OATH), shown);

    const eof = new PassThrough();
    const cancelled = askLogin({ input: eof, output: new PassThrough() }, question());
    eof.end();
    assert.equal(await cancelled, undefined);
  });
});
