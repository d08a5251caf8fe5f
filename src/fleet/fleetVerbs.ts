/**
 * The verbs every front uses of a fleet, as interfaces: `Fleet` runs them itself; another
 * implementation (one that shows and asks another process's fleet) runs them by delegation, and
 * a front that holds either cannot tell them apart. A front that only reads states, follows
 * events and calls verbs takes `FleetVerbs`; one that also waits, reads logs, opens forwards or
 * reaches a session takes `FrontFleet`.
 */
import type { ServerProfile, Settings } from '../config/config';
import type { LoadForecast } from '../monitor/forecast/loadInsights';
import type { WatchOutcome } from '../monitor/watch/watchTypes';
import type { ForwardInfo } from './forward/forwardPlan';
import type {
  FleetEvent,
  FleetSession,
  ParserVerification,
  RestartAnswer,
  RestartOptions,
  ServerSnapshot,
  WaitResult,
} from './fleetTypes';
import type { RestartQuestions } from './restart/restartVerb';
import type { ServerLogs } from './logs/serverLog';

export interface FleetVerbs {
  readonly servers: readonly ServerProfile[];
  server(name: string): ServerProfile | undefined;
  configure(next: Settings): void;
  onEvent(listener: (event: FleetEvent) => void): { dispose(): void };
  snapshot(server: ServerProfile): ServerSnapshot;
  snapshots(): ServerSnapshot[];
  connect(server: ServerProfile): Promise<FleetSession>;
  forecast(server: ServerProfile): Promise<LoadForecast>;
  restart(server: ServerProfile, options?: RestartOptions): Promise<RestartAnswer>;
  restartAsking(server: ServerProfile, options: RestartOptions & RestartQuestions): Promise<RestartAnswer | undefined>;
  watch(server: ServerProfile, quiet?: boolean): Promise<WatchOutcome | undefined>;
  watchAll(skip?: (server: ServerProfile) => boolean): string[];
  stop(server: ServerProfile, reason?: string): boolean;
  stopAll(reason?: string): string[];
  verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification>;
}

/**
 * What the composite verbs of a fleet (status, wait, verify, logs, forward, the restart rule)
 * read and call: the fleet as its fronts see it. A fleet that is shown through another (the
 * broker's) is told that one, so these verbs see what its fronts see.
 */
export type FleetFace = Pick<FleetVerbs, 'snapshot' | 'onEvent' | 'connect' | 'watch'>;

/** The verbs, and the waits, logs, forwards and sessions that the fronts reach beside them. */
export interface FrontFleet extends FleetVerbs {
  /** The session of a server, created on first use. */
  sessionFor(server: ServerProfile): Promise<FleetSession>;
  status(server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ServerSnapshot>;
  waitFor(
    server: ServerProfile,
    options: { timeoutMs: number; signal?: AbortSignal; onChange?: (snapshot: ServerSnapshot) => void },
  ): Promise<WaitResult>;
  logs(server: ServerProfile, lines: number): Promise<ServerLogs>;
  forward(server: ServerProfile, options?: { localPort?: number }): Promise<{ info: ForwardInfo; already: boolean }>;
  closeForward(server: ServerProfile): Promise<boolean>;
  forwardOf(server: ServerProfile): ForwardInfo | undefined;
  dispose(): void;
}
