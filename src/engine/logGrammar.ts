/**
 * The line grammar every engine's output shares, before any engine's own words are read
 * (docs/real-logs.md): ANSI colour codes, log lines glued to the end of a tqdm bar, and the
 * prefixes in front of the text (SGLang's `[date time TP0]`, vLLM's process tag and logger,
 * torch's `[rank0]:` and glog stamps, Python logging's `date - LEVEL - name:`, ROCm's `[aiter]`).
 * Pure. What the text then says is read by logRules.ts (every engine), each engine's words
 * (sglang/sglangLog.ts, vllm/vllmLog.ts) and rootCause.ts.
 */

// CSI sequences (colours, cursor moves) and the two-byte escapes; published logs keep them.
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.includes('\x1b') ? text.replace(ANSI, '') : text;
}

/**
 * The end of a tqdm bar: `[00:00<?, ?it/s]`, `[00:24<00:00,  6.20s/it]`, `[01:15<00:00, 2.44it/s]`.
 * A process that prints a log line while its bar has no newline yet glues the line to it.
 */
const BAR_END = /\[[\d:]+<[^\]\n]*?(?:it\/s|s\/it)\](?=\S)/g;

/** One physical line -> its logical lines: a log line glued to a tqdm bar's end comes apart. */
export function splitGlued(line: string): string[] {
  if (!line.includes('<')) return [line];
  const out: string[] = [];
  let start = 0;
  BAR_END.lastIndex = 0;
  for (let m = BAR_END.exec(line); m; m = BAR_END.exec(line)) {
    const end = m.index + m[0].length;
    out.push(line.slice(start, end));
    start = end;
  }
  out.push(line.slice(start));
  return out.filter((s) => s.length > 0);
}

/** One journal MESSAGE -> its lines: tqdm joins updates with `\r`, tracebacks may span `\n`, bars carry glued lines. */
export function splitLines(message: string): string[] {
  const out: string[] = [];
  for (const piece of stripAnsi(message).split(/[\r\n]+/)) {
    for (const line of splitGlued(piece)) {
      const trimmed = line.trimEnd();
      if (trimmed.trim().length > 0) out.push(trimmed);
    }
  }
  return out;
}

export interface StrippedLine {
  readonly text: string;
  /** Rank tags such as "TP0", "DP1 TP3 EP3", "rank6"; absent for the main process. */
  readonly ranks?: string;
  /** True when the line carried a logger's prefix (so it is not systemd's own words). */
  readonly prefixed: boolean;
  /** True when the prefix starts a new log record (a stamp or a level), not only a process tag. */
  readonly record?: boolean;
}

/** SGLang: `[2025-03-08 12:29:21 TP1] `, `[2026-05-13 02:15:17 DP3 TP3] `, `[2025-02-07 01:19:40 TP16] `, `[2024-12-13 01:44:59] `. */
// The rank tags are read within 256 characters, then checked: a repeated group over a 10 MB
// line (`[date TP1 TP1 ...` that never closes) overflows the regex engine's backtracking stack.
const SGLANG_PREFIX = /^\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?([^\]]{0,256})\]\s?/;
const RANK_TAGS = /^(?:\s+[A-Z]{1,4}\d+)*$/;
/** torch: `[rank6]:` before its own stamp. */
const TORCH_RANK = /^\[rank(\d+)\]:/;
/** glog (c10, NCCL watchdog): `[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] `, `W0318 06:57:26.001000 165 torch/...py:123] `. */
const GLOG = /^\[?[EWIF]\d{3,4} \d{2}:\d{2}:\d{2}(?:\.\d+)?(?: \d+)? [^\s\]]+:\d+\] ?/;
/** Python logging: `2025-05-02 16:14:33,560 - INFO - flashinfer.jit: `, `... - INFO - autotuner.py:256 - flashinfer.jit: `. */
const PY_LOGGING = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d+ - [A-Z]+ - (?:[\w.]+:\d+ - )?[\w.]+: /;
/** ROCm's aiter: `[aiter] import [module_quant] ...`. */
const AITER = /^\[aiter\] /;

