/**
 * Waiting on a condition instead of sleeping a fixed time: tests that sleep "long enough" for
 * something to happen fail on a busy machine. `waitFor` polls the condition until it
 * holds or the deadline passes, and then fails with a message that says what was awaited and
 * what was last seen.
 */

export interface WaitForOptions {
  /** Give up after this long (default 10 s). */
  readonly timeoutMs?: number;
  /** Between two evaluations of the condition (default 50 ms). */
  readonly intervalMs?: number;
  /** What is awaited, for the error ("the reader wrote its PID"). */
  readonly message?: string;
}

/**
 * Resolves with the condition's first truthy value (a plain `true`, or whatever the condition
 * returns: a list, an object...). The condition may be async; one that throws is treated as
 * "not yet", and its last error goes into the timeout message. The condition is evaluated one
 * last time at the deadline, so a slow evaluation never loses the last chance.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const started = Date.now();
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    const expired = Date.now() - started >= timeoutMs;
    try {
      last = await condition();
      lastError = undefined;
      if (last) return last as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (expired) break;
    await sleep(Math.min(intervalMs, Math.max(0, timeoutMs - (Date.now() - started))));
  }
  const what = options.message ?? 'a condition';
  const seen =
    lastError !== undefined
      ? `last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`
      : `last value: ${describe(last)}`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${seen})`);
}

/**
 * A pause that is NOT synchronisation: for simulated slowness (a server that answers late on
 * purpose) and "nothing must happen during N ms" windows. Each use says why at the call site.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return String(value);
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return String(value);
  }
}
