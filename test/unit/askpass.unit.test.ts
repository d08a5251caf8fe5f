import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import { askSshPrompt } from '../../src/fronts/cli/prompt';
import {
  decodeReply,
  decodeRequest,
  encodeReply,
  encodeRequest,
  FirstLine,
  MAX_LINE_BYTES,
  promptModeOf,
  tokenMatches,
} from '../../src/transport/openssh/askpass/protocol';
import { cleanPrompt, sshPromptKind } from '../../src/transport/openssh/askpass/promptKind';
import { notGivenWords } from '../../src/present/words/opensshWords';
import { masterArgs } from '../../src/transport/openssh/controlMaster';
import { classifyOpenSshFailure, promptRefusal } from '../../src/transport/openssh/opensshErrors';

describe('the askpass protocol', () => {
  const req = { token: 'a'.repeat(64), prompt: "Enter passphrase for key '/h/.ssh/id': ", mode: 'secret' as const };

  it('a request and a reply are one line each and read back the same', () => {
    const line = encodeRequest(req);
    assert.equal(line.indexOf('\n'), line.length - 1);
    assert.deepEqual(decodeRequest(line.trimEnd()), req);
    assert.deepEqual(decodeReply(encodeReply({ answer: 'sesame "quoted" é' }).trimEnd()), {
      answer: 'sesame "quoted" é',
    });
    assert.deepEqual(decodeReply(encodeReply({ cancel: true }).trimEnd()), { cancel: true });
  });

  it('refuses anything but exactly a request or a reply', () => {
    for (const bad of [
      'not json',
      '[]',
      'null',
      JSON.stringify({ token: 'x', prompt: 'p' }),
      JSON.stringify({ token: 'x', prompt: 'p', mode: 'secret', extra: 1 }),
      JSON.stringify({ token: 1, prompt: 'p', mode: 'secret' }),
      JSON.stringify({ token: 'x', prompt: 'p', mode: 'shell' }),
    ])
      assert.equal(decodeRequest(bad), undefined, bad);
    for (const bad of [
      '{}',
      JSON.stringify({ answer: 'a\nb' }),
      JSON.stringify({ answer: 1 }),
      JSON.stringify({ cancel: false }),
      JSON.stringify({ answer: 'a', cancel: true }),
    ])
      assert.equal(decodeReply(bad), undefined, bad);
  });

  it('reads the first line across chunks, and stops at MAX_LINE_BYTES without a newline', () => {
    const f = new FirstLine();
    assert.equal(f.push(Buffer.from('{"ans')), undefined);
    assert.equal(f.push(Buffer.from('wer":"x"}\n{"more"')), '{"answer":"x"}');
    const big = new FirstLine();
    assert.equal(big.push(Buffer.alloc(MAX_LINE_BYTES, 0x61)), undefined);
    assert.equal(big.push(Buffer.from('a\n')), 'overflow');
  });

  it('compares the token whole', () => {
    assert.ok(tokenMatches('abc123', 'abc123'));
    assert.ok(!tokenMatches('abc123', 'abc124'));
    assert.ok(!tokenMatches('abc123', 'abc12'));
    assert.ok(!tokenMatches('abc123', ''));
  });

  it("takes OpenSSH's SSH_ASKPASS_PROMPT", () => {
    assert.equal(promptModeOf(undefined), 'secret');
    assert.equal(promptModeOf('confirm'), 'confirm');
    assert.equal(promptModeOf('none'), 'notice');
  });
});

describe("OpenSSH's prompts", () => {
  const cases: [string, ReturnType<typeof sshPromptKind>][] = [
    ["Enter passphrase for key '/home/me/.ssh/id_ed25519': ", 'passphrase'],
    ["Enter PIN for 'SoftHSM slot ID 0x1a2b': ", 'pin'],
    ["kimi@127.0.0.1's password: ", 'password'],
    ['(kimi@gpu1) Password: ', 'password'],
    ['(kimi@gpu1) Verification code: ', 'code'],
    ["(kimi@gpu1) One-time password (OATH) for `kimi': ", 'code'],
    ['Enter PIN for ECDSA-SK key /home/me/.ssh/id_ecdsa_sk: ', 'pin'],
    ['Something else: ', 'other'],
  ];
  for (const [text, kind] of cases)
    it(`${JSON.stringify(text)} asks for a ${kind}`, () => assert.equal(sshPromptKind(text, 'secret'), kind));

  it('a confirmation and a notice are told by their mode', () => {
    assert.equal(sshPromptKind('Allow use of key /k?', 'confirm'), 'confirm');
    assert.equal(sshPromptKind('Confirm user presence for key ECDSA-SK SHA256:x', 'notice'), 'notice');
  });

  it('the refusal says what was not given', () => {
    assert.equal(notGivenWords('passphrase'), 'passphrase not given');
    assert.equal(notGivenWords('pin'), 'PIN not given');
    const words = promptRefusal('kimi@gpu1 (OpenSSH)', { kind: 'passphrase', text: "Enter passphrase for key '/k': " });
    assert.match(
      words,
      /^Login to kimi@gpu1 \(OpenSSH\) stopped: passphrase not given \("Enter passphrase for key '\/k':"/,
    );
  });

  it('a prompt shown to the user carries no control characters', () => {
    assert.equal(cleanPrompt('a\u001b[31mred\u0007 b'), 'a [31mred  b');
    assert.equal(cleanPrompt('x'.repeat(900)).length, 500);
  });

  it('the master asks through SSH_ASKPASS only when a front can answer', () => {
    const c = { dir: '/d', socket: '/d/m', log: '/d/log', askpassSocket: '/d/a' };
    assert.ok(masterArgs(c, {}).includes('BatchMode=yes'));
    assert.ok(masterArgs(c, { prompts: true }).includes('BatchMode=no'));
    assert.ok(!masterArgs(c, { prompts: true }).includes('BatchMode=yes'));
  });

  it('a key that was asked for is not said to need ssh-agent', () => {
    const diagnosis = { certificateProblems: [], certificates: [], lockedKeys: ['/k'] };
    const log = 'kimi@h: Permission denied (publickey).';
    const batch = classifyOpenSshFailure(log, { who: 'kimi@h:22', diagnosis });
    assert.match(batch.message, /\/k needs a passphrase\. The OpenSSH client runs here without prompts/);
    const asked = classifyOpenSshFailure(log, { who: 'kimi@h:22', diagnosis, prompts: true });
    assert.match(asked.message, /\/k needs a passphrase\. It was asked for: the passphrase given was not accepted/);
    assert.doesNotMatch(asked.message, /without prompts/);
  });
});

describe("the CLI asks OpenSSH's question on the terminal", () => {
  it('says who asks and reads a secret without echo; Ctrl-D cancels', async () => {
    const rawModes: boolean[] = [];
    const input = Object.assign(new PassThrough(), {
      isTTY: true,
      setRawMode: (m: boolean) => rawModes.push(m),
    });
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString('utf8')));
    const p = {
      host: 'kimi@gpu1:22 (OpenSSH)',
      text: "Enter passphrase for key '/k': ",
      secret: true,
      kind: 'passphrase' as const,
    };
    const pending = askSshPrompt({ input, output }, p);
    input.write('sesame\r');
    assert.equal(await pending, 'sesame');
    assert.equal(shown, "kimi@gpu1:22 (OpenSSH) asks: Enter passphrase for key '/k': \n");
    assert.deepEqual(rawModes, [true, false]);
    const cancelled = askSshPrompt({ input, output }, p);
    input.write('\u0004');
    assert.equal(await cancelled, undefined);
  });
});
