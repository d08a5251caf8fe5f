/**
 * Advice with its evidence: what would cut the largest phase of a load, named only when this
 * load's log, the unit's command line and the host show the reason, with the published figure
 * and where it was published. Pure; the words are present/words/adviceWords.ts, the catalogue of
 * figures and versions ./catalogue.ts.
 */
import { getFlag } from '../execStart';
import type { EngineId as Engine } from '../engine';
import type { LoadPhase } from '../events';
import { atLeast, type EngineVersion } from './version';
import type { LogFacts } from './logFacts';
import { CATALOGUE, type AdviceId } from './catalogue';
import * as words from '../../present/words/adviceWords';

/** What the host says, where known. */
export interface HostFacts {
  /** MemAvailable of /proc/meminfo, bytes. */
  readonly memAvailableBytes?: number;
  /** Size of the model's weight files, bytes. */
  readonly modelBytes?: number;
  /** Share (0..1) of the weights in the page cache when this load began (the load history's). */
  readonly residentShareAtStart?: number;
  /** Filesystem type of the model's folder (`stat -f -c %T`): ext2/ext3, xfs, nfs, lustre, ... */
  readonly fsType?: string;
  /** Environment variables of the unit (names only matter). */
  readonly environment?: Readonly<Record<string, string>>;
}

export interface AdviceInput {
  readonly engine: Engine;
  /** The server's command line, as the unit (or container) runs it. */
  readonly argv: readonly string[];
  readonly log: LogFacts;
  readonly host: HostFacts;
  /** The engine's version on the host; undefined when neither the log nor the host said it. */
  readonly version: EngineVersion | undefined;
  /** Below this a phase is never worth advice (default 20 s; the simulated host's loads take seconds). */
  readonly minPhaseMs?: number;
}

/** A change of the server's command line that applying the advice makes. */
export interface ArgvChange {
  readonly flag: string;
  /** undefined: a switch without a value. */
  readonly value?: string;
}

export interface Advice {
  readonly id: AdviceId;
  readonly title: string;
  /** The phase it would cut. */
  readonly phase: LoadPhase;
  /** What in this load shows the reason: each an observed fact. */
  readonly evidence: readonly string[];
  /** The published figure, in its own numbers. */
  readonly figure: string;
  /** Where: links to the issue/PR/doc. */
  readonly sources: readonly string[];
  /** What to do, in words (a command line change, a command to run once). */
  readonly action: string;
  /** The command-line change, when the advice is one. */
  readonly change?: ArgvChange;
  /** Why it cannot be applied from here (version unknown, not a flag), when it cannot. */
  readonly notApplicable?: string;
}

/** An advice whose evidence was present but that was held back, and why (for the log). */
export interface HeldBack {
  readonly id: AdviceId;
  readonly reason: string;
}

export interface AdviceResult {
  readonly advice: readonly Advice[];
  readonly heldBack: readonly HeldBack[];
  /** The largest phase of the load, when there is one. */
  readonly largest: { readonly phase: LoadPhase; readonly ms: number } | undefined;
}

/** A phase counts as "large" from this share of the load on, or when it is the largest. */
const LARGE_SHARE = 0.2;
/** Below this, no phase is worth advice. */
export const MIN_PHASE_MS = 20_000;

export function largestPhase(log: LogFacts): { phase: LoadPhase; ms: number } | undefined {
  let best: { phase: LoadPhase; ms: number } | undefined;
  for (const [phase, ms] of Object.entries(log.phaseMs) as [LoadPhase, number][]) {
    if (phase === 'ready') continue;
    if (!best || ms > best.ms) best = { phase, ms };
  }
  return best;
}

function isLarge(log: LogFacts, phase: LoadPhase, minMs: number): boolean {
  const ms = log.phaseMs[phase] ?? 0;
  if (ms < minMs) return false;
  return largestPhase(log)?.phase === phase || (log.totalMs > 0 && ms / log.totalMs >= LARGE_SHARE);
}

function minOf(input: AdviceInput): number {
  return input.minPhaseMs ?? MIN_PHASE_MS;
}

export function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return `${m}m ${String(s % 60).padStart(2, '0')}s`;
}

/** The phases advice cuts, with how each says what it took. */
const PHASE_TOOK = {
  'loading weights': words.loadingWeightsTook,
  'capturing CUDA graphs': words.capturingGraphsTook,
} as const;

function phaseEvidence(log: LogFacts, phase: keyof typeof PHASE_TOOK): string {
  const ms = log.phaseMs[phase] ?? 0;
  return PHASE_TOOK[phase](formatMs(ms), formatMs(log.totalMs), largestPhase(log)?.phase === phase);
}

