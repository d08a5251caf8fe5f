/**
 * Through the real sshd + simulated host: a model whose reasoning uses the whole
 * token budget slowly (sim.json chatFaults.slowReasoningMs) keeps a verification waiting. The
 * verification says where it is as the streamed answers come (checks done of all, the slowest
 * check's tokens of reasoning against its budget), logs the checks that wait long, and ends
 * inconclusive with the reason: out of time while the model still reasoned, not a parser fault.
 */
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { targetFor } from '../../src/target/target';
import { verifyServer } from '../../src/verify/serverVerification';
import { progressLine, type VerifyProgress } from '../../src/verify/progress';
import { verificationVerdictOf } from '../../src/verify/verifier';
import { formatTable, summarize } from '../../src/present/verifyReport';
import { enableKimiParsersAndRestart, sessionForHost, type TestSession } from './simHost';

/** Longer than the 10 s after which the log says a check waits, shorter than the 2048 tokens take at 20 ms each. */
const CHECK_TIMEOUT_MS = 15_000;

describe('a verification that takes long: where it is, then inconclusive with the reason', function () {
  this.timeout(300_000);
  let host: GpuHost;
  let test: TestSession;

  before(async () => {
    host = await startGpuHost({ shards: 2, shardBytes: 256 * 1024, sim: { tokenDelayMs: 0 } });
    test = await sessionForHost(host);
    await enableKimiParsersAndRestart(host, test);
  });
  after(async () => {
    test?.dispose();
    await host?.stop();
  });

  it('reasoning that uses the whole budget slowly: progress from the streamed tokens, log lines, then inconclusive "out of time"', async () => {
    await host.configureSimulator({ chatFaults: { slowReasoningMs: 20 } });
    const seen: { at: number; progress: VerifyProgress; line: string }[] = [];
    const log: string[] = [];
    const result = await verifyServer(
      test.session.transport,
      test.session.client,
      targetFor(test.session.profile),
      (line) => log.push(line),
      (progress: VerifyProgress) => seen.push({ at: Date.now(), progress, line: progressLine(progress, Date.now()) }),
      CHECK_TIMEOUT_MS,
    );
    const table = formatTable(result, 400);
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));

    // Where it was, as it went: the checks done of all, the slowest stream's tokens of reasoning as they came.
    const streamed = seen
      .map((s) => s.progress.running.find((c) => c.name === 'reasoning (stream)'))
      .map((c) => c?.tally.reasoningTokens ?? 0);
    assert.ok(new Set(streamed.filter((n) => n > 0)).size >= 3, `the count grew as tokens came: ${streamed.join(' ')}`);
    assert.ok(
      seen.some((s) => s.progress.running.find((c) => c.name === 'reasoning (stream)')?.respondedAt !== undefined),
      "the stream's response was seen to begin",
    );
    assert.ok(
      seen.some((s) =>
        /^verifying \d+\/16 · \S.* waiting \d+ s \(\d[\d,]* tokens of reasoning so far, budget 2,048\)$/.test(s.line),
      ),
      seen.map((s) => s.line).join('\n'),
    );
    assert.deepEqual(
      seen.map((s) => s.progress.done),
      [...seen.map((s) => s.progress.done)].sort((a, b) => a - b),
    );
    assert.equal(seen[seen.length - 1].progress.done, 16);

    // The log: a check that waited 10 s is said, with its tokens so far.
    assert.ok(
      log.some((l) =>
        /^verifying \d+\/16 · reasoning \(stream\) waiting 1\d s \(\d[\d,]* tokens of reasoning so far, budget 2,048\)$/.test(
          l,
        ),
      ),
      log.join('\n'),
    );

    // The end: inconclusive, out of time while still reasoning; never a parser failure. The first
    // requests hold the connection's channels (3, src/transport/channelLimit.ts) for the whole
    // time; those queued behind them saw nothing come and are skipped, as a server that does not
    // answer.
    assert.equal(verificationVerdictOf(result), 'inconclusive', table);
    assert.equal(byName['thinking off'].status, 'pass', table);
    for (const c of result.checks.filter((x) => x.status !== 'pass')) {
      if (c.status === 'skipped') continue;
      assert.equal(c.status, 'inconclusive', table);
      assert.equal(c.cause, 'time', `${c.name}: ${c.evidence}`);
    }
    const stream = byName['reasoning (stream)'];
    assert.equal(stream.cause, 'time', table);
    assert.match(
      stream.evidence,
      /^inconclusive: out of time \(15 s\), a slow server, not the parsers: still reasoning, \d[\d,]* tokens of the 2,048 budget, no answer yet; at \d+(\.\d)? token\/s the budget takes \d+ s$/,
    );
    assert.match(
      byName['reasoning'].evidence,
      /^inconclusive: no answer within 15 s, a slow server, not the parsers: the same request streamed was still reasoning, \d[\d,]* tokens of the 2,048 budget, no answer yet/,
    );
    assert.match(
      summarize(result),
      /^Parser check inconclusive \(out of time with the model still reasoning or answering, a slow server, not the parsers\): reasoning, reasoning \(stream\)/,
    );
    await host.configureSimulator({ chatFaults: {} });
  });
});
