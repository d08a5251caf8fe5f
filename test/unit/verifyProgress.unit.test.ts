import * as assert from 'node:assert/strict';
import {
  isLong,
  ProgressLog,
  SseTally,
  checkLine,
  progressLine,
  slowestCheck,
  timeoutJudgement,
  type CheckProgress,
  type VerifyProgress,
} from '../../src/verify/progress';
import { verificationVerdictOf, verifyParsers, type VerifierDeps } from '../../src/verify/verifier';
import { summarize } from '../../src/present/verifyReport';
import { readStream } from '../../src/verify/streamRead';
import { Readable } from 'node:stream';
import { ev } from '../util/evidence';

const sse = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function check(over: Partial<CheckProgress> & Pick<CheckProgress, 'name'>): CheckProgress {
  return {
    stream: true,
    tally: { reasoningTokens: 0, reasoningChars: 0, answerTokens: 0, answerChars: 0 },
    ...over,
  };
}

const reasoning = (tokens: number, answer = 0) => ({
  reasoningTokens: tokens,
  reasoningChars: tokens * 4,
  answerTokens: answer,
  answerChars: answer * 3,
});

describe('verification progress: what a stream carried so far', () => {
  it('counts reasoning and answer chunks as they arrive, split anywhere, CRLF or not', () => {
    const body =
      sse({ role: 'assistant', content: '' }) +
      sse({ reasoning_content: 'Let' }) +
      sse({ reasoning_content: ' me' }) +
      sse({ reasoning: ' think' }) +
      sse({ content: '391' }).replace(/\n/g, '\r\n') +
      sse({ tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] }) +
      sse({}, 'stop') +
      'data: [DONE]\n\n';
    for (const size of [1, 7, 64, body.length]) {
      const tally = new SseTally();
      for (let i = 0; i < body.length; i += size) tally.push(body.slice(i, i + size));
      assert.deepEqual(
        tally.tally,
        { reasoningTokens: 3, reasoningChars: 12, answerTokens: 2, answerChars: 10, finishReason: 'stop' },
        `pieces of ${size}`,
      );
    }
  });

  it('an event not yet complete counts nothing; junk is ignored', () => {
    const tally = new SseTally();
    tally.push(sse({ reasoning_content: 'a' }) + 'data: {"choices":[{"delta":{"reasoning_content":"b"');
    assert.equal(tally.tally.reasoningTokens, 1);
    tally.push('}}]}\n\ndata: not json\n\n: comment\n\n');
    assert.equal(tally.tally.reasoningTokens, 2);
    assert.equal(tally.tally.finishReason, undefined);
  });
});

describe('verification progress: the body read as it arrives', () => {
  it('tells each piece, a character split between two chunks whole; keeps at most the cap', async () => {
    const bytes = Buffer.from('data: {"x":"18 °C"}\n\n', 'utf8');
    const cut = bytes.indexOf(0xc2) + 1; // inside the two bytes of "°"
    const pieces: string[] = [];
    const read = await readStream(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]), 1024, (t) =>
      pieces.push(t),
    );
    assert.deepEqual(read, { text: bytes.toString('utf8'), truncated: false });
    assert.equal(pieces.join(''), bytes.toString('utf8'));
    const capped = await readStream(Readable.from([bytes, bytes]), bytes.length + 4, () => undefined);
    assert.deepEqual(capped, { text: bytes.toString('utf8') + 'data', truncated: true });
  });
});

