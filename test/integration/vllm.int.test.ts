/**
 * A vLLM unit on the simulated GPU host (`vllm serve MODEL ...`, the simulator in vLLM mode):
 * the load followed to ready from vLLM's own lines (shard progress, phases), Enable parsers adding
 * vLLM's three flags and the checks passing against vLLM's answers, and a KV-cache failure read as
 * failed with vLLM's cause (docs/vllm-server.md).
 */
import { shellLine } from '../../src/transport/shell';
import { targetFor } from '../../src/target/target';
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { LOAD_PHASES, type LoadPhase } from '../../src/engine/events';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { causeLine } from '../../src/present/report';
import { enableParsers, DROP_IN_NAME } from '../../src/target/systemd/parserDropIn';
import { verifyServer } from '../../src/verify/serverVerification';
import type { VerifyResult } from '../../src/verify/verifier';
import type { WatchOutcome } from '../../src/monitor/watch/watchTypes';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';
import { disposed } from '../util/disposed';

const SHARDS = 6;
// ~2.4 s of cold weights: several shard lines arrive while the watch is looking
const SIM = { readMBps: 2.5, coldFiles: 'all', kvSeconds: 0.5, cudaGraphSeconds: 0.6, tokenDelayMs: 0 };

function check(result: VerifyResult, name: string): { status: string; evidence: string } {
  const c = result.checks.find((x) => x.name === name);
  assert.ok(c, `no check named ${name}`);
  return c;
}

