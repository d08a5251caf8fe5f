/** `wait`: until the server is ready, failed, stopped or stalled, at most a timeout. */
import type { ServerProfile } from '../../config/config';
import type { LoadState } from '../../monitor/state/loadStateTypes';
import type { LogLevel, WatchOutcome } from '../../monitor/watch/watchTypes';
import { errorText } from '../../util/errors';
import type { FleetEvent, FleetSession, ServerSnapshot, WaitResult } from '../fleetTypes';

/** What a wait needs of the fleet. */
export interface WaitHost {
  snapshot(server: ServerProfile): ServerSnapshot;
  onEvent(listener: (event: FleetEvent) => void): { dispose(): void };
  sessionFor(server: ServerProfile): Promise<FleetSession>;
  watch(server: ServerProfile): Promise<WatchOutcome | undefined>;
  /** A log line about a server. */
  say(server: string, level: LogLevel, text: string): void;
}

/**
 * Waits until the server is ready, failed or stopped, at most `timeoutMs`: what agents and
 * scripts call instead of a polling loop. Starts a watch first when nothing watches it. A load that
 * becomes stalled during the wait ends it as `stalled` (the agent reads the logs); a load
 * already stalled when the wait begins is waited on (that wait is the agent's choice to go on).
 */
export async function waitForServer(
  fleet: WaitHost,
  server: ServerProfile,
  options: { timeoutMs: number; signal?: AbortSignal; onChange?: (snapshot: ServerSnapshot) => void },
): Promise<WaitResult> {
  const settled = (s: LoadState | undefined): 'ready' | 'failed' | 'stopped' | undefined =>
    s === undefined
      ? undefined
      : s.verdict === 'ready'
        ? 'ready'
        : s.verdict === 'failed'
          ? 'failed'
          : s.verdict === 'stopped'
            ? 'stopped'
            : undefined;
  const session = await fleet.sessionFor(server);
  if (!session.watching) void fleet.watch(server).catch((error) => fleet.say(server.name, 'warn', errorText(error)));
  return new Promise<WaitResult>((resolve) => {
    // Whether the load was seen not stalled during this wait: a stall after that ends the wait.
    let movedSinceStart: boolean | undefined;
    const finish = (kind: WaitResult['kind']) => {
      clearTimeout(timer);
      subscription.dispose();
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ kind, snapshot: fleet.snapshot(server) } as WaitResult);
    };
    const check = () => {
      const snapshot = fleet.snapshot(server);
      const state = snapshot.state;
      // Only a state of the load under way counts: a steady watch's ready, or a load's end.
      const verdict = snapshot.loading ? undefined : settled(state);
      const stalled = state?.verdict === 'stalled';
      if (verdict) finish(verdict);
      else if (stalled && movedSinceStart === true) finish('stalled');
      else if (snapshot.refusal && !snapshot.watching) finish('not watched');
      if (!stalled) movedSinceStart = true;
      else movedSinceStart ??= false;
    };
    const onAbort = () => finish('cancelled');
    const timer = setTimeout(() => finish('timeout'), Math.max(0, options.timeoutMs));
    const subscription = fleet.onEvent((event) => {
      if (event.server.name !== server.name) return;
      if (event.type === 'state') options.onChange?.(fleet.snapshot(server));
      if (event.type === 'watching' && !event.watching) {
        const verdict = settled(fleet.snapshot(server).state);
        finish(verdict ?? 'not watched');
        return;
      }
      check();
    });
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // A session under steady watch that is loading again must not count as ready: check() waits for the load.
    setImmediate(check);
  });
}