/** A line's prefixes off, and what they said (rank tags). */
export function stripPrefix(line: string): StrippedLine {
  const found = SGLANG_PREFIX.exec(line);
  const m = found && RANK_TAGS.test(found[1] ?? '') ? found : null;
  if (m) {
    const ranks = (m[1] ?? '').trim();
    return { text: line.slice(m[0].length), prefixed: true, record: true, ...(ranks ? { ranks } : {}) };
  }
  const v = stripVllmPrefix(line);
  if (v) {
    const inner = stripTorchPrefix(v.text) ?? stripLogging(v.text);
    const ranks = v.ranks ?? inner?.ranks;
    const record = v.level !== undefined || inner !== undefined;
    return { text: inner?.text ?? v.text, prefixed: true, record, ...(ranks ? { ranks } : {}) };
  }
  const other = stripTorchPrefix(line) ?? stripLogging(line);
  if (other) return { text: other.text, prefixed: true, record: true, ...(other.ranks ? { ranks: other.ranks } : {}) };
  return { text: line, prefixed: false };
}

function stripLogging(line: string): { text: string; ranks?: string } | undefined {
  const m = PY_LOGGING.exec(line) ?? AITER.exec(line);
  return m ? { text: line.slice(m[0].length) } : undefined;
}

function stripTorchPrefix(line: string): { text: string; ranks?: string } | undefined {
  let text = line;
  let ranks: string | undefined;
  const rank = TORCH_RANK.exec(text);
  if (rank) {
    ranks = `rank${rank[1]}`;
    text = text.slice(rank[0].length);
  }
  const glog = GLOG.exec(text);
  if (glog) text = text.slice(glog[0].length);
  if (!rank && !glog) return undefined;
  return { text, ...(ranks ? { ranks } : {}) };
}

// ---------------------------------------------------------------- vLLM's prefixes

export interface VllmPrefix {
  /** The text after the process tag and the logger's `LEVEL MM-DD HH:MM:SS [file.py:N]`. */
  readonly text: string;
  /** `APIServer`, `EngineCore_DP0`, `Worker_TP3`, `VllmWorker rank=3`, ... */
  readonly process?: string;
  /** `TP3` / `DP0` for per-rank processes (for de-duplication), from the process tag. */
  readonly ranks?: string;
  readonly level?: string;
}

/** `(EngineCore_DP0 pid=164) ` / `(VllmWorker rank=0 pid=12) ` / `(Worker_TP0 pid=98743) ` / Ray's `(RayWorkerWrapper pid=7, ip=10.0.0.2) `. */
const PROCESS_TAG = /^\(([A-Za-z][\w-]*(?: [\w=-]+)*?) pid=\d+(?:, ip=[\w.:-]+)?\)(?: |$)/;
/** vLLM's logger: `INFO 01-23 15:49:07 [default_loader.py:267] ` (older: no `[`, `file.py:948] `). */
const LOGGER = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)? \[?[\w./<>-]+:\d+\] ?/;

function ranksOf(process: string): string | undefined {
  const tp = /(?:^|[_ ])TP(\d+)\b/.exec(process) ?? /\brank=(\d+)/.exec(process);
  if (tp) return `TP${tp[1]}`;
  const dp = /(?:^|_)DP(\d+)\b/.exec(process);
  return dp ? `DP${dp[1]}` : undefined;
}

/** undefined when the line carries neither of vLLM's prefixes. */
export function stripVllmPrefix(line: string): VllmPrefix | undefined {
  let text = line;
  let process: string | undefined;
  const tag = PROCESS_TAG.exec(text);
  if (tag) {
    process = tag[1];
    text = text.slice(tag[0].length);
  }
  const logger = LOGGER.exec(text);
  if (logger) text = text.slice(logger[0].length);
  if (!tag && !logger) return undefined;
  const ranks = process ? ranksOf(process) : undefined;
  return {
    text,
    ...(process ? { process } : {}),
    ...(ranks ? { ranks } : {}),
    ...(logger ? { level: logger[1] } : {}),
  };
}
