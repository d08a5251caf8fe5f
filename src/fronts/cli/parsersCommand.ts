/**
 * `kimi-service parsers enable|rollback`: the fleet's parser verbs (src/fleet/checks/parsers.ts) on the
 * command line. The diff is printed, a person on a terminal is asked, a script must say --yes;
 * then the server is restarted and waited for as `restart --wait` does (its exit codes).
 */
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../config/config';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import {
  enableParsersOn,
  rollbackParsersOn,
  type ArgsChangeUi,
  type ProposedArgsChange,
} from '../../fleet/checks/parsers';
import { maskSecrets } from '../../util/secrets';
import { errorText } from '../../util/errors';
import type { CliCommand } from './args';
import { EXIT } from './exitCodes';
import { jsonLine } from './format';
import { confirm, type Terminal } from './prompt';

export interface ParsersContext {
  readonly cmd: CliCommand;
  readonly fleet: FrontFleet;
  readonly server: ServerProfile;
  readonly terminal: Terminal | undefined;
  stdout(line: string): void;
  stderr(line: string): void;
  interruptible<T>(work: Promise<T>): Promise<T>;
  /** Restarts the server (a load under way with the old command line is replaced) and waits. */
  restartAndWait(): Promise<number>;
}

function changeUi(ctx: ParsersContext): ArgsChangeUi & { refusedForScript: boolean } {
  const ui = {
    refusedForScript: false,
    log: (line: string) => {
      if (ctx.cmd.verbose) ctx.stderr(`info: ${maskSecrets(line)}`);
    },
    confirm: async (change: ProposedArgsChange) => {
      if (ctx.cmd.json) ctx.stdout(jsonLine({ event: 'diff', server: ctx.server.name, ...change }));
      else {
        ctx.stdout(
          l10n.t('{0}: proposed change of {1} (then {2} restarts):', ctx.server.name, change.file, change.restarts),
        );
        for (const line of maskSecrets(change.diff).trimEnd().split('\n')) ctx.stdout(line);
      }
      if (ctx.cmd.yes) return true;
      if (!ctx.terminal) {
        ui.refusedForScript = true;
        return false;
      }
      return ctx.interruptible(
        confirm(ctx.terminal, l10n.t('Write {0} and restart {1}?', change.file, change.restarts)),
      );
    },
  };
  return ui;
}

function failed(ctx: ParsersContext, what: string, error: unknown): number {
  const message = `${what}: ${errorText(error)}`;
  if (ctx.cmd.json) ctx.stdout(jsonLine({ event: 'error', state: 'parsers', exitCode: EXIT.failed, error: message }));
  ctx.stderr(`kimi-service: ${maskSecrets(message)}`);
  return EXIT.failed;
}

function said(ctx: ParsersContext, event: Record<string, unknown>, text: string): void {
  ctx.stdout(ctx.cmd.json ? jsonLine({ event: 'parsers', server: ctx.server.name, ...event }) : text);
}

export async function parsersCommand(ctx: ParsersContext): Promise<number> {
  const action = ctx.cmd.parsers!;
  const session = await ctx.interruptible(ctx.fleet.sessionFor(ctx.server));
  const ui = changeUi(ctx);
  const name = ctx.server.name;
  if (action.action === 'rollback') {
    let outcome;
    try {
      outcome = await ctx.interruptible(rollbackParsersOn(session, ui));
    } catch (error) {
      return failed(ctx, l10n.t('the roll back failed'), error);
    }
    if (outcome.kind === 'nothing') {
      said(
        ctx,
        { action: 'nothing', reason: outcome.why },
        l10n.t('{0}: nothing to roll back: {1}.', name, outcome.why),
      );
      return EXIT.ok;
    }
    said(
      ctx,
      { action: 'rolled-back', file: outcome.file, restored: outcome.restored },
      outcome.restored === 'removed'
        ? l10n.t('{0}: removed {1}; restarting.', name, outcome.file)
        : l10n.t('{0}: restored the previous {1}; restarting.', name, outcome.file),
    );
    return ctx.restartAndWait();
  }
  const choice = { reasoningParser: action.reasoningParser, toolCallParser: action.toolCallParser };
  let outcome;
  try {
    outcome = await ctx.interruptible(enableParsersOn(session, choice, ui));
  } catch (error) {
    return failed(ctx, l10n.t('could not enable the parsers'), error);
  }
  switch (outcome.kind) {
    case 'cancelled':
      if (ui.refusedForScript) {
        ctx.stderr(
          `kimi-service: ${l10n.t("parsers enable changes the server's command line and restarts it: pass --yes to do so without a terminal. Nothing was changed.")}`,
        );
        return EXIT.config;
      }
      ctx.stderr(l10n.t('Not changed.'));
      return EXIT.failed;
    case 'already-set':
      said(
        ctx,
        { action: 'already-set', where: outcome.where },
        l10n.t(
          '{0}: {1} and {2} are already set in {3}; nothing changed, nothing restarted.',
          name,
          `--reasoning-parser ${choice.reasoningParser}`,
          `--tool-call-parser ${choice.toolCallParser}`,
          outcome.where,
        ),
      );
      return EXIT.ok;
    case 'manual':
      said(ctx, { action: 'manual', advice: outcome.advice }, `${name}: ${maskSecrets(outcome.advice)}`);
      return EXIT.ok;
    case 'changed':
      said(
        ctx,
        { action: 'changed', file: outcome.file },
        l10n.t(
          '{0}: wrote {1}; restarting. If it fails to start: {2}',
          name,
          outcome.file,
          `kimi-service parsers rollback --server ${name}`,
        ),
      );
      return ctx.restartAndWait();
  }
}
