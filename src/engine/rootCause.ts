/**
 * Why a load failed, from its error lines (LoadState.failure.lines): the root cause, not the
 * last line (docs/real-logs.md). Pure. The first exception of the first rank that
 * failed (the last of its chain: "During handling of the above exception..."), or a line that
 * says why by itself (an argparse error, out of memory, an NCCL watchdog timeout, a port in
 * use, a CUDA/HIP error, a signal); the lines that only say that something ended ("Scheduler
 * hit an exception", "Received sigquit", "Rank 0 scheduler died", "EngineCore failed to
 * start", systemd's "Main process exited") come after it, never instead of it.
 * Every front (notification, tooltip, servers view, CLI/MCP/LM reports) shows `formatCause`.
 */
import { distributedProblem } from './distributed';
import { stripAnsi, stripPrefix } from './logGrammar';

/** What a line says about a failure. */
export type LineClass =
  /** Says why by itself. */
  | 'cause'
  /** A traceback's last line: `TypeError: ...`, a bare `AssertionError`. */
  | 'exception'
  /** The engine's words that it ended, not why. */
  | 'engine-end'
  /** An echo of the end: a child's death seen by its parent, systemd's lines, a traceback's header. */
  | 'echo'
  /** Python's chaining of two exceptions. */
  | 'chain'
  /** A traceback's source line (`raise ValueError(...`, `assert x == y`): it explains an exception, it is not one. */
  | 'code';

export type CauseKind =
  | 'argparse'
  | 'out-of-memory'
  | 'oom-killer'
  | 'distributed'
  | 'address-in-use'
  | 'device-error'
  | 'warmup'
  | 'signal'
  | 'kv-cache';