describe('verification progress: the words', () => {
  const now = 100_000;
  it('a stream: its tokens of reasoning and answer so far, against its budget', () => {
    const c = check({ name: 'reasoning (stream)', askedAt: now - 42_400, budget: 2048, tally: reasoning(1830) });
    assert.equal(checkLine(c, now), 'reasoning (stream) waiting 42 s (1,830 tokens of reasoning so far, budget 2,048)');
    assert.equal(
      checkLine({ ...c, tally: reasoning(1830, 12), retry: true, budget: 8192 }, now),
      'reasoning (stream) waiting 42 s (1,830 tokens of reasoning, 12 of the answer so far, budget 8,192 (retry))',
    );
    assert.equal(
      checkLine({ ...c, tally: reasoning(0) }, now),
      'reasoning (stream) waiting 42 s (no response yet: queued behind other requests or at the server, budget 2,048)',
    );
    assert.equal(
      checkLine({ ...c, tally: reasoning(0), respondedAt: now - 40_000 }, now),
      'reasoning (stream) waiting 42 s (nothing streamed yet, budget 2,048)',
    );
    assert.equal(
      checkLine({ ...c, name: 'reasoning', stream: false, tally: reasoning(0) }, now),
      'reasoning waiting 42 s (no answer yet: a plain answer comes whole, budget 2,048)',
    );
  });

  it('the line names the longest-waiting stream that carried something, else the longest waiting', () => {
    const p: VerifyProgress = {
      done: 5,
      total: 16,
      running: [
        check({ name: 'reasoning', stream: false, askedAt: now - 50_000, budget: 2048 }),
        check({ name: 'tool calling (stream)', askedAt: now - 30_000, budget: 2048, tally: reasoning(400) }),
        check({ name: 'reasoning (stream)', askedAt: now - 42_000, budget: 2048, tally: reasoning(1830) }),
        check({ name: 'named tool choice (stream)', askedAt: now - 60_000, budget: 2048, endedAt: now - 1 }),
        check({ name: 'tool round trip' }),
      ],
    };
    assert.equal(slowestCheck(p)?.name, 'reasoning (stream)');
    assert.equal(
      progressLine(p, now),
      'verifying 5/16 · reasoning (stream) waiting 42 s (1,830 tokens of reasoning so far, budget 2,048)',
    );
    const quiet = { ...p, running: p.running.map((c) => ({ ...c, tally: reasoning(0) })) };
    assert.equal(slowestCheck(quiet)?.name, 'reasoning', 'nothing streamed: the longest waiting, not one that ended');
    assert.equal(
      progressLine({ done: 0, total: 16, running: [check({ name: 'tool round trip' })] }, now),
      'verifying 0/16',
    );
  });

  it('a long verification: a check under way has waited 10 s (one that ended, or not yet asked, does not count)', () => {
    const p = (c: Partial<CheckProgress>): VerifyProgress => ({
      done: 1,
      total: 16,
      running: [check({ name: 'tool round trip' }), check({ name: 'reasoning (stream)', ...c })],
    });
    assert.equal(isLong(p({ askedAt: now - 9_999 }), now), false);
    assert.equal(isLong(p({ askedAt: now - 10_000 }), now), true);
    assert.equal(isLong(p({ askedAt: now - 30_000, endedAt: now - 1 }), now), false);
  });

  it('the log: a check once it has waited 10 s, then at most every 10 s', () => {
    const log = new ProgressLog(10_000);
    const at = (askedAt: number): VerifyProgress => ({
      done: 3,
      total: 16,
      running: [
        check({ name: 'reasoning (stream)', askedAt, budget: 2048, tally: reasoning(10) }),
        check({ name: 'tool calling (stream)', askedAt: askedAt + 5_000, budget: 2048, tally: reasoning(10) }),
      ],
    });
    const p = at(0);
    assert.deepEqual(log.due(p, 9_999), []);
    assert.deepEqual(log.due(p, 10_000), [
      'verifying 3/16 · reasoning (stream) waiting 10 s (10 tokens of reasoning so far, budget 2,048)',
    ]);
    assert.deepEqual(log.due(p, 14_000), []);
    assert.deepEqual(
      log.due(p, 15_000).map((l) => l.split(' waiting')[0]),
      ['verifying 3/16 · tool calling (stream)'],
    );
    assert.deepEqual(log.due(p, 19_999), []);
    assert.equal(log.due(p, 20_000).length, 1);
    assert.equal(log.due(p, 25_000).length, 1);
  });
});

describe('verification progress: a check out of time', () => {
  const now = 100_000;
  it('a stream still reasoning: inconclusive, with the tokens, the budget and the rate', () => {
    const own = check({ name: 'reasoning (stream)', askedAt: now - 60_000, budget: 2048, tally: reasoning(1830) });
    const j = timeoutJudgement(60_000, own, undefined, now);
    assert.equal(j?.status, 'inconclusive');
    assert.equal(
      ev(j),
      'inconclusive: out of time (60 s), a slow server, not the parsers: still reasoning, 1,830 tokens of the 2,048 budget, no answer yet; at 31 token/s the budget takes 68 s',
    );
    const answering = timeoutJudgement(60_000, { ...own, tally: reasoning(1830, 40) }, undefined, now);
    assert.match(
      ev(answering!),
      /still answering, 1,830 tokens of reasoning and 40 of the answer of the 2,048 budget; at 31 token\/s/,
    );
  });

  it('a plain request: its streamed twin says why; nothing seen at all: undefined (skipped, as before)', () => {
    const own = check({ name: 'reasoning', stream: false, askedAt: now - 60_000, budget: 2048 });
    const twin = check({ name: 'reasoning (stream)', askedAt: now - 60_000, budget: 2048, tally: reasoning(600) });
    assert.equal(
      ev(timeoutJudgement(60_000, own, twin, now)!),
      'inconclusive: no answer within 60 s, a slow server, not the parsers: the same request streamed was still reasoning, 600 tokens of the 2,048 budget, no answer yet; at 10 token/s the budget takes 205 s',
    );
    assert.equal(timeoutJudgement(60_000, own, undefined, now), undefined);
    assert.equal(timeoutJudgement(60_000, own, { ...twin, tally: reasoning(0) }, now), undefined);
    const finished = { ...twin, tally: { ...reasoning(600), finishReason: 'stop' } };
    assert.equal(timeoutJudgement(60_000, own, finished, now), undefined, 'a twin that ended says nothing of this one');
    assert.equal(timeoutJudgement(60_000, { ...twin, tally: reasoning(0) }, undefined, now), undefined);
  });
});

