/** `restart` (asked on a terminal, then issued through the fleet's rule) and `wait` (bounded lines, a last summary). */
import * as l10n from '@vscode/l10n';
import { serverReport, waitReport, type ServerReport } from '../../present/report';
import type { ServerSnapshot } from '../../fleet/fleetTypes';
import { CLI_LIMITS } from './limits';
import { EXIT, exitForWait } from './exitCodes';
import {
  alertLine,
  INITIAL_PRINTER,
  nextWaitLine,
  restartLine,
  restartNext,
  statusLine,
  waitLine,
  waitSummaryLine,
} from './format';
import { confirm } from './prompt';
import { readRestart } from '../../agent/run';
import { COMMAND, connect, exitForSnapshot, type Context } from './cliContext';

export async function restart(ctx: Context): Promise<number> {
  // restart --wait --timeout S: S counts from here (from the answer, when a person was asked).
  let started = Date.now();
  const { cmd, io, fleet, server } = ctx;
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  // In a script the command is the confirmation; on a terminal it asks (unless --yes or kimiService.confirmRestart is off).
  if (io.terminal && !cmd.yes && ctx.settings.confirmRestart) {
    const where = l10n.t('{0} on {1} (server {2})', server.unit, server.host ?? l10n.t('this machine'), server.name);
    const yes = await ctx.interruptible(
      confirm(
        io.terminal,
        cmd.force
          ? l10n.t('Restart {0}? A load takes minutes. --force: even if a load is under way.', where)
          : l10n.t('Restart {0}? A load takes minutes.', where),
      ),
    );
    if (!yes) {
      io.stderr(l10n.t('Not restarted.'));
      return EXIT.failed;
    }
    started = Date.now();
  }
  let shown: ServerReport;
  // The verb waits until the host has the restart (or says why not).
  const result = await ctx.interruptible(
    fleet.restart(server, { force: cmd.force, issueTimeoutMs: CLI_LIMITS.restartIssueMs, signal: ctx.signal }),
  );
  result.outcome.catch(() => undefined);
  const reading = readRestart(result);
  if (reading.kind !== 'watched') {
    const { snapshot } = reading;
    if (reading.kind !== 'issued') {
      const report = serverReport(snapshot);
      io.stdout(statusLine(report, cmd.json));
      if (!cmd.json)
        io.stderr(
          `kimi-service: ${
            report.lastError
              ? l10n.t('the restart of {0} was not confirmed by the host: {1}.', server.unit, report.lastError)
              : l10n.t('the restart of {0} was not confirmed by the host.', server.unit)
          }`,
        );
      return exitForSnapshot(snapshot, EXIT.failed);
    }
    shown = serverReport(snapshot);
    io.stdout(restartLine('restarted', undefined, shown, cmd.json));
  } else {
    // What the load someone else started looks like, as the host says it (not the watch's blank first state).
    const snapshot = await ctx.interruptible(
      fleet.status(server, { timeoutMs: CLI_LIMITS.statusObserveMs, signal: ctx.signal }),
    );
    shown = serverReport(snapshot);
    io.stdout(restartLine('attached', reading.reason, shown, cmd.json));
  }
  if (cmd.wait) return wait(ctx, started, shown);
  if (!cmd.json) io.stdout(restartNext(server.name, COMMAND));
  return EXIT.ok;
}

/**
 * Waits until ready / failed / the deadline (counted from `started`): bounded output, a last
 * summary line. `shown`: the state restart --wait has printed already (not repeated).
 */
export async function wait(ctx: Context, started: number, shown?: ServerReport): Promise<number> {
  const { cmd, io, fleet, server } = ctx;
  const deadline = started + cmd.timeoutSeconds * 1000;
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  let printer = shown ? nextWaitLine(INITIAL_PRINTER, shown, Date.now()).printer : INITIAL_PRINTER;
  const print = (snapshot: ServerSnapshot) => {
    const now = Date.now();
    const report = serverReport(snapshot, now);
    const next = nextWaitLine(printer, report, now);
    printer = next.printer;
    if (next.line) io.stdout(waitLine(next.line, report, now - started, cmd.json));
  };
  const alerts = fleet.onEvent((event) => {
    if (event.server.name === server.name && event.type === 'alert')
      io.stdout(alertLine(event.alert, serverReport(fleet.snapshot(server)), cmd.json));
  });
  try {
    // A restart --wait has printed the state already; a plain wait starts with the state now.
    const result = await fleet.waitFor(server, {
      timeoutMs: Math.max(0, deadline - Date.now()),
      signal: ctx.signal,
      onChange: print,
    });
    io.stdout(waitSummaryLine(waitReport(result, Date.now() - started, `${COMMAND} wait`), cmd.json));
    return exitForWait(result, ctx.stoppedBy());
  } finally {
    alerts.dispose();
  }
}