const CODE = /^(?:raise |File "|assert |return |self\.)/;
const CHAIN =
  /^(?:During handling of the above exception, another exception occurred|The above exception was the direct cause of the following exception):?$/;

const ENGINE_END: readonly RegExp[] = [
  /hit an exception/,
  /Rank \d+ scheduler died during initialization/,
  /scheduler is dead/i,
  /EngineCore failed to start\./,
  /Engine core initialization failed/,
  /EngineCore encountered a fatal error/,
  /EngineDeadError/,
  /WorkerProc (?:failed to start|hit an exception)/,
  /initialization failed due to an exception in a background process/,
  /died unexpectedly/,
  /^Killed$/,
  /^Exit code: -?\d+/,
];

const ECHO: readonly RegExp[] = [
  /Received sigquit/i,
  /^\S+: Main process exited, code=/,
  /^\S+: Failed with result '/,
  /^\S+: Scheduled restart job/,
  /^\S+: Consumed .* CPU time/,
  /^Failed to start .+/,
  /^Traceback \(most recent call last\):?$/,
];

/**
 * argparse: one line, `prog: error: ...` (exit status 2); the `usage:` block before it is often
 * missing. Without the program's name when a server raises SystemExit('error: ...') itself (exit 1).
 */
const ARGPARSE =
  /^(?:(?:[\w.-]+\.py|vllm(?: serve)?|sglang(?: serve)?|python3? -m [\w.]+): error: |error: (?:unrecognized arguments|argument -|the following arguments are required|ambiguous option|one of the arguments))/;

const CAUSES: ReadonlyArray<[RegExp, CauseKind]> = [
  [ARGPARSE, 'argparse'],
  [/^Initialization failed\. warmup error/, 'warmup'],
  [/killed by the OOM killer|Out of memory: Killed process|oom-kill/i, 'oom-killer'],
  [/out of memory|OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|hipErrorOutOfMemory/i, 'out-of-memory'],
  [
    /No available memory for the cache blocks|larger than the available KV cache memory|is less than desired GPU memory utilization/,
    'kv-cache',
  ],
  // uvicorn / Python (`[Errno 98] Address already in use`), SGLang (`port at 30000 is not available in 30 seconds ... used by a process already`).
  [
    /address already in use|error while attempting to bind on address|port \d+ is (?:already )?in use|port at \d+ is not available|is used by a process already/i,
    'address-in-use',
  ],
  [
    /Watchdog caught collective operation timeout|watchdog got stuck|Process group watchdog thread terminated|Some NCCL operations have failed or timed out|NCCL error|nccl(?:System|Internal|UnhandledCuda|Remote|InvalidUsage)Error|DistBackendError|DistStoreError/,
    'distributed',
  ],
  // torch's c10d store and gloo (a rank that never answers), DeepEP's NVSHMEM bootstrap.
  [
    /\[c10d\].* timed out after \d+ms|wait timeout after \d+ms|Timed out waiting \d+ms for (?:send|recv) operation|received errors while waiting for send\/recv from rank|nvshmem setup connections failed|NVSHMEM ERROR/,
    'distributed',
  ],
  [
    /CUDA error|CUDA driver error|cudaError\w+|CUBLAS_STATUS_\w+|device-side assert|illegal memory access|HIP error|hipError\w+/,
    'device-error',
  ],
  [/Segmentation fault|Fatal Python error|Bus error|core dumped|terminate called after throwing/, 'signal'],
];

/** `torch.OutOfMemoryError: ...`, `Exception: Capture cuda graph failed: `, a bare `AssertionError`. */
const EXCEPTION = /^(?=[A-Za-z_])[\w.]*(?:Error|Exception|Interrupt|Exit|Failure)(?::.*)?$/;

/** The text of a line without its prefixes (SGLang's, vLLM's, torch's) and colours. */
export function lineText(line: string): string {
  return stripPrefix(stripAnsi(line).trim()).text.trim();
}

/** What one line (prefix stripped) says about a failure; undefined for anything else. */
export function classifyText(text: string): LineClass | undefined {
  if (CHAIN.test(text)) return 'chain';
  if (CODE.test(text)) return 'code';
  if (ENGINE_END.some((re) => re.test(text))) return 'engine-end';
  if (ECHO.some((re) => re.test(text))) return 'echo';
  if (causeKind(text)) return 'cause';
  if (EXCEPTION.test(text)) return 'exception';
  return undefined;
}

/** The kind of a line that says why by itself; undefined for any other line. */
export function causeKind(text: string): CauseKind | undefined {
  for (const [re, kind] of CAUSES) if (re.test(text)) return kind;
  return distributedProblem(text) ? 'distributed' : undefined;
}

export interface RootCause {
  /** The line that says why, without its prefix. */
  readonly cause: string;
  readonly kind: CauseKind | 'exception' | 'engine-end' | 'other';
  /**
   * What explains it: the source line of a bare exception (`assert x == y`), the block after an
   * exception with an empty message ("Possible solutions: ..."), the exception under a header.
   */
  readonly detail: readonly string[];
  /** The generic lines after it (not systemd's: the summary says how the process ended), distinct, at most 3. */
  readonly after: readonly string[];
}

interface Item {
  readonly text: string;
  readonly cls: LineClass | undefined;
}

const MAX_DETAIL = 4;
const MAX_AFTER = 3;
const HEADER_TRACEBACK = /:\s*Traceback \(most recent call last\):?$/;
const CONTINUES = /[,:;(]$/;

function strength(item: Item): number {
  return item.cls === 'cause' ? 2 : item.cls === 'exception' ? 1 : 0;
}

/** Skips lines of no class (detail, noise) and traceback headers from `from` on; the index of the next telling line. */
function nextTelling(items: readonly Item[], from: number, skipEcho: boolean): number {
  let i = from;
  while (
    i < items.length &&
    (items[i]!.cls === undefined || items[i]!.cls === 'code' || (skipEcho && items[i]!.cls === 'echo'))
  )
    i++;
  return i;
}

/** The exception a chain ends in ("During handling of the above exception, another exception occurred"). */
function endOfChain(items: readonly Item[], first: number): number {
  let best = first;
  let at = first;
  for (;;) {
    const next = nextTelling(items, at + 1, false);
    if (items[next]?.cls !== 'chain') return best;
    const raised = nextTelling(items, next + 1, true);
    const item = items[raised];
    if (!item || strength(item) === 0) return best;
    if (strength(item) >= strength(items[best]!)) best = raised;
    at = raised;
  }
}

export function rootCause(lines: readonly string[]): RootCause | undefined {
  const items: Item[] = [];
  for (const line of lines) {
    const text = lineText(line);
    if (text) items.push({ text, cls: classifyText(text) });
  }
  let at = items.findIndex((i) => strength(i) > 0);
  if (at >= 0) at = endOfChain(items, at);
  // A source line alone is never the cause: the engine's own words that it ended say more.
  else at = items.findIndex((i) => i.cls === undefined);
  if (at < 0) at = items.findIndex((i) => i.cls === 'engine-end');
  if (at < 0) return undefined;
  const chosen = items[at]!;

  const detail: string[] = [];
  let next = at + 1;
  // A message that goes on (`..., `, `...failed: `) continues on the next lines, whatever they match.
  const continues = CONTINUES.test(chosen.text);
  const isDetail = (item: Item): boolean =>
    item.cls === undefined || item.cls === 'code' || (continues && item.cls === 'cause');
  for (; next < items.length && isDetail(items[next]!) && detail.length < MAX_DETAIL; next++)
    detail.push(items[next]!.text);
  // A header that is the cause ("Initialization failed. warmup error: Traceback ..."): its exception explains it.
  if (HEADER_TRACEBACK.test(chosen.text) && detail.length === 0) {
    const raised = nextTelling(items, at + 1, true);
    if (items[raised]?.cls === 'exception' || items[raised]?.cls === 'cause') {
      detail.push(items[raised]!.text);
      next = raised + 1;
    }
  }

  const after: string[] = [];
  for (const item of items.slice(next)) {
    if (after.length >= MAX_AFTER) break;
    if (item.cls !== 'engine-end' && item.cls !== 'echo') continue;
    if (
      /^\S+\.service: |^Traceback \(most recent call last\)/.test(item.text) ||
      after.includes(item.text) ||
      item.text === chosen.text
    )
      continue;
    after.push(item.text);
  }
  const kind =
    chosen.cls === 'cause'
      ? (causeKind(chosen.text) ?? 'other')
      : chosen.cls === 'exception' || chosen.cls === 'engine-end'
        ? chosen.cls
        : 'other';
  return { cause: chosen.text, kind, detail, after };
}

const MAX_CAUSE_CHARS = 400;

/** The cause in one line: `AssertionError (assert x == y)`, `Exception: Capture cuda graph failed: Possible solutions: ...`. */
export function formatCause(cause: RootCause): string {
  const head = cause.cause.replace(HEADER_TRACEBACK, '').trim();
  let text = head;
  if (cause.detail.length > 0)
    text = CONTINUES.test(head) ? `${head} ${cause.detail.join(' ')}` : `${head} (${cause.detail.join('; ')})`;
  return text.length > MAX_CAUSE_CHARS ? `${text.slice(0, MAX_CAUSE_CHARS - 1)}…` : text;
}

/** The root cause of these error lines in one line, if any line tells one. */
export function causeText(lines: readonly string[]): string | undefined {
  const cause = rootCause(lines);
  return cause ? formatCause(cause) : undefined;
}
