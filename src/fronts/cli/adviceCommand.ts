/**
 * `kimi-service advice [--apply N]`: the suggestions for a faster load, each with its evidence,
 * figure and source (fleet/checks/loadAdvice); --apply N writes suggestion N as the unit's drop-in after
 * the diff is confirmed (or --yes), restarts, waits, and rolls back when the server then fails.
 */
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
    io.stderr(`kimi-service: advice reads one host's log; ${server.name} is a multi-node server`);
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
    for (const h of report.result.heldBack) io.stdout(`not advised: ${h.reason}`);
    io.stdout(versionLine(report.engine, report.version));
  }
  if (cmd.apply === undefined) return EXIT.ok;

  const chosen = advice[cmd.apply - 1];
  if (!chosen) {
    io.stderr(`kimi-service: there is no suggestion ${cmd.apply} (${advice.length} now)`);
    return EXIT.config;
  }
  if (!chosen.change || chosen.notApplicable) {
    io.stderr(
      `kimi-service: suggestion ${cmd.apply} is not applied from here: ${chosen.notApplicable ?? chosen.action}`,
    );
    return EXIT.failed;
  }
  if (!io.terminal && !cmd.yes) {
    io.stderr("kimi-service: --apply changes the unit's command line: give --yes when no one is asked");
    return EXIT.config;
  }
  const deps = changeDeps(session, ctx, verbose);
  const result = await ctx.interruptible(applyAdvice(deps, server, chosen));
  if (result.kind === 'cancelled') {
    io.stderr('Nothing changed.');
    return EXIT.failed;
  }
  if (result.kind === 'already-set') {
    io.stdout(`${chosen.change.flag} is already set; nothing changed.`);
    return EXIT.ok;
  }
  if (result.kind === 'manual') {
    io.stdout(maskSecrets(result.advice));
    return EXIT.ok;
  }
  io.stdout(`wrote ${result.file}; restarting ${server.unit}`);
  const end = await restartAndWait(ctx);
  if (end === 'ready') {
    io.stdout(`${server.name} is ready with ${chosen.change.flag}.`);
    return EXIT.ok;
  }
  if (end !== 'failed' && end !== 'stopped') {
    // Still loading (a wait's timeout is not a failure): the change stays; the roll back is a drop-in away.
    io.stderr(
      `kimi-service: ${server.name} is not ready after ${cmd.timeoutSeconds} s (${end}); the change stays. Follow it with \`kimi-service wait\`; to undo it, ${result.undo.byHand}`,
    );
    return EXIT.timeout;
  }
  io.stderr(`kimi-service: ${server.name} did not become ready with ${chosen.change.flag}: rolling back`);
  await ctx.interruptible(result.undo.run(deps));
  io.stdout(`rolled back ${result.file}; restarting ${server.unit}`);
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
          ? `Write this as a drop-in of ${session.profile.unit} and restart it?`
          : `Write this to ${editor.file({}) ?? session.profile.unit} and restart ${editor.restarts}?`,
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
