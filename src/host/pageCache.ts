/**
 * How much of the model sits in the GPU host's page cache, how that is worded for the next
 * load (the prediction itself: monitor/history/loadPrediction.ts), and the commands that warm the
 * cache. Commands are POSIX sh for a minimal Debian host; parsers are pure.
 */
import { assertAbsolutePath, quote } from '../transport/shell';
import { dropCacheWarningText, warmRefusalText } from '../present/words/pageCacheWords';

// mincore(2) through ctypes, for hosts without util-linux's fincore. A private (copy-on-write)
// mapping is used only because ctypes needs a writable buffer to take its address; nothing is
// written, so mincore reports the file's page-cache pages. Prints `RES SIZE FILE` like fincore.
// No single quote inside: the script travels single-quoted.
const MINCORE_PY = [
  'import ctypes as C, mmap, os, sys',
  'L = C.CDLL(None, use_errno=True); P = mmap.PAGESIZE',
  'L.mincore.argtypes = [C.c_void_p, C.c_size_t, C.c_void_p]',
  'for f in sys.argv[1:]:',
  '  try:',
  '    s = os.path.getsize(f); r = 0',
  '    if s:',
  '      fd = os.open(f, os.O_RDONLY); m = mmap.mmap(fd, s, access=mmap.ACCESS_COPY); os.close(fd)',
  '      b = C.c_char.from_buffer(m); n = (s + P - 1) // P; v = (C.c_ubyte * n)()',
  '      r = min(s, (n - bytes(v).count(0)) * P) if L.mincore(C.addressof(b), s, v) == 0 else -1',
  '      del b; m.close()',
  '    print(r, s, f)',
  '  except Exception as e:',
  '    print("error", repr(str(e)), f)',
].join('\n');

function safetensorsList(modelPath: string): string {
  assertAbsolutePath(modelPath, 'model path');
  return `find -L ${quote(modelPath)} -maxdepth 1 -type f -name '*.safetensors' -print0 | sort -z`;
}

/**
 * Prints `method fincore|mincore|none`, then one `RES SIZE FILE` line per *.safetensors of the
 * model (RES = bytes resident in the page cache). `fincore` (util-linux) when present, else a
 * python3 mincore reader, else only `method none` (residency unknown).
 */
export function residencyCommand(modelPath: string): string {
  const list = safetensorsList(modelPath);
  return (
    `if command -v fincore >/dev/null 2>&1; then echo 'method fincore'; ${list} | xargs -0 -r fincore --bytes --noheadings --raw --output RES,SIZE,FILE --; ` +
    `elif command -v python3 >/dev/null 2>&1; then echo 'method mincore'; ${list} | xargs -0 -r python3 -c ${quote(MINCORE_PY)}; ` +
    `else echo 'method none'; fi`
  );
}

export interface FileResidency {
  readonly file: string;
  readonly residentBytes: number;
  readonly sizeBytes: number;
}

export interface Residency {
  readonly method: 'fincore' | 'mincore' | 'none' | 'unknown';
  readonly files: readonly FileResidency[];
  /** Undefined when residency is unknown (no fincore, no python3, nothing parsed). */
  readonly residentBytes: number | undefined;
  readonly totalBytes: number | undefined;
  /** Files that could not be measured. */
  readonly errors: number;
}

/** Parses residencyCommand's output (also bare `fincore --bytes --noheadings --raw` lines). */
export function parseResidency(text: string): Residency {
  let method: Residency['method'] = 'unknown';
  const files: FileResidency[] = [];
  let errors = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const m = /^method (fincore|mincore|none)$/.exec(line);
    if (m) {
      method = m[1] as Residency['method'];
      continue;
    }
    const r = /^(-?\d+)\s+(\d+)\s+(.+)$/.exec(line);
    if (r) {
      const res = Number(r[1]);
      const size = Number(r[2]);
      if (res < 0) {
        errors++;
        continue;
      }
      files.push({ file: unescapeRaw(r[3]!), residentBytes: Math.min(res, size), sizeBytes: size });
    } else if (/^error\s/.test(line) || /^fincore:/.test(line)) errors++;
  }
  if (method === 'none' || files.length === 0)
    return { method, files, residentBytes: undefined, totalBytes: undefined, errors };
  const residentBytes = files.reduce((a, f) => a + f.residentBytes, 0);
  const totalBytes = files.reduce((a, f) => a + f.sizeBytes, 0);
  return { method, files, residentBytes, totalBytes, errors };
}

