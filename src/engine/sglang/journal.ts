/**
 * SGLang's and vLLM's journal, line by line, into typed events (../shared/reference/sglang-server.md §3,
 * docs/vllm-server.md; vLLM's own lines are read by ./vllmLog).
 * Pure: no I/O. `JournalReader` adds the little state a stream needs (rank de-duplication,
 * "are we inside a traceback").
 */
import { quote } from '../../transport/shell';
import { activityEvents } from '../activity';
import { detach } from '../../util/detach';
import { distributedProblem } from '../distributed';
import type { JournalEvent } from '../events';
import { splitLines, stripAnsi, stripPrefix, type StrippedLine } from '../logGrammar';
import { causeKind } from '../rootCause';
import { newVllmContext, parseVllmText, type VllmContext } from '../vllm/vllmLog';

export { stripPrefix, type StrippedLine };

// ---------------------------------------------------------------- commands

/**
 * Follows the unit's journal from `sinceEpochMs` on, as JSON: timestamps come with each entry
 * and tqdm's `\r` lines survive (as byte arrays); `-a` keeps fields over 4 KiB (else null).
 */
export function journalFollowCommand(unit: string, sinceEpochMs: number): string {
  const since = Math.max(0, Math.floor(sinceEpochMs / 1000));
  // Only the fields the monitor reads; the address fields always come, and are cut by ADDRESS_FIELD_CUT.
  const follow = `journalctl -u ${quote(unit)} -f -a -o json --output-fields=MESSAGE,_PID,SYSLOG_IDENTIFIER --no-pager --since ${quote('@' + since)}`;
  return `{ ${follow}; echo "@exit $?"; } | ${ADDRESS_FIELD_CUT}`;
}

/**
 * journalctl prints __CURSOR, _BOOT_ID (and, since systemd 254, __SEQNUM, __SEQNUM_ID) with every
 * entry whatever --output-fields says: about 200 of a line's ~300 bytes, none of it read here.
 * A loop of shell builtins (no process per line) drops them before the line crosses the network;
 * journalctl's exit status stays the command's (the `@exit` line).
 */
const ADDRESS_FIELD_CUT = [
  'while IFS= read -r l; do',
  '  case $l in "@exit "*) exit "${l#@exit }";; esac',
  '  for k in __CURSOR _BOOT_ID __SEQNUM_ID __SEQNUM; do',
  '    case $l in *"\\"$k\\":\\""*)',
  '      pre=${l%%"\\"$k\\":\\""*}; post=${l#*"\\"$k\\":\\""}; post=${post#*\\"}',
  '      case $post in ,*) post=${post#,};; *) pre=${pre%,};; esac',
  '      l=$pre$post;;',
  '    esac',
  '  done',
  '  printf \'%s\\n\' "$l"',
  'done',
].join('\n');

/** The last `lines` entries of the unit's journal, as JSON (for the cause of a failure). */
export function journalTailCommand(unit: string, lines: number): string {
  const n = Math.max(1, Math.min(100000, Math.floor(lines)));
  return `journalctl -u ${quote(unit)} -n ${n} -a -o json --no-pager`;
}

// ---------------------------------------------------------------- journalctl -o json

export interface JournalEntry {
  readonly message: string;
  /** Epoch milliseconds (from __REALTIME_TIMESTAMP, microseconds). */
  readonly at: number;
  readonly pid?: number;
  /** __MONOTONIC_TIMESTAMP in microseconds (same clock as systemd's *TimestampMonotonic). */
  readonly monotonicUs?: number;
  /** SYSLOG_IDENTIFIER, e.g. "systemd" for the manager's own words about the unit. */
  readonly identifier?: string;
}

