/**
 * The one way a server's arguments change, whatever the target: `Target.argsEdit` (a systemd
 * drop-in, a compose file, or words for the user to do it by hand) applies an ArgvPlanner of
 * engine/ (the parser flags, one advice), after the caller confirmed the diff, and undoes it.
 * Here: what it needs of its caller (the host's commands, the confirmation), what it returns,
 * and its error.
 */
import type { HostCommand } from '../transport/shell';
import { ArgvPlanError, type ArgvPlanner, type ParserPlan, type ServerCommandLocation } from '../engine/engine';

export interface ParserChangeDeps {
  /**
   * Runs a command on the GPU host (a HostCommand: `shellLine` renders it). With `options.stdin`,
   * the command reads that text on its standard input (which is then closed), as Transport.exec
   * does: file contents never appear on a command line.
   */
  exec(
    command: HostCommand,
    options?: { readonly stdin?: string },
  ): Promise<{ stdout: string; stderr: string; code: number | null; signal?: string }>;
  /** Privileged steps (drop-in writes, daemon-reload) run as `sudo -n PROGRAM ARGS...`. */
  readonly sudo: boolean;
  /** The host, for messages (undefined: this machine). */
  readonly host?: string;
  log(line: string): void;
  /** Shows the diff; resolves true to go on. */
  confirmDiff(diff: string): Promise<boolean>;
  /** Defaults to /etc/systemd/system (tests point it elsewhere). */
  readonly unitDir?: string;
}

export class ParserChangeError extends Error {
  constructor(
    message: string,
    /** sudo itself refused (a password, or no rule): nothing was run. */
    readonly sudoRefused = false,
  ) {
    super(message);
    this.name = 'ParserChangeError';
  }
}

/** A change made, and how to put back what was before: kept by the caller until it rolls back. */
export interface ArgsUndo {
  /** The file the change wrote (the drop-in, the compose file). */
  readonly file: string;
  /** The undo writes the previous content back, or removes the file the change created. */
  readonly restores: 'previous' | 'removed';
  /** How to undo it by hand, for a message: "remove FILE and daemon-reload". */
  readonly byHand: string;
  /** Puts back what was before (the caller restarts). */
  run(deps: ParserChangeDeps): Promise<void>;
}

export type ArgsEditResult =
  | { readonly kind: 'cancelled' }
  /** Nothing to change: the flags are there already (`where`: the unit, or the file). */
  | { readonly kind: 'already-set'; readonly where: string }
  /** The target's command line cannot be edited in place: what the user does instead. */
  | { readonly kind: 'manual'; readonly advice: string }
  | { readonly kind: 'changed'; readonly file: string; readonly diff: string; readonly undo: ArgsUndo };

export type ArgsEditKind = 'systemd-drop-in' | 'compose-file' | 'batch-script' | 'by-hand';

/** How a target edits the server's arguments (`Target.argsEdit`). */
export interface ArgsEditor {
  readonly how: ArgsEditKind;
  /** The file a change writes (shown before asking); undefined when the user changes it by hand. */
  file(deps: Pick<ParserChangeDeps, 'unitDir'>): string | undefined;
  /** What applying a change restarts, in words: "sglang.service", "the compose service sglang". */
  readonly restarts: string;
  /** Reads the command line, plans, asks `deps.confirmDiff`, writes, and checks it took effect (else rolls back). */
  change(deps: ParserChangeDeps, planner: ArgvPlanner): Promise<ArgsEditResult>;
  /** The undo of the change on the host now, read from the host alone; `nothing` says why there is none. */
  findUndo(deps: ParserChangeDeps): Promise<ArgsUndo | { readonly nothing: string }>;
}

/** The planner's plan, its refusal as a ParserChangeError. */
export function planOrRefuse(
  planner: ArgvPlanner,
  argv: readonly string[],
  location: ServerCommandLocation,
): ParserPlan {
  try {
    return planner.plan(argv, location);
  } catch (e) {
    if (e instanceof ArgvPlanError) throw new ParserChangeError(e.message);
    throw e;
  }
}
