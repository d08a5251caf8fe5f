/**
 * "Warm cache, then restart": reads the model's weights into the GPU host's page cache while
 * the old server keeps serving, with progress (residency re-measured) and cancel. The decisions
 * are pageCache.ts's pure functions; this is the thin I/O shell around them.
 */
import type { RemoteProcess, Transport } from '../../transport/transport';
import {
  MEMINFO_COMMAND,
  parseMemAvailable,
  parseResidency,
  parseWarmLine,
  planWarm,
  residencyCommand,
  warmCacheCommand,
  warmCancelCommand,
  type Residency,
} from '../../host/pageCache';

const SPLIT = '@@kimi-meminfo@@';

/** Residency, then MemAvailable after a mark: one remote command. */
export function measureResidencyCommand(modelPath: string): string {
  return `${residencyCommand(modelPath)}; echo ${SPLIT}; ${MEMINFO_COMMAND}`;
}

/** Residency and MemAvailable in one remote command. */
export async function measureResidency(
  transport: Transport,
  modelPath: string,
): Promise<{ residency: Residency; memAvailable: number | undefined }> {
  const result = await transport.exec(measureResidencyCommand(modelPath), {
    timeoutMs: 60_000,
  });
  const [res = '', mem = ''] = result.stdout.split(SPLIT);
  return { residency: parseResidency(res), memAvailable: parseMemAvailable(mem) };
}

export interface WarmOptions {
  readonly parallel?: number;
  readonly pollMs?: number;
  readonly onProgress?: (residency: Residency) => void;
  /** Abort to cancel: the remote readers are killed. */
  readonly signal?: AbortSignal;
}

export type WarmResult =
  | { readonly ok: true; readonly residency: Residency }
  | { readonly ok: false; readonly reason: string; readonly cancelled: boolean; readonly residency?: Residency };

export async function warmCache(
  transport: Transport,
  modelPath: string,
  options: WarmOptions = {},
): Promise<WarmResult> {
  const before = await measureResidency(transport, modelPath);
  const plan = planWarm(before.residency, before.memAvailable);
  if (!plan.ok) return { ok: false, reason: plan.reason, cancelled: false, residency: before.residency };
  options.onProgress?.(before.residency);

  let pid: number | undefined;
  let outcome: { done: true } | { failed: number } | undefined;
  let finished: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (finished = resolve));
  const process: RemoteProcess = await transport.stream(warmCacheCommand(modelPath, options.parallel ?? 4), (line) => {
    const parsed = parseWarmLine(line);
    if (!parsed) return;
    if ('pid' in parsed) pid = parsed.pid;
    else {
      outcome = parsed;
      finished();
    }
  });
  void process.exited.then(() => finished());

  let cancelled = options.signal?.aborted ?? false;
  const onAbort = () => {
    cancelled = true;
    finished();
  };
  options.signal?.addEventListener('abort', onAbort);
  // One residency check at a time: the next starts `pollMs` after the last one ended, so slow
  // storage never stacks checks up (each is an SSH channel; OpenSSH allows 10 per connection).
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const measureLater = (): void => {
    timer = setTimeout(() => {
      void measureResidency(transport, modelPath)
        .then((m) => options.onProgress?.(m.residency))
        .catch(() => undefined)
        .finally(() => {
          if (!done) measureLater();
        });
    }, options.pollMs ?? 2000);
  };
  measureLater();
  try {
    if (!cancelled) await ended;
  } finally {
    done = true;
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  if (cancelled && outcome === undefined) {
    if (pid !== undefined) await transport.exec(warmCancelCommand(pid), { timeoutMs: 10_000 }).catch(() => undefined);
    process.kill();
    const now = await measureResidency(transport, modelPath).catch(() => undefined);
    return { ok: false, reason: 'cancelled', cancelled: true, ...(now ? { residency: now.residency } : {}) };
  }
  const after = await measureResidency(transport, modelPath);
  options.onProgress?.(after.residency);
  if (outcome && 'failed' in outcome)
    return {
      ok: false,
      reason: `reading the weights failed (exit ${outcome.failed})`,
      cancelled: false,
      residency: after.residency,
    };
  return { ok: true, residency: after.residency };
}