describe('a vLLM server on the simulated GPU host', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  const log: string[] = [];

  before(async () => {
    host = await startGpuHost({
      engine: 'vllm',
      unitName: 'vllm-k26',
      shards: SHARDS,
      shardBytes: 1024 * 1024,
      sim: SIM,
    });
  });
  afterEach(() => (test = disposed(test)));
  after(() => host?.stop());

  it("a load to ready: phases in order from vLLM's lines, progress from the shard lines; without parsers the checks fail on vLLM's answers", async () => {
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const outcome = await test.session.watch('restart', FAST_WATCH, { onState: (s) => states.push(s) });
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);

    const phases: LoadPhase[] = [];
    for (const s of states) if (s.phase && phases[phases.length - 1] !== s.phase) phases.push(s.phase);
    const rank = (p: LoadPhase) => LOAD_PHASES.indexOf(p);
    assert.deepEqual(
      [...phases].sort((a, b) => rank(a) - rank(b)),
      phases,
      `phases went backwards: ${phases}`,
    );
    for (const p of ['loading weights', 'allocating KV cache', 'capturing CUDA graphs', 'ready'] as const)
      assert.ok(phases.includes(p), `phases: ${phases}`);
    const shardCounts = [
      ...new Set(states.filter((s) => s.phase === 'loading weights' && s.shards).map((s) => s.shards!.done)),
    ];
    assert.ok(
      shardCounts.some((n) => n > 0 && n < SHARDS),
      `shard progress seen mid-load: ${shardCounts}`,
    );
    assert.ok(
      states.every((s) => !s.shards || s.shards.total === SHARDS),
      'shard total from "Loading safetensors checkpoint shards: NN% Completed | n/N"',
    );
    assert.ok(
      states.some((s) => s.cudaGraphBatches && s.cudaGraphBatches.total > 7),
      'both CUDA-graph bars counted',
    );
    const progress = states.map((s) => s.progress ?? 0);
    assert.ok(
      progress.every((p, i) => i === 0 || p >= progress[i - 1]!),
      'the percentage only grows',
    );

    const result = await verifyServer(
      test.session.transport,
      test.session.client,
      targetFor(test.session.profile),
      (l) => log.push(l),
    );
    assert.equal(result.model, '/root/models/Kimi-K2.6');
    assert.equal(check(result, 'server flags').status, 'fail');
    assert.match(check(result, 'server flags').evidence, /running process: --reasoning-parser \(none\)/);
    assert.equal(check(result, 'reasoning').status, 'fail');
    assert.match(check(result, 'reasoning').evidence, /<\/think>/);
    // vLLM refuses tools without --enable-auto-tool-choice: HTTP 400 with its message
    assert.equal(check(result, 'tool calling').status, 'fail');
    assert.match(
      check(result, 'tool calling').evidence,
      /HTTP 400: .*auto\W* tool choice requires --enable-auto-tool-choice/,
    );
  });

  it('Enable parsers on the vLLM unit adds --tool-call-parser, --reasoning-parser and --enable-auto-tool-choice; after the restart every check passes', async () => {
    test = await sessionForHost(host);
    const t = test;
    const result = await enableParsers(
      {
        sudo: t.session.profile.sudo,
        log: (line) => log.push(line),
        exec: (command, options) => t.session.transport.exec(shellLine(command), { timeoutMs: 30_000, ...options }),
        confirmDiff: async (diff) => {
          log.push(diff);
          return true;
        },
      },
      host.unitName,
      { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' },
    );
    assert.equal(result.kind, 'changed');
    if (result.kind !== 'changed') return;
    assert.match(result.diff, /^\+ --enable-auto-tool-choice$/m);
    const dropIn = (await host.readDropIns())[DROP_IN_NAME] ?? '';
    assert.match(dropIn, /^ExecStart=\S+\/vllm serve \\\n\s+\S+\/Kimi-K2\.6 \\$/m);
    for (const flag of [/--tool-call-parser kimi_k2/, /--reasoning-parser kimi_k2/, /--enable-auto-tool-choice/])
      assert.match(dropIn, flag);

    const outcome = await t.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}`);
    const verify = await verifyServer(t.session.transport, t.session.client, targetFor(t.session.profile), (l) =>
      log.push(l),
    );
    assert.ok(verify.allPassed, JSON.stringify(verify.checks, null, 1));
    assert.match(check(verify, 'server flags').evidence, /--enable-auto-tool-choice set/);
    assert.match(
      check(verify, 'tool calling').evidence,
      /get_weather\(\{"city":"Paris"\}\) id=functions\.get_weather:0/,
    );
  });

  it("no memory left for the KV cache: failed, with vLLM's cause rather than its wrapper", async () => {
    await host.configureSimulator({ ...SIM, coldFiles: 'none', fault: { crashAt: 'kv', kind: 'kv' } });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const outcome = await test.session.watch('restart', FAST_WATCH, { onState: (s) => states.push(s) });
    assert.equal(outcome.end, 'failed', `ended ${outcome.end}: ${outcome.message}`);
    assert.ok(!states.some((s) => s.verdict === 'ready'));
    assert.match(outcome.state.failure!.summary, /exited with status 1/);
    const lines = outcome.state.failure!.lines;
    assert.ok(
      lines.some((l) => /EngineCore failed to start/.test(l)),
      JSON.stringify(lines, null, 1),
    );
    assert.match(causeLine(lines) ?? '', /ValueError: No available memory for the cache blocks/);
    assert.ok(
      lines.some((l) => /Available KV cache memory: -[\d.]+ GiB/.test(l)),
      'the failure came at the KV cache',
    );
  });

  it("the engine dies after ready: /health 503 makes it unhealthy, then the exit is a failure with the engine's cause", async () => {
    await host.configureSimulator({
      ...SIM,
      coldFiles: 'none',
      fault: { engineDiesAfterSeconds: 3, deadLingerSeconds: 10 },
    });
    test = await sessionForHost(host);
    const ends: WatchOutcome[] = [];
    const outcome = await test.session.watch(
      'restart',
      { ...FAST_WATCH, steadyIntervalMs: 500 },
      { onEnd: (o) => void ends.push(o) },
    );
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}`);
    const session = test.session;
    await waitFor(() => session.state?.verdict === 'unhealthy', {
      timeoutMs: 30_000,
      message: 'unhealthy after /health 503',
    });
    assert.ok((await host.mainPid()) > 0, 'the process still runs while /health says 503');
    const failed = await waitFor(() => ends.find((e) => e.end === 'failed'), {
      timeoutMs: 30_000,
      message: 'failed once the server exits',
    });
    assert.match(failed.state.failure!.summary, /exited with status 1 after it was ready/);
    assert.match(causeLine(failed.state.failure!.lines) ?? '', /CUDA error: an illegal memory access/);
  });
});