/** One line of `journalctl -o json`; undefined for anything that is not an entry with a MESSAGE. */
export function parseJournalJsonLine(line: string): JournalEntry | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  const rec = obj as Record<string, unknown>;
  const message = decodeField(rec['MESSAGE']);
  if (message === undefined) return undefined;
  const usec = Number(decodeField(rec['__REALTIME_TIMESTAMP']));
  const at = Number.isFinite(usec) && usec > 0 ? Math.floor(usec / 1000) : Date.now();
  const pidNum = Number(decodeField(rec['_PID']));
  const monotonicUs = Number(decodeField(rec['__MONOTONIC_TIMESTAMP']));
  const identifier = decodeField(rec['SYSLOG_IDENTIFIER']);
  return {
    message,
    at,
    ...(Number.isSafeInteger(pidNum) && pidNum > 0 ? { pid: pidNum } : {}),
    ...(Number.isFinite(monotonicUs) && monotonicUs > 0 ? { monotonicUs } : {}),
    ...(identifier !== undefined ? { identifier } : {}),
  };
}

/**
 * A journal JSON field is a string, an array of byte values (binary or control characters,
 * e.g. tqdm's `\r`), null (too large without `-a`), or an array of those when repeated.
 */
function decodeField(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (!Array.isArray(v)) return undefined;
  if (v.length === 0) return '';
  if (v.every((b) => typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255)) {
    return Buffer.from(v as number[]).toString('utf8');
  }
  const parts = v.map(decodeField).filter((s): s is string => s !== undefined);
  return parts.length > 0 ? parts.join('\n') : undefined;
}

// ---------------------------------------------------------------- prefixes

/**
 * One journal MESSAGE -> its lines: tqdm joins updates with `\r`, tracebacks may span `\n`, a
 * log line may be glued to a bar's end; ANSI colour codes are dropped (./logGrammar).
 */
export function splitMessage(message: string): string[] {
  return splitLines(message);
}

// ---------------------------------------------------------------- line recognisers

/** The shard-progress regex of the reference (both tqdm descs). */
export const SHARD_PROGRESS =
  /(?:Multi-thread loading shards|Loading safetensors checkpoint shards):\s+(\d+)% Completed \| (\d+)\/(\d+)/;
const CUDA_GRAPH_BATCHES = /Capturing batches\b[^:]*:\s*(\d+)%\|[^|]*\|\s*(\d+)\/(\d+)/;
const CUDA_GRAPH_END = /^Capture (?:target decode )?cuda graph end\b/i;
const CUDA_GRAPH_BS = /^Capture cuda graph bs \[([\d,\s]*)\]/;
const LOAD_WEIGHT_END = /^Load weight end\.(.*)$/;
const KV_ALLOCATED = /^KV Cache is allocated\.(.*)$/;
const UVICORN_RUNNING = /Uvicorn running on (\S+)/;
const ACCESS_LOG = /^(?:INFO:\s+)?\S+:\d+ - "[A-Z]+ [^"]* HTTP\/[\d.]+" \d{3}/;
const TRACEBACK = /Traceback \(most recent call last\):/;
/** `torch.OutOfMemoryError: CUDA out of memory...` at line start, after a traceback. */
const EXCEPTION_LINE = /^(?=[A-Za-z_])[\w.]*(?:Error|Exception|Interrupt|Exit)(?::(?:\s.*)?)?$/;
const OOM = /CUDA out of memory|OutOfMemoryError|out of memory/i;
const CUDA_ERROR =
  /CUDA error:|CUDA driver error|NCCL error|cudaError|CUBLAS_STATUS_|device-side assert|HIP error:|hipError/;
/** Python chains two exceptions with one of these lines between their tracebacks. */
const CHAINED =
  /^(?:During handling of the above exception, another exception occurred|The above exception was the direct cause of the following exception):$/;
