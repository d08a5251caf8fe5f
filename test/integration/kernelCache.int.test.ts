/**
 * Foreseen quiet steps against a real sshd and the simulated GPU host: the
 * forecast before a restart reads the running server's DeepGEMM kernel cache (the folder its
 * unit's Environment= names, as its process sees it); with the cache empty the confirmation's
 * forecast says so with the expected length and how to keep the cache, and the load's ETA holds the
 * compile from the first estimate on, then names it while it runs. The simulator compiles only when
 * the folder is empty (sim.json deepGemm), as SGLang does, with SGLang's own log lines.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { LoadInsights } from '../../src/monitor/forecast/loadInsights';
import { etaTooltip } from '../../src/present/etaTooltip';
import { expectedLoadTime, forecastInWords } from '../../src/present/forecast';
import { restartQuestion } from '../../src/agent/confirmation';
import { targetFor } from '../../src/target/target';
import { FAST_WATCH, MemoryMemento, sessionForHost, type TestSession } from './simHost';
import { disposed } from '../util/disposed';

const SIM = { readMBps: 8, warmReadMBps: 80, kvSeconds: 0.5, warmupSeconds: 0.5, coldFiles: 'all' };
const COMPILE = { seconds: 8, bar: false };
const KIMI_K2_FP8 = { quant_method: 'fp8', activation_scheme: 'dynamic', fmt: 'e4m3', weight_block_size: [128, 128] };

describe('kernel caches foreseen before a restart (simulated SGLang, DeepGEMM on an FP8 model)', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  let cacheDir: string;

  before(async () => {
    host = await startGpuHost({
      shards: 6,
      shardBytes: 2 * 1024 * 1024,
      quantization: KIMI_K2_FP8,
      sim: { ...SIM, deepGemm: COMPILE },
    });
    cacheDir = path.join(host.fixtureDir, 'deep gemm cache');
    // the unit's own environment names the cache (SGLang's SGLANG_DG_CACHE_DIR) and keeps DeepGEMM on
    const unit = host.defaultUnitText.replace(
      'SGLANG_ENABLE_JIT_DEEPGEMM=0',
      `SGLANG_ENABLE_JIT_DEEPGEMM=1 "SGLANG_DG_CACHE_DIR=${cacheDir}"`,
    );
    assert.notEqual(unit, host.defaultUnitText);
    await host.writeUnit(unit, { reload: true });
  });
  afterEach(() => (test = disposed(test)));
  after(() => host?.stop());

  const forecast = async (insights: LoadInsights) =>
    forecastInWords(
      await insights.forecast(
        test!.session.transport,
        test!.session.profile.name,
        test!.session.profile.unit,
        targetFor(test!.session.profile),
      ),
    );

  it('a cache the first start filled: nothing foreseen; the same cache lost: the confirmation says so, and the ETA counts the compile from its first estimate', async () => {
    test = await sessionForHost(host);
    const insights = new LoadInsights(new MemoryMemento());
    // the first start finds the folder empty, compiles, and keeps its kernels there
    const first = await test.session.watch('restart', FAST_WATCH);
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    assert.ok(fs.readdirSync(cacheDir).length > 0, 'the simulated SGLang kept its kernels');
    const warm = await forecast(insights);
    assert.ok(warm.text, 'a forecast');
    assert.doesNotMatch(warm.text, /DeepGEMM/, `kernels cached, yet: ${warm.text}`);
    assert.equal(warm.prior.foreseenSteps, undefined);

    // the cache is lost (a container recreated without a volume for it) and not kept from now on
    fs.rmSync(cacheDir, { recursive: true, force: true });
    await host.configureSimulator({ deepGemm: { ...COMPILE, keep: false } });
    const cold = await forecast(insights);
    const question = restartQuestion(test.session.profile, expectedLoadTime(cold), false);
    const said = question.lines.join('\n');
    assert.match(said, /Expected load time: ~\d+ (s|min): \d+% of the weights are cached; the DeepGEMM kernel cache/);
    assert.ok(said.includes(`(${cacheDir}) is empty: this start compiles its kernels first, about 2m 30s`), said);
    assert.match(
      cold.advice ?? '',
      /SGLANG_DG_CACHE_DIR to a persistent folder .*Docker volume.*python3 -m sglang\.compile_deep_gemm/,
    );
    assert.deepEqual(
      cold.prior.foreseenSteps?.map((s) => [s.kind, s.dir]),
      [['deepgemm', cacheDir]],
    );

    const states: LoadState[] = [];
    const load = await test.session.watch('restart', FAST_WATCH, { onState: (s) => states.push(s) }, cold.prior);
    assert.equal(load.end, 'ready', `${load.end}: ${load.message}`);
    const shown = states.filter((s) => s.eta !== undefined && s.readyAt === undefined);
    assert.ok(shown.length > 0, 'an ETA was shown');
    const named = shown.findIndex((s) => s.activity?.kind === 'deepgemm');
    assert.ok(
      named > 0,
      `the compile was named while it ran (${shown.map((s) => s.activity?.kind ?? s.phase).join(', ')})`,
    );
    // before the compile began, from the first estimate on, every ETA held it and said why
    for (const s of shown.slice(0, named)) {
      const tooltip = etaTooltip(s, s.eta!, s.eta!.at);
      assert.match(
        tooltip,
        /a kernel compile foreseen \(empty cache\): deepgemm about 150 s/,
        `${s.phase}: ${tooltip}`,
      );
      assert.ok(s.eta!.readyAt - s.eta!.at >= 60_000, `${s.phase}: ${tooltip}`);
    }
    // while it ran, its foreseen length timed it
    const during = shown[named]!;
    assert.match(
      etaTooltip(during, during.eta!, during.eta!.at),
      /foreseen before the restart \(an empty kernel cache\)/,
    );
    assert.ok(!fs.existsSync(cacheDir) || fs.readdirSync(cacheDir).length === 0, 'not kept: the cache stays empty');
  });
});
