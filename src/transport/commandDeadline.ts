/**
 * A remote command's end, once: by its deadline (ExecOptions.timeoutMs), by its caller's abort
 * signal, or by itself. The timer and the abort listener are removed whichever comes first.
 */
import { CommandAbortedError, CommandTimeoutError } from './errors';
import type { Timers } from './ssh/sshOptions';
import type { ExecOptions } from './transport';
import { REMOTE_COMMAND_ABORTED, remoteCommandTimedOut } from '../present/words/transportWords';

export interface CommandEnd {
  /** The command has ended, one way or the other. */
  readonly settled: boolean;
  /** The command ended by itself: false (and nothing done) when it was already stopped. */
  finish(): boolean;
}

/** Arms the deadline and the abort; `stop` is called at most once, with the error to reject with. */
export function commandDeadline(
  timers: Timers,
  options: Pick<ExecOptions, 'timeoutMs' | 'signal'>,
  stop: (err: Error) => void,
): CommandEnd {
  let settled = false;
  let timer: unknown;
  const disarm = () => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    options.signal?.removeEventListener('abort', onAbort);
  };
  const end = (err: Error) => {
    if (settled) return;
    settled = true;
    disarm();
    stop(err);
  };
  const onAbort = () => end(new CommandAbortedError(REMOTE_COMMAND_ABORTED));
  if (options.timeoutMs !== undefined) {
    const ms = options.timeoutMs;
    timer = timers.setTimeout(() => end(new CommandTimeoutError(remoteCommandTimedOut(ms))), ms);
  }
  if (options.signal) {
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
  }
  return {
    get settled() {
      return settled;
    },
    finish() {
      if (settled) return false;
      settled = true;
      disarm();
      return true;
    },
  };
}