/** util-linux --raw escapes unsafe characters as \xHH. */
function unescapeRaw(s: string): string {
  return s.replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export const DROP_CACHE_FLAG = '--weight-loader-drop-cache-after-load';

/** A warning when ExecStart empties the page cache after every load (every restart is then cold). */
export function dropCacheWarning(argv: readonly string[]): string | undefined {
  if (!argv.some((a) => a === DROP_CACHE_FLAG || a.startsWith(`${DROP_CACHE_FLAG}=`))) return undefined;
  return dropCacheWarningText(DROP_CACHE_FLAG);
}

// ------------------------------------------------------------------ warming

export const MEMINFO_COMMAND = 'cat /proc/meminfo';

/** MemAvailable in bytes, from /proc/meminfo. */
export function parseMemAvailable(text: string): number | undefined {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

export type WarmPlan =
  | { readonly ok: true; readonly needBytes: number }
  | { readonly ok: false; readonly reason: string; readonly needBytes: number };

/**
 * Warming reads the bytes not yet resident; it goes ahead only when MemAvailable covers them
 * with a 10 % margin, so the page cache does not push out what the running server needs.
 */
export function planWarm(residency: Residency, memAvailable: number | undefined, margin = 0.1): WarmPlan {
  if (residency.residentBytes === undefined || residency.totalBytes === undefined) {
    return {
      ok: false,
      reason: warmRefusalText.unmeasured,
      needBytes: 0,
    };
  }
  const needBytes = residency.totalBytes - residency.residentBytes;
  if (needBytes <= 0) return { ok: false, reason: warmRefusalText.cached, needBytes: 0 };
  if (memAvailable === undefined) return { ok: false, reason: warmRefusalText.noMemInfo, needBytes };
  const want = needBytes * (1 + margin);
  if (memAvailable < want) {
    return {
      ok: false,
      reason: warmRefusalText.lowMemory(needBytes, memAvailable),
      needBytes,
    };
  }
  return { ok: true, needBytes };
}

/**
 * Reads the model's safetensors into the page cache, `parallel` files at a time (`vmtouch -t`
 * when installed, else `cat > /dev/null`). Runs in its own session and first prints `pid N`:
 * cancel with warmCancelCommand(N), which kills the whole group (closing the SSH channel alone
 * would leave `cat` running). Ends with `warm done` or `warm failed N`.
 */
export function warmCacheCommand(modelPath: string, parallel = 4): string {
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) throw new Error(`Invalid parallelism: ${parallel}`);
  const list = safetensorsList(modelPath);
  const inner =
    `if command -v vmtouch >/dev/null 2>&1; then ${list} | xargs -0 -r -P ${parallel} -n 1 vmtouch -tq; ` +
    `else ${list} | xargs -0 -r -P ${parallel} -n 1 sh -c 'cat "$1" > /dev/null' warm; fi`;
  return `setsid sh -c ${quote(`${inner}; rc=$?; if [ $rc = 0 ]; then echo 'warm done'; else echo "warm failed $rc"; fi`)} & echo "pid $!"; wait`;
}

export function warmCancelCommand(pid: number): string {
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`Invalid PID: ${pid}`);
  return `kill -TERM -- -${pid} 2>/dev/null || kill -TERM ${pid}`;
}

/** `pid N` / `warm done` / `warm failed N` lines of warmCacheCommand. */
export function parseWarmLine(line: string): { pid: number } | { done: true } | { failed: number } | undefined {
  const t = line.trim();
  let m = /^pid (\d+)$/.exec(t);
  if (m) return { pid: Number(m[1]) };
  if (t === 'warm done') return { done: true };
  m = /^warm failed (\d+)$/.exec(t);
  if (m) return { failed: Number(m[1]) };
  return undefined;
}

/** The filesystem type of the model's folder (`ext2/ext3`, `xfs`, `nfs`, `lustre`, ...). */
export function fsTypeCommand(modelPath: string): string {
  return `stat -f -c %T -- ${quote(assertAbsolutePath(modelPath, 'model path'))}`;
}
