/**
 * The rules every engine's log shares, around the engine's own words (engine.ts `LogGrammar`):
 * first systemd's messages and the start of a traceback, then the engine's words, then uvicorn
 * (both engines serve through it), the safetensors shard bar, and the errors any Python/CUDA/NCCL process prints. Pure.
 */
import { distributedProblem } from './distributed';
import type { JournalEvent } from './events';
import { stripAnsi, stripPrefix } from './logGrammar';
import { causeKind } from './rootCause';

/**
 * One engine's words: one line (prefixes stripped, trimmed) -> its events, or undefined when
 * the line is none of the engine's (the shared rules then read it). `indented`: the line began
 * with white space (a traceback's code line). Each stream gets its own (`words()`): the engine
 * may remember what the previous lines said.
 */
export type EngineWords = (text: string, indented: boolean, ctx: LineContext) => JournalEvent[] | undefined;

/** How an engine's log reads. */
export interface LogGrammar {
  /** Fresh words for one stream of lines. */
  words(): EngineWords;
}

/** Reading a stream needs to know whether the previous lines opened a traceback. */
export interface LineContext {
  inTraceback: boolean;
  /** The last source line of the traceback being read (`assert self.store_dtype == torch.uint8`). */
  lastCode?: string;
  /** Lines still taken as the explanation of an exception with an empty message. */
  explain?: number;
  /** A traceback's exception line was just read (no log record since): another one is not taken outside a traceback. */
  afterException?: boolean;
  /** The engine's words of this stream (made on first use). */
  words?: EngineWords;
}

/** Several engines' words, tried in order (the reader of a log whose engine is not known). */
export function eitherGrammar(...grammars: readonly LogGrammar[]): LogGrammar {
  return {
    words() {
      const all = grammars.map((g) => g.words());
      return (text, indented, ctx) => {
        for (const words of all) {
          const events = words(text, indented, ctx);
          if (events) return events;
        }
        return undefined;
      };
    },
  };
}

/**
 * The shard-progress regex of the reference: SGLang's own loader's bar, and the safetensors
 * loader's that SGLang and vLLM both draw.
 */
export const SHARD_PROGRESS =
  /(?:Multi-thread loading shards|Loading safetensors checkpoint shards):\s+(\d+)% Completed \| (\d+)\/(\d+)/;
const UVICORN_RUNNING = /Uvicorn running on (\S+)/;
const ACCESS_LOG = /^(?:INFO:\s+)?\S+:\d+ - "[A-Z]+ [^"]* HTTP\/[\d.]+" \d{3}/;
const TRACEBACK = /Traceback \(most recent call last\):/;
/** `torch.OutOfMemoryError: CUDA out of memory...` at line start, after a traceback. */
export const EXCEPTION_LINE = /^(?=[A-Za-z_])[\w.]*(?:Error|Exception|Interrupt|Exit)(?::(?:\s.*)?)?$/;
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
/** Phrases that end a load whatever the engine (SGLang's scheduler and warm-up words among them: they also head tracebacks). */
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

/** How systemd's journal says a main process ended: "<unit>: Main process exited, code=exited, status=1/FAILURE". */
export interface MainProcessExit {
  /** systemd's word: exited, killed or dumped. */
  readonly code: string;
  /** The exit status, or the signal's number. */
  readonly status: number;
}

/** The main process's end a systemd journal line tells, or undefined for any other line. */
export function mainProcessExit(line: string): MainProcessExit | undefined {
  const m = /: Main process exited, code=(\w+), status=(\d+)\//.exec(line);
  return m ? { code: m[1]!, status: Number(m[2]) } : undefined;
}

/** One clean line (prefix not yet stripped) -> events, the engine's words read between the shared rules. */
export function parseLine(rawLine: string, ctx: LineContext, grammar: LogGrammar): JournalEvent[] {
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

  // systemd's messages never carry an engine's prefix.
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

  const isIndented = /^\s/.test(t0);
  const own = (ctx.words ??= grammar.words())(text, isIndented, ctx);
  if (own) return own;

  const shard = SHARD_PROGRESS.exec(text);
  if (shard) {
    return [{ type: 'shards', percent: Number(shard[1]), done: Number(shard[2]), total: Number(shard[3]) }];
  }

  const uv = UVICORN_RUNNING.exec(text);
  if (uv)
    return [
      { type: 'phase', phase: 'warming up' },
      { type: 'httpUp', url: uv[1] ?? '' },
    ];
  if (/Application startup complete\./.test(text)) return [{ type: 'phase', phase: 'warming up' }, { type: 'httpUp' }];

  return errorEvents(rawLine, t0, text, record, ctx);
}

/** The errors any engine prints: distributed faults, fatal phrases, exceptions, OOM, CUDA, C++ and NCCL. */
function errorEvents(
  rawLine: string,
  t0: string,
  text: string,
  record: boolean | undefined,
  ctx: LineContext,
): JournalEvent[] {
  // Multi-node: a rendezvous or NCCL timeout, a rank that did not finish loading (./distributed).
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
