import type { ServerProfile } from '../config';
import type { Transport } from '../remote/transport';
import type { SglangClient } from '../server/sglangHttp';
import { LoadWatcher, type LogLevel, type WatchOptions, type WatchOutcome } from './watcher';
import type { LoadState } from './loadState';
import type { LoadPrior } from './eta';

export interface SessionListener {
  onState?(state: LoadState, previous: LoadState): void;
  onEnd?(outcome: WatchOutcome): void;
}

export class AlreadyWatchingError extends Error {
  constructor(readonly serverName: string, readonly state: LoadState) {
    super(`Kimi on ${serverName} is already being watched (${state.verdict}). Run "Kimi: Stop polling" first.`);
  }
}

/**
 * One server: its connection (kept across watches), the watch under way if any, and the
 * last state seen. At most one watch runs per server, so a second restart is refused.
 * Knows nothing of VS Code: the extension and the benchmarks drive it alike.
 */
export class ServerSession {
  private watcher: LoadWatcher | undefined;
  private last: LoadState | undefined;
  private lastOutcome: WatchOutcome | undefined;
  private readonly loggedCommands = new Set<string>();

  constructor(
    readonly profile: ServerProfile,
    readonly transport: Transport,
    private readonly http: SglangClient,
    private readonly log: (level: LogLevel, message: string) => void,
  ) {}

  get watching(): boolean {
    return this.watcher !== undefined;
  }

  get state(): LoadState | undefined {
    return this.watcher?.state ?? this.last;
  }

  get outcome(): WatchOutcome | undefined {
    return this.watcher ? undefined : this.lastOutcome;
  }

  get client(): SglangClient {
    return this.http;
  }

  /** Restarts the unit or attaches to it, and watches; refuses when a watch is under way. */
  async watch(mode: 'restart' | 'attach', options: WatchOptions, listener: SessionListener = {}, prior?: LoadPrior): Promise<WatchOutcome> {
    if (this.watcher) throw new AlreadyWatchingError(this.profile.name, this.watcher.state);
    const watcher = new LoadWatcher({
      profile: this.profile,
      transport: this.transport,
      http: this.http,
      options,
      log: (level, message) => this.logOnce(level, message),
      ...(prior ? { prior } : {}),
    });
    this.watcher = watcher;
    this.lastOutcome = undefined;
    const subscription = watcher.onDidChange((state, previous) => listener.onState?.(state, previous));
    try {
      const outcome = await watcher.run(mode);
      this.last = outcome.state;
      this.lastOutcome = outcome;
      return outcome;
    } finally {
      subscription.dispose();
      this.watcher = undefined;
      listener.onEnd?.(this.lastOutcome ?? { end: 'cancelled', state: watcher.state });
    }
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
