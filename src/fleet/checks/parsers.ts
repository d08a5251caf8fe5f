/**
 * The parser flags (`--reasoning-parser`, `--tool-call-parser`) as fleet verbs, the same for
 * every front: enable them through the target's `argsEdit` (a systemd drop-in, the compose file,
 * or words for a plain container, after the caller confirmed the diff) and roll that back, from
 * the host alone. The caller restarts through Fleet.restart.
 */
import type { ServerProfile } from '../../config/config';
import { parserChoiceProblem, parserPlanner, type ParserChoice } from '../../engine/engine';
import { ParserChangeError, type ArgsUndo, type ParserChangeDeps } from '../../target/argsEdit';
import { targetFor } from '../../target/target';
import { shellLine } from '../../transport/shell';
import type { Transport } from '../../transport/transport';
import { maskSecrets } from '../../util/secrets';

/** What the verbs need of a session (a single-node or a multi-node one: its first node). */
export interface ArgsSession {
  readonly profile: ServerProfile;
  readonly transport: Transport;
}

/** A proposed change of the server's command line, as the front shows it before asking. */
export interface ProposedArgsChange {
  readonly diff: string;
  /** The file that changes: the drop-in, the compose file, or the batch script. */
  readonly file: string;
  /** What applying it restarts: the unit, the compose service (recreated), or the job (submitted again). */
  readonly restarts: string;
  readonly how: 'drop-in' | 'compose' | 'script';
}

export interface ArgsChangeUi {
  /** Resolves true to apply the change (nothing is written before). */
  confirm(change: ProposedArgsChange): Promise<boolean>;
  log(line: string): void;
}

/** How a change was made, in the fronts' words: a drop-in (then a restart) or the compose file (then a recreate). */
export type ArgsChangeHow = ProposedArgsChange['how'];

export type EnableParsersOutcome =
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'already-set'; readonly where: string }
  /** A plain container: its command line is `docker run`'s; the user re-creates it (the exact command). */
  | { readonly kind: 'manual'; readonly advice: string }
  | {
      readonly kind: 'changed';
      readonly file: string;
      readonly diff: string;
      readonly how: ArgsChangeHow;
      readonly rollback: ArgsUndo;
    };

export type RollbackOutcome =
  | { readonly kind: 'nothing'; readonly why: string }
  | { readonly kind: 'rolled-back'; readonly file: string; readonly restored: 'previous' | 'removed' };

const EXEC_TIMEOUT_MS = 60_000;
const SHOWN_COMMAND_CHARS = 400;

/** The host commands of a change: logged masked, file contents on stdin (never on a command line, never in the log). */
export function argsChangeDeps(
  session: ArgsSession,
  ui: ArgsChangeUi,
  confirmDiff: (diff: string) => Promise<boolean> = async () => false,
): ParserChangeDeps {
  return {
    sudo: session.profile.sudo,
    ...(session.profile.host !== undefined ? { host: session.profile.host } : {}),
    log: (line) => ui.log(line),
    exec: async (request, options) => {
      const command = shellLine(request);
      const shown = maskSecrets(
        command.length > SHOWN_COMMAND_CHARS ? `${command.slice(0, SHOWN_COMMAND_CHARS)}…` : command,
      );
      const stdinNote = options?.stdin !== undefined ? ` (${Buffer.byteLength(options.stdin)} bytes on stdin)` : '';
      ui.log(`$ ${shown}${stdinNote}`);
      return session.transport.exec(command, {
        timeoutMs: EXEC_TIMEOUT_MS,
        ...(options?.stdin !== undefined ? { stdin: options.stdin } : {}),
      });
    },
    confirmDiff,
  };
}

/** Adds the parser flags to the server's command line, once `ui.confirm` said yes to the diff. */
export async function enableParsersOn(
  session: ArgsSession,
  choice: ParserChoice,
  ui: ArgsChangeUi,
): Promise<EnableParsersOutcome> {
  await session.transport.connect();
  // Before anything is read: a name neither engine knows (the command line tells which one it runs).
  const problem = parserChoiceProblem(choice);
  if (problem) throw new ParserChangeError(problem);
  const editor = targetFor(session.profile).argsEdit;
  const how: ArgsChangeHow =
    editor.how === 'compose-file' ? 'compose' : editor.how === 'batch-script' ? 'script' : 'drop-in';
  const file = editor.file({}) ?? '';
  const deps = argsChangeDeps(session, ui, (diff) => ui.confirm({ diff, file, restarts: editor.restarts, how }));
  const result = await editor.change(deps, parserPlanner(choice));
  if (result.kind !== 'changed') return result;
  return { kind: 'changed', file: result.file, diff: result.diff, how, rollback: result.undo };
}

/**
 * Puts the command line back as it was before the parser change: `known` when this process made
 * the change, else what the host says (the drop-in names what came before it; the compose file's
 * backup). The caller restarts.
 */
export async function rollbackParsersOn(
  session: ArgsSession,
  ui: ArgsChangeUi,
  known?: ArgsUndo,
): Promise<RollbackOutcome> {
  await session.transport.connect();
  const deps = argsChangeDeps(session, ui);
  const undo = known ?? (await targetFor(session.profile).argsEdit.findUndo(deps));
  if ('nothing' in undo) return { kind: 'nothing', why: undo.nothing };
  await undo.run(deps);
  return { kind: 'rolled-back', file: undo.file, restored: undo.restores };
}

/** sudo refused a step: nothing was run, and the sudoers rules would allow it. */
export function isSudoRefusalError(error: unknown): boolean {
  return error instanceof ParserChangeError && error.sudoRefused;
}
