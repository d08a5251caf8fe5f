/**
 * The quiet steps the next start will take because a kernel cache is empty, foreseen before the
 * restart from what host/kernelCaches.ts read: SGLang's DeepGEMM JIT (block-FP8 and FP4 models on
 * Hopper and later), SGLang's torch.compile (piecewise CUDA graphs, --enable-torch-compile) and
 * vLLM's torch.compile. Each comes with its expected length (this server's previous loads, else
 * the published logs) and the cache folder found empty. Pure.
 */
import type { ActivityKind } from '../../engine/events';
import type { CacheDir, CacheDirKey, KernelCacheFacts } from '../../host/kernelCaches';

/** A quiet step the load is expected to take, and how long (ms). */
export interface ForeseenStep {
  readonly kind: ActivityKind;
  readonly ms: number;
  readonly lowMs: number;
  readonly highMs: number;
  /** The cache folder found empty (as the server's process sees it). */
  readonly dir: string;
  readonly from: 'history' | 'published logs';
}

export interface CompileForecast {
  readonly steps: readonly ForeseenStep[];
  /** The engine of the launch (how to keep its cache depends on it); absent when nothing was read. */
  readonly engine?: Launch['engine'];
}

/**
 * Lengths of a cold compile without history: DeepGEMM's pre-compile of one kernel shape took 44 s
 * in sg-10424 (the simulator's jit shape plays 150 s), SGLang itself says "typically 10-20 mins"
 * for all of a large MoE model's; SGLang's piecewise graphs 37 and 46 s (servekit logs); vLLM's
 * "torch.compile takes 17.00 s / 92.20 s in total" in the real logs.
 */
const DEFAULT_MS: Readonly<Partial<Record<ActivityKind, readonly [number, number, number]>>> = {
  deepgemm: [150_000, 60_000, 20 * 60_000],
  'piecewise-graphs': [45_000, 25_000, 120_000],
  'torch-compile': [60_000, 15_000, 300_000],
};

const HOPPER_OR_LATER = /\b(H100|H200|H800|H20|GH200|B100|B200|B300|GB200|GB300)\b/i;

function dir(facts: KernelCacheFacts, key: CacheDirKey): CacheDir | undefined {
  return facts.dirs.find((d) => d.key === key);
}

const off = (v: string | undefined): boolean => v !== undefined && /^(0|false|no|off)$/i.test(v.trim());

/** Whether this launch compiles DeepGEMM kernels: SGLang, JIT DeepGEMM on, a block-FP8 or FP4 model, Hopper or later. */
function usesDeepGemm(facts: KernelCacheFacts): boolean {
  if (off(facts.env.SGLANG_ENABLE_JIT_DEEPGEMM ?? facts.env.SGL_ENABLE_JIT_DEEPGEMM)) return false;
  const q = facts.quantization;
  const quantized = q !== undefined && ((q.method === 'fp8' && q.blockSize) || /fp4/i.test(q.method));
  return quantized && facts.gpus.length > 0 && facts.gpus.every((g) => HOPPER_OR_LATER.test(g));
}

/** The folder that decides, and whether it is empty: the variable's if set, else the defaults (either warm is warm). */
function cacheOf(facts: KernelCacheFacts, set: readonly CacheDirKey[], defaults: readonly CacheDirKey[]) {
  for (const key of set) {
    const d = dir(facts, key);
    if (d) return { path: d.path, empty: d.files === 0 };
  }
  const found = defaults.map((k) => dir(facts, k)).filter((d): d is CacheDir => d !== undefined);
  if (!found.length) return undefined;
  return { path: found[0]!.path, empty: found.every((d) => d.files === 0) };
}

function step(kind: ActivityKind, path: string, historyMs: number | undefined): ForeseenStep {
  const [ms, lowMs, highMs] = DEFAULT_MS[kind] ?? [60_000, 20_000, 300_000];
  if (historyMs !== undefined && historyMs > 0)
    return { kind, ms: historyMs, lowMs: historyMs * 0.7, highMs: historyMs * 1.5, dir: path, from: 'history' };
  return { kind, ms, lowMs, highMs, dir: path, from: 'published logs' };
}

export interface Launch {
  readonly engine: 'sglang' | 'vllm';
  readonly argv: readonly string[];
  /** The longest step of each kind in this server's previous loads, ms. */
  readonly historyMs?: Readonly<Partial<Record<ActivityKind, number>>>;
}

/** The steps an empty cache adds to this launch (present/compileForecastText.ts words them). */
export function foreseeCompiles(facts: KernelCacheFacts, launch: Launch): CompileForecast {
  if (!facts.readable) return { steps: [] };
  const steps: ForeseenStep[] = [];
  const has = (flag: string) => launch.argv.some((a) => a === flag || a.startsWith(`${flag}=`));
  if (launch.engine === 'sglang') {
    const dg = usesDeepGemm(facts)
      ? cacheOf(facts, ['deepgemm-env', 'deepgemm-root'], ['deepgemm-home', 'deepgemm-xdg'])
      : undefined;
    if (dg?.empty) steps.push(step('deepgemm', dg.path, launch.historyMs?.deepgemm));
    const compiles = has('--enable-piecewise-cuda-graph') || has('--enable-torch-compile');
    const inductor = compiles ? cacheOf(facts, ['inductor-env'], ['inductor-tmp']) : undefined;
    const kind: ActivityKind = has('--enable-piecewise-cuda-graph') ? 'piecewise-graphs' : 'torch-compile';
    if (inductor?.empty) steps.push(step(kind, inductor.path, launch.historyMs?.[kind]));
  } else {
    const eager =
      has('--enforce-eager') ||
      launch.argv.some((a, i) => /^-O0$|^-O=?0$/.test(a) || (a === '-O' && launch.argv[i + 1] === '0'));
    const vllm = eager ? undefined : cacheOf(facts, ['vllm-env'], ['vllm-xdg']);
    const disabled =
      !eager && facts.env.VLLM_DISABLE_COMPILE_CACHE !== undefined && !off(facts.env.VLLM_DISABLE_COMPILE_CACHE);
    if (vllm && (vllm.empty || disabled))
      steps.push(step('torch-compile', vllm.path, launch.historyMs?.['torch-compile']));
  }
  return { steps, engine: launch.engine };
}
