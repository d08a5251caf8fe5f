/**
 * The verbs every front uses of a fleet, as an interface: `Fleet` runs them itself; code that
 * only reads a server's state and follows its events (observe.ts) takes this, not the class, so
 * another implementation (one that shows and asks another process's fleet) can stand in.
 */
import type { ServerProfile, Settings } from '../config/config';
import type { LoadForecast } from '../monitor/loadInsights';
import type { WatchOutcome } from '../monitor/watchTypes';
import type {
  FleetEvent,
  FleetSession,
  ParserVerification,
  RestartAnswer,
  RestartOptions,
  ServerSnapshot,
} from './fleetTypes';
import type { RestartQuestions } from './restart/restartVerb';

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
  attach(server: ServerProfile, quiet?: boolean): Promise<WatchOutcome | undefined>;
  watchAll(skip?: (server: ServerProfile) => boolean): string[];
  stop(server: ServerProfile, reason?: string): boolean;
  stopAll(reason?: string): string[];
  verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification>;
}
