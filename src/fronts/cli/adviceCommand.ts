/**
 * `kimi-service advice [--apply N]`: the suggestions for a faster load, each with its evidence,
 * figure and source (fleet/checks/loadAdvice); --apply N writes suggestion N as the unit's drop-in after
 * the diff is confirmed (or --yes), restarts, waits, and rolls back when the server then fails.
 */
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../config/config';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import {
  adviceSessionOf,
  applyAdvice,
  argsEditorOf,
  gatherAdvice,
  type AdviceSession,
} from '../../fleet/checks/loadAdvice';
import { defaultHistoryFile, FileMemento } from '../../fleet/servers/standalone';
import { LoadHistoryStore } from '../../monitor/history/history';
import type { ParserChangeDeps } from '../../target/argsEdit';
import { shellLine } from '../../transport/shell';
import { adviceHeader, adviceLines, versionLine } from '../../present/adviceText';
import { maskSecrets } from '../../util/secrets';
import type { CliCommand } from './args';
import { EXIT } from './exitCodes';
import { confirm } from './prompt';
import type { CliIo } from './cliContext';

export interface AdviceContext {
  readonly cmd: CliCommand;
  readonly io: CliIo;
  readonly fleet: FrontFleet;
  readonly server: ServerProfile;
  interruptible<T>(work: Promise<T>): Promise<T>;
}

export async function adviceCommand(ctx: AdviceContext): Promise<number> {
  const { cmd, io, fleet, server } = ctx;
  const session = adviceSessionOf(await ctx.interruptible(fleet.connect(server)));
  if (!session) {
    io.stderr(`kimi-service: ${l10n.t("advice reads one host's log; {0} is a multi-node server", server.name)}`);
    return EXIT.config;
  }
  const records = new LoadHistoryStore(new FileMemento(defaultHistoryFile(io.env, io.home))).list(
    server.name,
    server.unit,
  );
  const verbose = (line: string) => cmd.verbose && io.stderr(maskSecrets(line));
  const report = await ctx.interruptible(gatherAdvice(session, { records, log: verbose }));
  const { advice } = report.result;
  if (cmd.json) {
    advice.forEach((a, i) => io.stdout(JSON.stringify({ event: 'advice', server: server.name, index: i + 1, ...a })));
    io.stdout(
      JSON.stringify({
        event: 'advice-summary',
        server: server.name,
        count: advice.length,
        totalMs: report.log.totalMs,
        phaseMs: report.log.phaseMs,
        largest: report.result.largest,
        version: report.version,
        heldBack: report.result.heldBack,
      }),
    );
  } else {
    io.stdout(adviceHeader(server.name, report.result, report.log.totalMs));
    advice.forEach((a, i) => adviceLines(a, i + 1).forEach((l) => io.stdout(l)));
    for (const h of report.result.heldBack) io.stdout(l10n.t('not advised: {0}', h.reason));
    io.stdout(versionLine(report.engine, report.version));
  }
  if (cmd.apply === undefined) return EXIT.ok;

  const chosen = advice[cmd.apply - 1];
  if (!chosen) {
    io.stderr(`kimi-service: ${l10n.t('there is no suggestion {0} ({1} now)', cmd.apply, advice.length)}`);
    return EXIT.config;
  }
  if (!chosen.change || chosen.notApplicable) {
    io.stderr(
      `kimi-service: ${l10n.t('suggestion {0} is not applied from here: {1}', cmd.apply, chosen.notApplicable ?? chosen.action)}`,
    );
    return EXIT.failed;
  }
  if (!io.terminal && !cmd.yes) {
    io.stderr(`kimi-service: ${l10n.t("--apply changes the unit's command line: give --yes when no one is asked")}`);
    return EXIT.config;
  }
  const deps = changeDeps(session, ctx, verbose);
  const result = await ctx.interruptible(applyAdvice(deps, server, chosen));
  if (result.kind === 'cancelled') {
    io.stderr(l10n.t('Nothing changed.'));
    return EXIT.failed;
  }
  if (result.kind === 'already-set') {
    io.stdout(l10n.t('{0} is already set; nothing changed.', chosen.change.flag));
    return EXIT.ok;
  }
  if (result.kind === 'manual') {
    io.stdout(maskSecrets(result.advice));
    return EXIT.ok;
  }
  io.stdout(l10n.t('wrote {0}; restarting {1}', result.file, server.unit));
  const end = await restartAndWait(ctx);
  if (end === 'ready') {
    io.stdout(l10n.t('{0} is ready with {1}.', server.name, chosen.change.flag));
    return EXIT.ok;
  }
  if (end !== 'failed' && end !== 'stopped') {
    // Still loading (a wait's timeout is not a failure): the change stays; the roll back is a drop-in away.
    io.stderr(
      `kimi-service: ${l10n.t('{0} is not ready after {1} s ({2}); the change stays. Follow it with `kimi-service wait`; to undo it, {3}', server.name, cmd.timeoutSeconds, end, result.undo.byHand)}`,
    );
    return EXIT.timeout;
  }
  io.stderr(
    `kimi-service: ${l10n.t('{0} did not become ready with {1}: rolling back', server.name, chosen.change.flag)}`,
  );
  await ctx.interruptible(result.undo.run(deps));
  io.stdout(l10n.t('rolled back {0}; restarting {1}', result.file, server.unit));
  await restartAndWait(ctx);
  return EXIT.failed;
}

function changeDeps(session: AdviceSession, ctx: AdviceContext, verbose: (line: string) => void): ParserChangeDeps {
  const { io, cmd } = ctx;
  return {
    sudo: session.profile.sudo,
    ...(session.profile.host !== undefined ? { host: session.profile.host } : {}),
    log: verbose,
    exec: (command, options) =>
      session.transport.exec(shellLine(command), {
        timeoutMs: 60_000,
        ...(options?.stdin !== undefined ? { stdin: options.stdin } : {}),
      }),
    confirmDiff: async (diff) => {
      for (const line of maskSecrets(diff).trimEnd().split('\n')) io.stdout(line);
      if (cmd.yes || !io.terminal) return cmd.yes;
      const editor = argsEditorOf(session.profile);
      return confirm(
        io.terminal,
        editor.how === 'systemd-drop-in'
          ? l10n.t('Write this as a drop-in of {0} and restart it?', session.profile.unit)
          : l10n.t('Write this to {0} and restart {1}?', editor.file({}) ?? session.profile.unit, editor.restarts),
      );
    },
  };
}

async function restartAndWait(ctx: AdviceContext): Promise<string> {
  const restarted = await ctx.interruptible(ctx.fleet.restart(ctx.server, { force: true }));
  restarted.outcome.catch(() => undefined);
  const result = await ctx.interruptible(ctx.fleet.waitFor(ctx.server, { timeoutMs: ctx.cmd.timeoutSeconds * 1000 }));
  return result.kind;
}