describe('verification progress: a verification whose reasoning never ends', () => {
  /** A server whose model reasons slowly past any budget: three tokens, then nothing until the verifier gives up. */
  function slowServer(): VerifierDeps {
    const untilAborted = (signal: AbortSignal | undefined) =>
      new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    return {
      timeoutMs: 300,
      getJson: async (path) =>
        path === '/v1/models'
          ? { status: 200, body: { data: [{ id: 'kimi', max_model_len: 262144 }] } }
          : { status: 200, body: { reasoning_parser: 'kimi_k2', tool_call_parser: 'kimi_k2' } },
      postJson: async (_path, body, options) => {
        const b = body as Record<string, unknown>;
        if ((b.chat_template_kwargs as { thinking?: boolean } | undefined)?.thinking === false) {
          const message = { role: 'assistant', content: '391', reasoning_content: null, tool_calls: null };
          return { status: 200, body: JSON.stringify({ choices: [{ index: 0, finish_reason: 'stop', message }] }) };
        }
        if (b.stream === true)
          options?.onText?.(sse({ role: 'assistant', content: '' }) + sse({ reasoning_content: 'Let me' }).repeat(3));
        return untilAborted(options?.signal);
      },
    };
  }

  it('says where it is as it goes, and ends inconclusive with the reason, not in silence', async () => {
    const seen: VerifyProgress[] = [];
    const log: string[] = [];
    const result = await verifyParsers(
      slowServer(),
      { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' },
      { onProgress: (p) => seen.push(p), log: (l) => log.push(l), tickMs: 20, logEveryMs: 100 },
    );
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));
    assert.equal(verificationVerdictOf(result), 'inconclusive');
    assert.equal(byName['thinking off'].status, 'pass');
    for (const name of ['reasoning (stream)', 'tool calling (stream)', 'reasoning carried through tool calls']) {
      assert.equal(byName[name].status, 'inconclusive', name);
      assert.equal(byName[name].cause, 'time', name);
    }
    assert.match(
      byName['reasoning (stream)'].evidence,
      /^inconclusive: out of time \(0\.3 s\), a slow server, not the parsers: still reasoning, 3 tokens of the 2,048 budget, no answer yet; at \d+(\.\d)? token\/s the budget takes \d+ s$/,
    );
    assert.match(
      byName['reasoning'].evidence,
      /^inconclusive: no answer within 0\.3 s, a slow server, not the parsers: the same request streamed was still reasoning, 3 tokens/,
    );
    assert.match(byName['tool round trip'].evidence, /^needs the call of "tool calling" \(inconclusive\)/);
    assert.equal(byName['tool round trip'].cause, 'time');
    assert.match(
      summarize(result),
      /^Parser check inconclusive \(out of time with the model still reasoning or answering, a slow server, not the parsers\): reasoning, reasoning \(stream\), tool calling, /,
    );

    // Where it was: the checks done of all, the streamed tokens of the slowest, as they came.
    assert.ok(seen.length > 0);
    assert.deepEqual(
      seen.map((p) => p.done),
      [...seen.map((p) => p.done)].sort((a, b) => a - b),
      'done only grows',
    );
    assert.equal(seen[seen.length - 1].done, 16);
    assert.ok(
      seen.some((p) => p.running.some((c) => c.name === 'reasoning (stream)' && c.tally.reasoningTokens === 3)),
      'the streamed reasoning was counted while the check waited',
    );
    assert.ok(
      log.some((l) =>
        /^verifying \d+\/16 · reasoning \(stream\) waiting 0 s \(3 tokens of reasoning so far, budget 2,048\)$/.test(l),
      ),
      log.join('\n'),
    );
  });
});