function hasFlag(argv: readonly string[], flag: string): boolean {
  return argv.some((a) => a === flag || a.startsWith(flag + '='));
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

type Draft = Omit<Advice, 'figure' | 'sources' | 'notApplicable'>;

/** The rules, each `undefined` when its evidence is absent. */
const RULES: ReadonlyArray<(input: AdviceInput) => Draft | undefined> = [
  multiThreadLoad,
  vllmPrefetch,
  deepGemmPrecompile,
  cudaGraphMaxBs,
  warmCache,
];

export function advise(input: AdviceInput): AdviceResult {
  const advice: Advice[] = [];
  const heldBack: HeldBack[] = [];
  for (const rule of RULES) {
    const draft = rule(input);
    if (!draft) continue;
    const entry = CATALOGUE[draft.id];
    let notApplicable: string | undefined;
    if (entry.minVersion !== undefined) {
      const name = input.engine === 'vllm' ? 'vLLM' : 'SGLang';
      const proven = entry.provenByLog?.(input.log) === true;
      if (!proven && input.version === undefined) {
        notApplicable = words.versionUnknown(name, entry.minVersion, draft.change?.flag);
      } else if (!proven && input.version) {
        const ok = atLeast(input.version.text, entry.minVersion);
        if (ok === undefined) {
          notApplicable = words.versionNotARelease(name, input.version.text, input.version.source);
        } else if (!ok) {
          heldBack.push({
            id: draft.id,
            reason: words.versionPredates(
              name,
              input.version.text,
              input.version.source,
              entry.minVersion,
              draft.change?.flag ?? draft.title,
            ),
          });
          continue;
        }
      }
    }
    if (!draft.change && notApplicable === undefined) notApplicable = entry.manual?.();
    advice.push({
      ...draft,
      figure: entry.figure(),
      sources: entry.sources,
      ...(notApplicable !== undefined ? { notApplicable } : {}),
    });
  }
  return { advice, heldBack, largest: largestPhase(input.log) };
}

// ------------------------------------------------------------------------------ rules

const LOADER_THREADS = 8;
const MULTITHREAD_CONFIG = `{"enable_multithread_load": true, "num_threads": ${LOADER_THREADS}}`;
const LOADER_FLAG = '--model-loader-extra-config';

function multiThreadLoad(input: AdviceInput): Draft | undefined {
  const { engine, argv, log } = input;
  if (engine !== 'sglang' || !isLarge(log, 'loading weights', minOf(input))) return undefined;
  if (log.shardLoader === 'multi-thread') return undefined;
  if (hasFlag(argv, LOADER_FLAG)) return undefined;
  const format = getFlag(argv, '--load-format');
  if (format !== undefined && !['auto', 'safetensors', 'pt'].includes(format)) return undefined;
  return {
    id: 'sglang-multithread-load',
    title: words.multiThreadLoadTitle(LOADER_THREADS),
    phase: 'loading weights',
    evidence: [
      phaseEvidence(log, 'loading weights'),
      log.shardLoader === 'single-thread'
        ? words.singleThreadLoaderSeen('"Loading safetensors checkpoint shards"')
        : words.flagNotSet(LOADER_FLAG),
    ],
    action: words.addFlag(`${LOADER_FLAG} '${MULTITHREAD_CONFIG}'`),
    change: { flag: LOADER_FLAG, value: MULTITHREAD_CONFIG },
  };
}

const NETWORK_FS = /^(nfs4?|lustre)$/i;

function vllmPrefetch(input: AdviceInput): Draft | undefined {
  const { engine, argv, log, host } = input;
  if (engine !== 'vllm' || !isLarge(log, 'loading weights', minOf(input))) return undefined;
  if (hasFlag(argv, '--safetensors-load-strategy')) return undefined;
  // vLLM refuses the two together (`enable_multithread_load does not support ... 'prefetch'`).
  if (/enable_multithread_load/.test(getFlag(argv, LOADER_FLAG) ?? '')) return undefined;
  const cold = host.residentShareAtStart !== undefined && host.residentShareAtStart < 0.5;
  const offOn = log.autoPrefetchDisabledOn;
  const fsKnownLocal = host.fsType !== undefined && !NETWORK_FS.test(host.fsType);
  if (!offOn && !(cold && fsKnownLocal)) return undefined;
  // Prefetch reads into the page cache: the weights must fit (vLLM's own guard: 90 % of available RAM).
  if (
    host.memAvailableBytes !== undefined &&
    host.modelBytes !== undefined &&
    host.modelBytes > 0.9 * host.memAvailableBytes
  )
    return undefined;
  const evidence = [phaseEvidence(log, 'loading weights')];
  if (offOn) evidence.push(words.autoPrefetchOff(offOn));
  else evidence.push(words.readCold(Math.round((host.residentShareAtStart ?? 0) * 100), host.fsType));
  if (host.memAvailableBytes !== undefined && host.modelBytes !== undefined)
    evidence.push(words.weightsFit(gib(host.modelBytes), gib(host.memAvailableBytes)));
  return {
    id: 'vllm-prefetch',
    title: words.prefetchTitle(),
    phase: 'loading weights',
    evidence,
    action: words.addFlag('--safetensors-load-strategy prefetch'),
    change: { flag: '--safetensors-load-strategy', value: 'prefetch' },
  };
}

function deepGemmPrecompile({ engine, argv, log, host }: AdviceInput): Draft | undefined {
  if (engine !== 'sglang') return undefined;
  const ms = log.activityMs.deepgemm;
  if (ms === undefined) return undefined;
  const cacheDir = host.environment?.['SGLANG_DG_CACHE_DIR'];
  const model = getFlag(argv, '--model-path') ?? getFlag(argv, '--model') ?? 'MODEL';
  const tp = getFlag(argv, '--tp') ?? getFlag(argv, '--tp-size') ?? getFlag(argv, '--tensor-parallel-size');
  return {
    id: 'deepgemm-precompile',
    title: words.deepGemmTitle(),
    phase: 'capturing CUDA graphs',
    evidence: [
      words.deepGemmCompiled(formatMs(ms), '"Entering DeepGEMM JIT Pre-Compile session"'),
      cacheDir ? words.deepGemmCacheSetYetCompiled(cacheDir) : words.deepGemmCacheUnset(),
    ],
    action: words.deepGemmAction(`python3 -m sglang.compile_deep_gemm --model ${model}${tp ? ` --tp ${tp}` : ''}`),
  };
}

/** SGLang's default list went up to 160 before sgl-project/sglang#10372, wider after. */
const GRAPH_BS_SUGGESTED = 128;

function cudaGraphMaxBs(input: AdviceInput): Draft | undefined {
  const { engine, argv, log } = input;
  if (engine !== 'sglang') return undefined;
  if (hasFlag(argv, '--disable-cuda-graph') || hasFlag(argv, '--cuda-graph-bs')) return undefined;
  // A DeepGEMM compile inside the capture is the other rule's: what is left must be large by itself.
  const compileMs = log.activityMs.deepgemm ?? 0;
  const captureMs = Math.max(0, (log.phaseMs['capturing CUDA graphs'] ?? 0) - compileMs);
  const withoutCompile: LogFacts = {
    ...log,
    phaseMs: { ...log.phaseMs, 'capturing CUDA graphs': captureMs },
    totalMs: log.totalMs - compileMs,
  };
  if (!isLarge(withoutCompile, 'capturing CUDA graphs', minOf(input))) return undefined;
  const set = getFlag(argv, '--cuda-graph-max-bs');
  const largestBs = log.graphBatchSizes?.length ? Math.max(...log.graphBatchSizes) : undefined;
  const current = set !== undefined ? Number(set) : largestBs;
  if (current !== undefined && current <= GRAPH_BS_SUGGESTED) return undefined;
  const evidence = [phaseEvidence(withoutCompile, 'capturing CUDA graphs')];
  if (compileMs > 0) evidence.push(words.withoutDeepGemm(formatMs(compileMs)));
  if (log.graphBatchSizes?.length) evidence.push(words.batchSizesCaptured(log.graphBatchSizes.length, largestBs));
  evidence.push(set !== undefined ? words.flagIs('--cuda-graph-max-bs', set) : words.flagNotSet('--cuda-graph-max-bs'));
  return {
    id: 'cuda-graph-max-bs',
    title: words.graphMaxBsTitle(GRAPH_BS_SUGGESTED),
    phase: 'capturing CUDA graphs',
    evidence,
    action: words.graphMaxBsAction('--cuda-graph-max-bs', GRAPH_BS_SUGGESTED),
    change: { flag: '--cuda-graph-max-bs', value: String(GRAPH_BS_SUGGESTED) },
  };
}

function warmCache(input: AdviceInput): Draft | undefined {
  const { log, host } = input;
  if (!isLarge(log, 'loading weights', minOf(input))) return undefined;
  if (host.residentShareAtStart === undefined || host.residentShareAtStart >= 0.5) return undefined;
  if (host.memAvailableBytes === undefined || host.modelBytes === undefined) return undefined;
  // The same margin as the pre-warm's own plan (host/pageCache.ts planWarm).
  if (host.modelBytes > host.memAvailableBytes * 0.9) return undefined;
  return {
    id: 'warm-page-cache',
    title: words.warmCacheTitle(),
    phase: 'loading weights',
    evidence: [
      phaseEvidence(log, 'loading weights'),
      words.residentAtStart(Math.round(host.residentShareAtStart * 100)),
      words.weightsFit(gib(host.modelBytes), gib(host.memAvailableBytes)),
    ],
    action: words.warmCacheAction(),
  };
}
