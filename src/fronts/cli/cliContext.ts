/** What every CLI verb is given (the process's io, the fleet, the server), and the connect step they share. */
import * as l10n from '@vscode/l10n';
import type { ServerProfile, Settings } from '../../config/config';
import type { ServerSnapshot } from '../../fleet/fleetTypes';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import { serverReport } from '../../present/report';
import { refusalMessage } from '../../present/refusalWords';
import { TransportError } from '../../transport/transport';
import type { CliCommand } from './args';
import { exitForRefusal } from './exitCodes';
import { statusLine } from './format';
import type { Terminal } from './prompt';

export type StopSignal = 'SIGINT' | 'SIGTERM';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly platform: NodeJS.Platform;
  readonly version: string;
  /** One line on stdout (the newline is added). */
  stdout(line: string): void;
  /** One line on stderr. */
  stderr(line: string): void;
  /** The terminal, when stdin is one: only then does the CLI ask anything. */
  readonly terminal: Terminal | undefined;
  /** Calls `handler` on SIGINT / SIGTERM until the returned function is called. */
  onSignal(handler: (signal: StopSignal) => void): () => void;
}

export const COMMAND = 'kimi-service';

export class Interrupted extends Error {
  constructor(readonly signal: StopSignal) {
    super(l10n.t('interrupted by {0}', signal));
  }
}

export interface Context {
  readonly cmd: CliCommand;
  readonly io: CliIo;
  readonly fleet: FrontFleet;
  readonly server: ServerProfile;
  readonly settings: Settings;
  readonly signal: AbortSignal;
  stoppedBy(): StopSignal | undefined;
  /** Rejects with Interrupted when SIGINT/SIGTERM arrives first. */
  interruptible<T>(work: Promise<T>): Promise<T>;
}

/** Connects; a refusal is reported (the state line and what to do) and its exit code returned. */
export async function connect(ctx: Context): Promise<number | undefined> {
  try {
    await ctx.interruptible(ctx.fleet.connect(ctx.server));
    return undefined;
  } catch (error) {
    if (error instanceof TransportError) return refused(ctx, error);
    throw error;
  }
}

export function refused(ctx: Context, error: TransportError): number {
  const snapshot = ctx.fleet.snapshot(ctx.server);
  const refusal = snapshot.refusal ?? {
    kind: error.kind,
    message: error.message,
    ...(error.hostKeyChange ? { hostKeyChange: error.hostKeyChange } : {}),
  };
  ctx.io.stdout(statusLine(serverReport({ ...snapshot, refusal }), ctx.cmd.json));
  if (!ctx.cmd.json) ctx.io.stderr(refusalMessage(ctx.server.name, refusal).text);
  return exitForRefusal(refusal.kind);
}

/** A refusal seen after connecting (the connection was lost, the host key changed on reconnect...). */
export function exitForSnapshot(snapshot: ServerSnapshot, otherwise: number): number {
  return snapshot.refusal ? exitForRefusal(snapshot.refusal.kind) : otherwise;
}
