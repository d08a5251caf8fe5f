/**
 * What a witness of a watch (the journal, the sampler, HTTP; a scheduler's job state tomorrow) is
 * given by the watcher that holds it: the watch's dependencies and clock, a look at the state, and
 * where its signals go. Each witness keeps its own state private and is stopped by the watcher.
 */
import type { LoadState, Signal } from '../state/loadStateTypes';
import type { WatchAlert, WatcherDeps } from './watchTypes';

export interface WitnessContext {
  readonly deps: WatcherDeps;
  readonly now: () => number;
  /** The watch's state now. */
  state(): LoadState;
  /** 'load' while a load is followed; 'steady' once it ended and the watch goes on. */
  mode(): 'load' | 'steady';
  /** A signal seen: folded into the state. */
  emit(signal: Signal): void;
  /** Something the user should be told, once per watch of its kind. */
  alertOnce(alert: WatchAlert): void;
  /** systemd is asked at the next round; `soon`: that round now. */
  lookAtUnit(soon: boolean): void;
  /** A round now (or right after the one under way). */
  probeSoon(): void;
}

export interface Witness {
  /** Ends what it runs on the host and its timers; it says nothing after this. */
  stop(): void;
}
