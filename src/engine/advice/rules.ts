/**
 * Advice with its evidence: what would cut the largest phase of a load, named only when this
 * load's log, the unit's command line and the host show the reason, with the published figure
 * and where it was published. Pure. The catalogue of figures and versions: ./catalogue.ts.
 */
import { getFlag } from '../execStart';
import type { EngineId as Engine } from '../engine';
import type { LoadPhase } from '../events';
import { atLeast, type EngineVersion } from './version';
import type { LogFacts } from './logFacts';
import { CATALOGUE, type AdviceId } from './catalogue';

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

function phaseEvidence(log: LogFacts, phase: LoadPhase, name: string): string {
  const ms = log.phaseMs[phase] ?? 0;
  const largest = largestPhase(log)?.phase === phase;
  return `${name} took ${formatMs(ms)} of ${formatMs(log.totalMs)}${largest ? ' (the largest phase)' : ''}`;
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
        notApplicable = `the ${name} version on the host is unknown (it needs ${entry.minVersion} or later): check that it accepts ${draft.change?.flag ?? 'this'} before you change anything`;
      } else if (!proven && input.version) {
        const ok = atLeast(input.version.text, entry.minVersion);
        if (ok === undefined) {
          notApplicable = `the ${name} version "${input.version.text}" (${input.version.source}) is not a release number`;
        } else if (!ok) {
          heldBack.push({
            id: draft.id,
            reason: `${name} ${input.version.text} (${input.version.source}) predates ${entry.minVersion}, the first release with ${draft.change?.flag ?? draft.title}`,
          });
          continue;
        }
      }
    }
    if (!draft.change && notApplicable === undefined) notApplicable = entry.manual;
    advice.push({
      ...draft,
      figure: entry.figure,
      sources: entry.sources,
      ...(notApplicable !== undefined ? { notApplicable } : {}),
    });
  }
  return { advice, heldBack, largest: largestPhase(input.log) };
}

// ------------------------------------------------------------------------------ rules

const MULTITHREAD_CONFIG = '{"enable_multithread_load": true, "num_threads": 8}';
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
    title: 'Load the weights with 8 threads',
    phase: 'loading weights',
    evidence: [
      phaseEvidence(log, 'loading weights', 'loading weights'),
      log.shardLoader === 'single-thread'
        ? 'the log shows the single-threaded loader ("Loading safetensors checkpoint shards")'
        : `${LOADER_FLAG} is not set`,
    ],
    action: `add ${LOADER_FLAG} '${MULTITHREAD_CONFIG}'`,
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
  const evidence = [phaseEvidence(log, 'loading weights', 'loading weights')];
  if (offOn) evidence.push(`vLLM said auto-prefetch is off on this filesystem (${offOn})`);
  else
    evidence.push(
      `the weights were read cold (${Math.round((host.residentShareAtStart ?? 0) * 100)} % in the page cache at the start) from ${host.fsType}, where vLLM does not prefetch by itself`,
    );
  if (host.memAvailableBytes !== undefined && host.modelBytes !== undefined)
    evidence.push(`the weights (${gib(host.modelBytes)}) fit in the available memory (${gib(host.memAvailableBytes)})`);
  return {
    id: 'vllm-prefetch',
    title: 'Prefetch the checkpoint into the page cache',
    phase: 'loading weights',
    evidence,
    action: 'add --safetensors-load-strategy prefetch',
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
    title: 'Pre-compile the DeepGEMM kernels once',
    phase: 'capturing CUDA graphs',
    evidence: [
      `this load compiled DeepGEMM kernels for ${formatMs(ms)} ("Entering DeepGEMM JIT Pre-Compile session")`,
      cacheDir
        ? `SGLANG_DG_CACHE_DIR is set (${cacheDir}) and the kernels were compiled anyway`
        : 'SGLANG_DG_CACHE_DIR is not set in the unit',
    ],
    action: `run once: python3 -m sglang.compile_deep_gemm --model ${model}${tp ? ` --tp ${tp}` : ''} (with the server's other arguments), and keep SGLANG_DG_CACHE_DIR on a persistent disk`,
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
  const evidence = [phaseEvidence(withoutCompile, 'capturing CUDA graphs', 'capturing CUDA graphs')];
  if (compileMs > 0) evidence.push(`(without the ${formatMs(compileMs)} of DeepGEMM compiling inside it)`);
  if (log.graphBatchSizes?.length)
    evidence.push(`${log.graphBatchSizes.length} batch sizes were captured, up to ${largestBs}`);
  evidence.push(set !== undefined ? `--cuda-graph-max-bs is ${set}` : '--cuda-graph-max-bs is not set');
  return {
    id: 'cuda-graph-max-bs',
    title: `Capture CUDA graphs up to batch size ${GRAPH_BS_SUGGESTED} only`,
    phase: 'capturing CUDA graphs',
    evidence,
    action: `set --cuda-graph-max-bs ${GRAPH_BS_SUGGESTED} (only if the server rarely runs more than ${GRAPH_BS_SUGGESTED} requests at once: larger batches then run without CUDA graphs)`,
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
    title: 'Warm the page cache before the restart',
    phase: 'loading weights',
    evidence: [
      phaseEvidence(log, 'loading weights', 'loading weights'),
      `${Math.round(host.residentShareAtStart * 100)} % of the weights were in the page cache when the load began`,
      `the weights (${gib(host.modelBytes)}) fit in the available memory (${gib(host.memAvailableBytes)})`,
    ],
    action: 'read the weights into the page cache before the next restart (the restart dialog offers it)',
  };
}
