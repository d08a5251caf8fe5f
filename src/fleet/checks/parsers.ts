/**
 * The parser flags (`--reasoning-parser`, `--tool-call-parser`) as fleet verbs, the same for
 * every front: enable them (a systemd drop-in, or the compose file, after the caller confirmed
 * the diff) and roll that back, from the host alone. The caller restarts through Fleet.restart.
 */
import type { ServerProfile } from '../../config/config';
import type { ParserChoice } from '../../engine/engine';
import {
  enableParsers,
  findRollbackPlan,
  ParserChangeError,
  rollback,
  type ParserChangeDeps,
  type RollbackPlan,
} from '../../target/systemd/parserDropIn';
import {
  containerParserAdvice,
  enableComposeParsers,
  findComposeRollback,
  rollbackCompose,
  type ComposeRollback,
} from '../../target/docker/composeParsers';
import { dropInLocation } from '../../target/systemd/sudoers';
import { targetFor } from '../../target/target';
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
  /** The file that changes: the drop-in, or the compose file. */
  readonly file: string;
  /** What applying it restarts: the unit, or the compose service (recreated). */
  readonly restarts: string;
  readonly how: 'drop-in' | 'compose';
}

export interface ArgsChangeUi {
  /** Resolves true to apply the change (nothing is written before). */
  confirm(change: ProposedArgsChange): Promise<boolean>;
  log(line: string): void;
}

export type ParserRollback =
  | { readonly how: 'drop-in'; readonly plan: RollbackPlan }
  | { readonly how: 'compose'; readonly plan: ComposeRollback };

export type EnableParsersOutcome =
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'already-set'; readonly where: string }
  /** A plain container: its command line is `docker run`'s; the user re-creates it (the exact command). */
  | { readonly kind: 'manual'; readonly advice: string }
  | {
      readonly kind: 'changed';
      readonly file: string;
      readonly diff: string;
      readonly rollback: ParserRollback;
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
    exec: async (command, options) => {
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
  const server = session.profile;
  const docker = server.docker;
  if (docker?.kind === 'container') {
    const deps = argsChangeDeps(session, ui);
    const state = await targetFor(server).readState({ exec: (command) => deps.exec(command) });
    return { kind: 'manual', advice: containerParserAdvice(docker.name, state.argv, choice) };
  }
  if (docker) {
    const deps = argsChangeDeps(session, ui, (diff) =>
      ui.confirm({ diff, file: docker.file, restarts: `the compose service ${docker.service}`, how: 'compose' }),
    );
    const result = await enableComposeParsers(deps, docker.file, docker.service, choice);
    if (result.kind === 'changed')
      return {
        kind: 'changed',
        file: docker.file,
        diff: result.diff,
        rollback: { how: 'compose', plan: result.rollback },
      };
    return result.kind === 'already-set' ? { kind: 'already-set', where: docker.file } : result;
  }
  const file = dropInLocation(server.unit).file;
  const deps = argsChangeDeps(session, ui, (diff) => ui.confirm({ diff, file, restarts: server.unit, how: 'drop-in' }));
  const result = await enableParsers(deps, server.unit, choice);
  if (result.kind === 'changed')
    return { kind: 'changed', file, diff: result.diff, rollback: { how: 'drop-in', plan: result.rollback } };
  return result.kind === 'already-set' ? { kind: 'already-set', where: server.unit } : result;
}

/**
 * Puts the command line back as it was before the parser change: `known` when this process made
 * the change, else what the host says (the drop-in names what came before it; the compose file's
 * backup). The caller restarts.
 */
export async function rollbackParsersOn(
  session: ArgsSession,
  ui: ArgsChangeUi,
  known?: ParserRollback,
): Promise<RollbackOutcome> {
  await session.transport.connect();
  const server = session.profile;
  const deps = argsChangeDeps(session, ui);
  if (server.docker?.kind === 'container') {
    return {
      kind: 'nothing',
      why: `${server.docker.name} is a plain container: its command line is the one \`docker run\` gave it; nothing was changed on the host`,
    };
  }
  if (server.docker) {
    const plan = known?.how === 'compose' ? known.plan : await findComposeRollback(deps, server.docker.file);
    if (!plan) return { kind: 'nothing', why: `${server.docker.file} is the same as its backup, or has none` };
    await rollbackCompose(deps, plan);
    return { kind: 'rolled-back', file: plan.file, restored: 'previous' };
  }
  const plan = known?.how === 'drop-in' ? known.plan : await findRollbackPlan(deps, server.unit);
  if (!plan) return { kind: 'nothing', why: `${server.unit} has no parser drop-in to roll back` };
  await rollback(deps, plan);
  return {
    kind: 'rolled-back',
    file: plan.dropInPath,
    restored: plan.previousContent === null ? 'removed' : 'previous',
  };
}

/** sudo refused a step: nothing was run, and the sudoers rules would allow it. */
export function isSudoRefusal(error: unknown): boolean {
  return error instanceof ParserChangeError && error.sudoRefused;
}