const TERMINATE = /^terminate called after throwing/;
const GLOG_ERROR = /^(?:\([^)]*pid=\d+[^)]*\) )?(?:\[rank\d+\]:)?\[?E\d{3,4} \d{2}:\d{2}:\d{2}/;
const NCCL_WARN_FAILED = /NCCL WARN .*(?:fail|error|timed? ?out|abort)/i;
/** Lines of explanation read after an exception whose message is empty (`Exception: Capture cuda graph failed: `). */
const EXPLANATION_LINES = 6;
const FATAL_PHRASES: readonly RegExp[] = [
  /^Initialization failed\. warmup error:/,
  /Received sigquit/i,
  /hit an exception/,
  /scheduler is dead/i,
  /^Killed$/,
  /^Exit code: -?\d+/,
  /has been killed by the OOM killer/,
];

const SYSTEMD_RULES: ReadonlyArray<
  [RegExp, 'started' | 'stopping' | 'stopped' | 'exited' | 'failed' | 'scheduled-restart']
> = [
  [/^\S+: Main process exited, code=\w+, status=/, 'exited'],
  [/^\S+: Failed with result '[^']*'/, 'failed'],
  [/^Failed to start .+/, 'failed'],
  [/^\S+: Scheduled restart job, restart counter is at \d+/, 'scheduled-restart'],
  [/^Started .+/, 'started'],
  [/^Stopping .+/, 'stopping'],
  [/^Stopped .+/, 'stopped'],
  [/^\S+\.service: Deactivated successfully\./, 'stopped'],
];

/** Reading a stream needs to know whether the previous lines opened a traceback. */
export interface JournalContext {
  inTraceback: boolean;
  /** The last source line of the traceback being read (`assert self.store_dtype == torch.uint8`). */
  lastCode?: string;
  /** Lines still taken as the explanation of an exception with an empty message. */
  explain?: number;
  /** A traceback's exception line was just read (no log record since): another one is not taken outside a traceback. */
  afterException?: boolean;
  /** vLLM's CUDA-graph bars seen so far (created on first use). */
  vllm?: VllmContext;
}

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function field(rest: string, name: string): string | undefined {
  // `[^,]*` then trim: a lazy `[^,]*?` before `\s*$` backtracks quadratically on a run of spaces.
  const m = new RegExp(`(?:^|[\\s,])${name}=([^,]*)`).exec(rest);
  return m?.[1]?.trim();
}

function gb(s: string | undefined): number | undefined {
  return num(s?.replace(/\s*GB\.?$/, ''));
}

/** One clean line (prefix not yet stripped) -> events. */
export function parseJournalLine(rawLine: string, ctx: JournalContext = { inTraceback: false }): JournalEvent[] {
  const { text: t0, prefixed, record } = stripPrefix(stripAnsi(rawLine.replace(/\r/g, '')));
  const text = t0.trim();
  if (!text) return [];
  if (ACCESS_LOG.test(text)) return [];

  // "Possible solutions: ..." after `Exception: Capture cuda graph failed: `: the explanation, until the next log record.
  if (ctx.explain) {
    if (record || TRACEBACK.test(text) || CHAINED.test(text)) ctx.explain = 0;
    else {
      ctx.explain--;
      return [{ type: 'error', text, fatal: false, detail: true }];
    }
  }
  if (CHAINED.test(text)) {
    ctx.inTraceback = true;
    return [{ type: 'error', text, fatal: false }];
  }

  // systemd's messages never carry SGLang's prefix.
  if (!prefixed) {
    for (const [re, what] of SYSTEMD_RULES) {
      if (re.test(text)) {
        const ev: JournalEvent[] = [{ type: 'systemd', what, text }];
        if (what === 'exited' && !/status=0\//.test(text)) ev.push({ type: 'error', text, fatal: true });
        return ev;
      }
    }
  }

  if (record) ctx.afterException = false;
  if (TRACEBACK.test(text)) {
    ctx.inTraceback = true;
    ctx.afterException = false;
    ctx.lastCode = undefined;
    return [{ type: 'error', text, fatal: FATAL_PHRASES.some((re) => re.test(text)) }];
  }

  const vllm = parseVllmText(text, (ctx.vllm ??= newVllmContext()));
  // A traceback's code line (`    raise ValueError("No available memory for the cache blocks. "`) is not the error it raises.
  if (vllm && /^\s/.test(t0) && vllm.every((e) => e.type === 'error')) {
    // fall through to the traceback rules below
  } else if (vllm) {
    if (vllm.some((e) => e.type === 'error') && !/^\s/.test(t0) && EXCEPTION_LINE.test(text)) ctx.inTraceback = false;
    return vllm;
  }

  if (text.startsWith('Init torch distributed begin')) return [{ type: 'phase', phase: 'starting' }];
  if (text.startsWith('Load weight begin')) return [{ type: 'phase', phase: 'loading weights' }];

  const shard = SHARD_PROGRESS.exec(text);
  if (shard) {
    return [{ type: 'shards', percent: Number(shard[1]), done: Number(shard[2]), total: Number(shard[3]) }];
  }

  const lwe = LOAD_WEIGHT_END.exec(text);
  if (lwe) {
    const rest = lwe[1] ?? '';
    const elapsed = num(field(rest, 'elapsed')?.replace(/\s*s$/, ''));
    const memUsage = gb(field(rest, 'mem usage'));
    const availMem = gb(field(rest, 'avail mem'));
    const modelType = field(rest, 'type');
    const dtype = field(rest, 'dtype');
    return [
      {
        type: 'weightsLoaded',
        ...(elapsed !== undefined ? { elapsedSeconds: elapsed } : {}),
        ...(memUsage !== undefined ? { memUsageGB: memUsage } : {}),
        ...(availMem !== undefined ? { availMemGB: availMem } : {}),
        ...(modelType ? { modelType } : {}),
        ...(dtype ? { dtype } : {}),
      },
    ];
  }

  if (text.startsWith('Using KV cache dtype') || text.startsWith('Memory pool end')) {
    return [{ type: 'phase', phase: 'allocating KV cache' }];
  }
  const kv = KV_ALLOCATED.exec(text);
  if (kv) {
    const rest = kv[1] ?? '';
    const tokens = num(/#tokens:\s*(\d+)/.exec(rest)?.[1]);
    const size = num(/KV size:\s*([\d.]+)\s*GB/.exec(rest)?.[1]);
    return [
      { type: 'phase', phase: 'allocating KV cache' },
      { type: 'kvCache', ...(tokens !== undefined ? { tokens } : {}), ...(size !== undefined ? { sizeGB: size } : {}) },
    ];
  }

  if (text.startsWith('Capture cuda graph begin')) return [{ type: 'phase', phase: 'capturing CUDA graphs' }];
  // Newer SGLang says "Capture target decode CUDA graph end. elapsed=...".
  if (CUDA_GRAPH_END.test(text)) return [{ type: 'phase', phase: 'capturing CUDA graphs' }, { type: 'graphsCaptured' }];
  const bs = CUDA_GRAPH_BS.exec(text);
  if (bs) {
    const total = (bs[1] ?? '').split(',').filter((s) => s.trim() !== '').length;
    return [
      { type: 'phase', phase: 'capturing CUDA graphs' },
      ...(total > 0 ? [{ type: 'cudaGraphBatches' as const, done: 0, total }] : []),
    ];
  }
  const cg = CUDA_GRAPH_BATCHES.exec(text);
  if (cg) return [{ type: 'cudaGraphBatches', done: Number(cg[2]), total: Number(cg[3]) }];

  const uv = UVICORN_RUNNING.exec(text);
  if (uv)
    return [
      { type: 'phase', phase: 'warming up' },
      { type: 'httpUp', url: uv[1] ?? '' },
    ];
  if (/Application startup complete\./.test(text)) return [{ type: 'phase', phase: 'warming up' }, { type: 'httpUp' }];

  if (text.includes('The server is fired up and ready to roll!')) return [{ type: 'ready' }];

  // Multi-node: a rendezvous or NCCL timeout, a rank that did not finish loading (server/distributed.ts).
  if (distributedProblem(text)) return [{ type: 'error', text, fatal: true }];
  if (/Health check failed/.test(text)) return [{ type: 'error', text, fatal: false }];
  if (FATAL_PHRASES.some((re) => re.test(text))) return [{ type: 'error', text, fatal: true }];

  // Exceptions: the final line of a traceback is unindented "SomeError: message".
  const isIndented = /^\s/.test(t0);
  if (!isIndented) {
    const ex = EXCEPTION_LINE.exec(text);
    const known = OOM.test(text) || CUDA_ERROR.test(text);
    // Outside a traceback too when it is not a log record and no traceback just ended: the head of the
    // traceback is cut off (a journal tail of N lines, a rank's header deduplicated away, a pasted excerpt).
    if (ex && (ctx.inTraceback || known || (!record && !ctx.afterException))) {
      ctx.inTraceback = false;
      ctx.afterException = true;
      // A request's exception does not end a server; OOM and CUDA errors do.
      const events: JournalEvent[] = [{ type: 'error', text, fatal: known }];
      // A bare `AssertionError` is explained by the line that raised it; an empty message by what follows.
      if (!text.includes(':') && ctx.lastCode)
        events.push({ type: 'error', text: ctx.lastCode, fatal: false, detail: true });
      else if (text.endsWith(':')) ctx.explain = EXPLANATION_LINES;
      ctx.lastCode = undefined;
      return events;
    }
  } else if (ctx.inTraceback && !/^File "/.test(text) && !/^[\^~\s]+$/.test(text)) {
    // Python 3.11's `^^^^` markers under the code line are not code.
    ctx.lastCode = text;
  }
  if (OOM.test(text) && /CUDA|GPU|HIP|torch/i.test(text)) return [{ type: 'error', text, fatal: true }];
  if (CUDA_ERROR.test(text) && !isIndented) return [{ type: 'error', text, fatal: true }];
  // What says why by itself in any engine's words (an argparse error, a port in use, a signal): ./rootCause.
  if (!isIndented && causeKind(text)) {
    // C++'s uncaught exception: its `what():` line (and where it was raised) follow.
    if (TERMINATE.test(text)) ctx.explain = 2;
    return [{ type: 'error', text, fatal: true }];
  }
  // torch's C++ errors (glog `E` stamps) and NCCL's warnings of a failure: worth showing, not a cause by themselves.
  if (GLOG_ERROR.test(rawLine) || NCCL_WARN_FAILED.test(text)) return [{ type: 'error', text, fatal: false }];
  return [];
}

/**
 * One journal MESSAGE -> events, in order. tqdm's updates arrive several to a message,
 * joined by `\r`; every update is taken.
 */
export function parseJournalMessage(message: string, ctx: JournalContext = { inTraceback: false }): JournalEvent[] {
  const out: JournalEvent[] = [];
  for (const line of splitMessage(message)) out.push(...lineEvents(line, ctx));
  return out;
}

/** One line's events: what it says of the load, then the quiet step it names (server/activity.ts). */
function lineEvents(line: string, ctx: JournalContext): JournalEvent[] {
  // The whole line: a logger prefix (`... - INFO - flashinfer.jit: `) can be part of the wording.
  return [...parseJournalLine(line, ctx), ...activityEvents(line)];
}

// ---------------------------------------------------------------- rank de-duplication

/**
 * With TP8, many lines come once per rank, differing only by the TPn tag. A line counts once
 * per `windowMs`: a second copy from another rank is dropped; the same rank saying the same
 * thing again is a real repeat and is kept.
 */
export class DedupeByRank {
  private readonly seen = new Map<string, { at: number; ranks: Set<string> }>();
  /** Lines remembered at most (the oldest go first), and the characters of a line a key keeps. */
  static readonly MAX_LINES = 4096;
  static readonly KEY_CHARS = 512;

  constructor(private readonly windowMs = 10_000) {}

  /** True when the message should be used. `at` is its time (epoch ms). */
  accept(message: string, at: number): boolean {
    const first = message.replace(/^\r+/, '');
    const { text, ranks } = stripPrefix(first);
    if (!ranks) return true;
    const key = keyOf(text.trim());
    const rank = ranks;
    this.prune(at);
    const entry = this.seen.get(key);
    if (!entry || at - entry.at > this.windowMs || entry.ranks.has(rank)) {
      this.seen.set(key, { at, ranks: new Set([rank]) });
      return true;
    }
    entry.ranks.add(rank);
    return false;
  }

  private prune(now: number): void {
    if (this.seen.size < DedupeByRank.MAX_LINES) return;
    for (const [k, v] of this.seen) if (now - v.at > this.windowMs) this.seen.delete(k);
    // Still full (a flood within one window): forget the oldest half, so a prune is rare.
    let excess = this.seen.size - DedupeByRank.MAX_LINES / 2;
    for (const k of this.seen.keys()) {
      if (excess-- <= 0) break;
      this.seen.delete(k);
    }
  }
}

/** One event and the line it came from (the text a signal carries: prefix kept, at most 300 characters). */
export interface ReadLine {
  readonly event: JournalEvent;
  readonly text: string;
}

const LINE_TEXT_CHARS = 300;

/** A long line is remembered by its length, head and tail, not whole. */
function keyOf(text: string): string {
  const n = DedupeByRank.KEY_CHARS;
  return detach(text.length <= 2 * n ? text : `${text.length}:${text.slice(0, n)}…${text.slice(-n)}`);
}

/** The stateful reader a journal follower uses: de-duplicates ranks, tracks tracebacks. */
export class JournalReader {
  private readonly ctx: JournalContext = { inTraceback: false };
  private readonly dedupe: DedupeByRank;

  constructor(windowMs = 10_000) {
    this.dedupe = new DedupeByRank(windowMs);
  }

  /** One journal entry's MESSAGE -> events (empty for a duplicate from another rank). */
  read(message: string, at: number): JournalEvent[] {
    return this.readLines(message, at).map((l) => l.event);
  }

  /** One journal entry's MESSAGE -> events, each with its own line (a message may hold several). */
  readLines(message: string, at: number): ReadLine[] {
    // An empty line ends a traceback's explanation block.
    if (message.trim() === '') {
      this.ctx.explain = 0;
      this.ctx.afterException = false;
      return [];
    }
    if (!this.dedupe.accept(message, at)) return [];
    const out: ReadLine[] = [];
    for (const line of splitMessage(message)) {
      for (const event of lineEvents(line, this.ctx)) {
        const text = event.type === 'error' && event.detail ? event.text : line.trim();
        out.push({ event, text: text.slice(0, LINE_TEXT_CHARS) });
      }
    }
    return out;
  }
}

// ---------------------------------------------------------------- journalctl's own complaints

/** The fix for a user who may not read the system journal. */
export const JOURNAL_ACCESS_FIX = 'sudo usermod -aG systemd-journal USER (then log in again)';

/**
 * What journalctl's stderr (and exit code, once it ended) say about reading the unit's journal:
 * undefined when nothing is wrong. A user outside `adm`/`systemd-journal` gets only the hint
 * (and no lines of a system unit) or "No journal files were opened" (and exit 1).
 */
export function journalProblem(
  stderrLines: readonly string[],
  exitCode: number | null | undefined,
): string | undefined {
  const text = stderrLines.join(' ').replace(/\s+/g, ' ').trim();
  if (/not seeing messages from other users and the system/i.test(text) || /insufficient permissions/i.test(text)) {
    return `the journal is not readable by this user (${text.slice(0, 200)})`;
  }
  if (exitCode !== undefined && exitCode !== null && exitCode !== 0) {
    return `journalctl exited with status ${exitCode}${text ? `: ${text.slice(0, 200)}` : ''}`;
  }
  return undefined;
}
