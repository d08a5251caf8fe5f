import type { ServerProfile } from '../../config/config';
import type { Transport } from '../../transport/transport';
import type { ServerHttpClient } from '../../engine/serverHttp';
import { LoadWatcher } from './watcher';
import type { LogLevel, WatchAlert, WatchOptions, WatchOutcome } from './watchTypes';
import type { LoadState } from '../state/loadStateTypes';
import type { LoadPrior } from '../eta/eta';
import type { ServiceStatus } from '../../target/target';
import { hintMark } from '../../util/hintMark';
import { alreadyWatching } from '../../present/words/watchWords';

export interface SessionListener {
  onState?(state: LoadState, previous: LoadState): void;
  /** Each end of a load: the first one, then (steady watch) a crash after ready, a new load's end... */
  onEnd?(outcome: WatchOutcome): void;
  onAlert?(alert: WatchAlert): void;
  /** The watch is over for good (cancelled, timed out, unreachable, or not steady). */
  onClosed?(): void;
}

export class AlreadyWatchingError extends Error {
  constructor(
    readonly serverName: string,
    readonly state: LoadState,
  ) {
    super(alreadyWatching(serverName, state.verdict, hintMark('stop-watching')));
  }
}

/**
 * One server: its connection (kept across watches), the watch under way if any, and the
 * last state seen. At most one load is followed per server, so a second restart during a
 * load is refused; a steady watch (after ready) gives way to a new restart.
 * Knows nothing of VS Code: the extension and the benchmarks drive it alike.
 */
export class ServerSession {
  private watcher: LoadWatcher | undefined;
  /** How the load under way ends (the first end of the current watch). */
  private loadEnd: Promise<WatchOutcome> | undefined;
  private last: LoadState | undefined;
  private lastOutcome: WatchOutcome | undefined;
  private readonly loggedCommands = new Set<string>();

  constructor(
    readonly profile: ServerProfile,
    readonly transport: Transport,
    private readonly http: ServerHttpClient,
    private readonly log: (level: LogLevel, message: string) => void,
  ) {}

  /** A load is being followed (restart, watch): another restart must wait. */
  get busy(): boolean {
    return this.watcher?.loading ?? false;
  }

  /** Something is watched: a load, or a server kept under steady watch. */
  get watching(): boolean {
    return this.watcher?.active ?? false;
  }

  get state(): LoadState | undefined {
    return this.watcher?.state ?? this.last;
  }

  get outcome(): WatchOutcome | undefined {
    return this.busy ? undefined : this.lastOutcome;
  }

  get client(): ServerHttpClient {
    return this.http;
  }

  /**
   * Restarts the unit, or only watches it; resolves with how the load ended (a
   * steady watch goes on after that, reported through `listener`). Refuses during a load.
   */
  async watch(
    mode: 'restart' | 'watch',
    options: WatchOptions,
    listener: SessionListener = {},
    prior?: LoadPrior,
    unitBefore?: ServiceStatus,
  ): Promise<WatchOutcome> {
    const current = this.watcher;
    if (current?.loading) throw new AlreadyWatchingError(this.profile.name, current.state);
    current?.dispose();
    const watcher = new LoadWatcher({
      profile: this.profile,
      transport: this.transport,
      http: this.http,
      options,
      log: (level, message) => this.logOnce(level, message),
      ...(prior ? { prior } : {}),
      ...(unitBefore ? { unitBefore } : {}),
    });
    this.watcher = watcher;
    this.lastOutcome = undefined;
    const subscriptions = [
      watcher.onDidChange((state, previous) => listener.onState?.(state, previous)),
      watcher.onAlert((alert) => listener.onAlert?.(alert)),
      watcher.onDidEnd((outcome) => {
        this.last = outcome.state;
        this.lastOutcome = outcome;
        if (!watcher.active) {
          for (const s of subscriptions) s.dispose();
          if (this.watcher === watcher) this.watcher = undefined;
        }
        listener.onEnd?.(outcome);
        if (!watcher.active) listener.onClosed?.();
      }),
    ];
    const end = watcher.run(mode);
    this.loadEnd = end;
    return end;
  }

  /** How the load under way ends; undefined when none is followed. */
  whenLoadEnds(): Promise<WatchOutcome | undefined> {
    return this.busy && this.loadEnd ? this.loadEnd : Promise.resolve(undefined);
  }

  stop(reason?: string): boolean {
    if (!this.watcher) return false;
    this.watcher.cancel(reason);
    return true;
  }

  dispose(): void {
    this.watcher?.dispose();
    this.transport.dispose();
  }

  /** Remote commands repeated every poll are logged in full the first time, then at trace level. */
  private logOnce(level: LogLevel, message: string): void {
    if (message.startsWith('$ ') && level === 'trace') {
      const first = !this.loggedCommands.has(message);
      this.loggedCommands.add(message);
      this.log(first ? 'info' : 'trace', `[${this.profile.name}] ${message}`);
      return;
    }
    this.log(level, `[${this.profile.name}] ${message}`);
  }
}
