/**
 * The long, quiet steps of a load, named from the engine's own lines (docs/phases-and-stalls.md).
 * Pure. journal.ts asks `activityEvents` for every line, after its own rules; the reducer
 * (monitor/state/loadState.ts) keeps the step under way and names it in the extension's words.
 *
 * Wordings, from the engines' source:
 * - SGLang deep_gemm_wrapper/compile_utils.py: `Entering DeepGEMM JIT Pre-Compile session. It may
 *   take a long time (typically 10-20 mins) ...` (older: `Pre-Complie`), `Try DeepGEMM JIT
 *   Compiling for <GEMM_NT_F8F8BF16> N=..., K=..., num_groups=... with all Ms.`, then a tqdm bar
 *   `DeepGEMM warmup:  45%|...| 7373/16384 [...]`; vLLM's deep_gemm_warmup.py: a bar
 *   `DeepGemm(fp8_gemm_nt) warmup (W=torch.Size([...])): ...`.
 * - vLLM's torch.compile (compilation/backends.py, monitor.py): `Using cache directory: ... for
 *   vLLM's torch.compile`, `Dynamo bytecode transform time: 1.81 s`, `Compiling a graph for
 *   dynamic shape takes 10.2 s` / `... for compile range (1, 2048) takes 90.39 s`, and the end
 *   `torch.compile takes 92.20 s in total`.
 * - SGLang's piecewise CUDA graphs (on by default in 2026 builds; model_executor/piecewise_cuda_graph_runner.py),
 *   after the decode graphs: `Capture piecewise CUDA graph begin. avail mem=13.32 GB`, a torch.compile
 *   bar `Compiling num tokens (num_tokens=8192):   2%|...| 1/58 [...]` (with `Compiling a graph for
 *   dynamic shape takes 2.02 s` lines inside), a capture bar `Capturing num tokens (num_tokens=8192
 *   avail_mem=11.93 GB):   0%|...| 0/58 [...]`, then `Capture piecewise CUDA graph end. Time elapsed:
 *   36.89 s.` (37-46 s in the servekit logs of test/fixtures/real-logs). The two bars count as one:
 *   the compile is the first half of its count, the capture the second.
 * - flashinfer's JIT (inside CUDA-graph capture and warm-up): `flashinfer.jit: Loading JIT ops:
 *   NAME` ... `flashinfer.jit: Finished loading JIT ops: NAME`; its autotuner: `[Autotuner]:
 *   Autotuning process starts ...` / `... ends`.
 * The regexes are not anchored: these lines come with their own timestamps and logger prefixes,
 * and may be glued to the end of a tqdm bar.
 */
import { ACTIVITY_WORDS } from '../present/words/activityWords';
import type { ActivityKind, JournalEvent } from './events';

/** What the monitor says while a step is under way (every kind worded: the type says so). */
export const ACTIVITY_LABELS: Readonly<Record<ActivityKind, string>> = ACTIVITY_WORDS;

/** The step under way, as LoadState keeps it. */
export interface Activity {
  readonly kind: ActivityKind;
  /** When it began (epoch ms). */
  readonly since: number;
  /** Its own bar, when it prints one (DeepGEMM warmup). */
  readonly done?: number;
  readonly total?: number;
  readonly note?: string;
}

/** "compiling DeepGEMM kernels (...) 7373/16384", "processing weights after the last shard (2 ranks done)". */
export function activityLabel(activity: Activity): string {
  const count =
    activity.done !== undefined && activity.total !== undefined ? ` ${activity.done}/${activity.total}` : '';
  return `${ACTIVITY_LABELS[activity.kind]}${count}${activity.note ? ` (${activity.note})` : ''}`;
}

// Bounded repeats: a line of many half-matches must not cost a pass per position.
const BAR = String.raw`:\s{0,8}(\d+)%\|[^|]{0,200}\|\s{0,8}(\d+)\/(\d+)`;

const RULES: ReadonlyArray<{
  readonly re: RegExp;
  readonly kind: ActivityKind;
  readonly edge: 'start' | 'progress' | 'end';
  /** A bar that is one half of its step's count (piecewise graphs: compile, then capture). */
  readonly half?: 'first' | 'second';
}> = [
  { re: /Entering DeepGEMM JIT Pre-Comp(?:ile|lie) session/i, kind: 'deepgemm', edge: 'start' },
  { re: /Try DeepGEMM JIT Compiling for\b/i, kind: 'deepgemm', edge: 'start' },
  { re: new RegExp(String.raw`DeepGEMM warmup${BAR}`), kind: 'deepgemm', edge: 'progress' },
  { re: new RegExp(String.raw`DeepGemm\(\w{1,60}\) warmup[^:|]{0,200}${BAR}`), kind: 'deepgemm', edge: 'progress' },
  { re: /Capture piecewise CUDA graph end\b/, kind: 'piecewise-graphs', edge: 'end' },
  { re: /Capture piecewise CUDA graph begin\b/, kind: 'piecewise-graphs', edge: 'start' },
  {
    re: new RegExp(String.raw`Compiling num tokens \(num_tokens=\d{1,7}\)${BAR}`),
    kind: 'piecewise-graphs',
    edge: 'progress',
    half: 'first',
  },
  {
    re: new RegExp(String.raw`Capturing num tokens \([^)]{0,80}\)${BAR}`),
    kind: 'piecewise-graphs',
    edge: 'progress',
    half: 'second',
  },
  { re: /torch\.compile takes [\d.]+ s in total/, kind: 'torch-compile', edge: 'end' },
  { re: /for vLLM's torch\.compile\b/, kind: 'torch-compile', edge: 'start' },
  { re: /Dynamo bytecode transform time: [\d.]+ s/, kind: 'torch-compile', edge: 'start' },
  { re: /Compiling a graph for (?:dynamic shape|compile range)/, kind: 'torch-compile', edge: 'start' },
  { re: /flashinfer\.jit: Finished loading JIT ops\b/, kind: 'flashinfer-jit', edge: 'end' },
  { re: /flashinfer\.jit: Loading JIT ops\b/, kind: 'flashinfer-jit', edge: 'start' },
  { re: /\[Autotuner\]: Autotuning process ends\b/, kind: 'autotune', edge: 'end' },
  { re: /\[Autotuner\]: Autotuning process starts\b/, kind: 'autotune', edge: 'start' },
];

const MAX_LINE = 16 * 1024;

/** One log line -> the quiet step it announces, if any (the rules are not anchored: any prefix may stand before). */
export function activityEvents(text: string): JournalEvent[] {
  // These lines are short; a huge line (a dump, hostile input) is not searched twelve times.
  if (text.length > MAX_LINE) return [];
  for (const rule of RULES) {
    const m = rule.edge === 'progress' ? lastBar(rule.re, text) : rule.re.exec(text);
    if (!m) continue;
    if (rule.edge === 'progress') {
      const done = Number(m[2]);
      const total = Number(m[3]);
      const [offset, scale] = rule.half === 'second' ? [total, 2] : rule.half === 'first' ? [0, 2] : [0, 1];
      return [{ type: 'activity', activity: rule.kind, edge: 'progress', done: offset + done, total: scale * total }];
    }
    return [{ type: 'activity', activity: rule.kind, edge: rule.edge }];
  }
  return [];
}

/** A bar's updates joined by carriage returns (one journal line when it closes): the last one is where it is. */
function lastBar(re: RegExp, text: string): RegExpExecArray | null {
  const updates = text.split('\r');
  for (let i = updates.length - 1; i >= 0; i--) {
    const m = re.exec(updates[i]!);
    if (m) return m;
  }
  return null;
}
