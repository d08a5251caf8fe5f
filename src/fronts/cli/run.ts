/**
 * `kimi-service`: argv -> a fleet verb -> lines on stdout and an exit code. A front only: every
 * state, word and decision comes from src/fleet (Fleet, report, standalone). The process
 * environment comes in through CliIo, so main.ts is the only file that touches `process`.
 */
import * as l10n from '@vscode/l10n';
import { forFront } from '../../present/hints';
import { Fleet } from '../../fleet/fleet';
import { serverReport } from '../../present/report';
import { defaultHistoryFile, FileMemento, NO_QUESTIONS_UI } from '../../fleet/servers/standalone';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { TransportError } from '../../transport/transport';
import { NotReadyError } from '../../fleet/fleetError';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import { parseCliArgs } from './args';
import { CLI_LIMITS } from './limits';
import { EXIT, exitForSignal } from './exitCodes';
import { errorLine, logsLines, notReadyAdvice, statusLine, verifyLines } from './format';
import { terminalUi } from './prompt';
import { parsersCommand } from './parsersCommand';
import { adviceCommand } from './adviceCommand';
import {
  COMMAND,
  connect,
  exitForSnapshot,
  Interrupted,
  refused,
  type CliIo,
  type Context,
  type StopSignal,
} from './cliContext';
import { configure } from './cliSettings';
import { restart, wait } from './restartCommand';
import { forward } from './forwardCommand';
import { discover } from './discoverVerb';

export async function runCli(argv: readonly string[], terminalIo: CliIo): Promise<number> {
  // The core's words name VS Code's palette commands: a shell user gets the CLI's (present/hints).
  const io: CliIo = {
    ...terminalIo,
    stdout: (line) => terminalIo.stdout(forFront(line, 'cli')),
    stderr: (line) => terminalIo.stderr(forFront(line, 'cli')),
  };
  const parsed = parseCliArgs(argv);
  const jsonWanted = argv.includes('--json');
  switch (parsed.kind) {
    case 'help':
      for (const line of parsed.text.trimEnd().split('\n')) io.stdout(line);
      return EXIT.ok;
    case 'version':
      io.stdout(io.version);
      return EXIT.ok;
    case 'error':
      if (jsonWanted) io.stdout(errorLine(parsed.message, EXIT.config, true, 'usage'));
      io.stderr(`kimi-service: ${parsed.message}`);
      io.stderr(l10n.t('Run "kimi-service --help" for the commands and options.'));
      return EXIT.config;
  }
  const cmd = parsed.command;
  if (cmd.command === 'discover') return discover(cmd, io);
  const configured = configure(cmd, io);
  if ('error' in configured) {
    if (cmd.json) io.stdout(errorLine(configured.error, EXIT.config, true));
    for (const line of configured.error.split('\n')) io.stderr(`kimi-service: ${line}`);
    return EXIT.config;
  }
  const { settings, server } = configured;

  const log = (level: LogLevel, message: string) => {
    if (cmd.verbose && level !== 'trace') io.stderr(`${level}: ${maskSecrets(message)}`);
  };
  const fleet = new Fleet({
    ui: io.terminal ? terminalUi(io.terminal) : NO_QUESTIONS_UI,
    log,
    history: new FileMemento(defaultHistoryFile(io.env, io.home)),
    apiKey: async () => io.env.KIMI_API_KEY || undefined,
  });
  fleet.configure(settings);

  const abort = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const interrupted = new Promise<never>((_, reject) => {
    abort.signal.addEventListener('abort', () => reject(new Interrupted(stoppedBy ?? 'SIGINT')), { once: true });
  });
  interrupted.catch(() => undefined);
  const removeSignalHandler = io.onSignal((signal) => {
    if (abort.signal.aborted) return;
    stoppedBy = signal;
    abort.abort();
  });
  const ctx: Context = {
    cmd,
    io,
    fleet,
    server,
    settings,
    signal: abort.signal,
    stoppedBy: () => stoppedBy,
    interruptible: (p) => Promise.race([p, interrupted]),
  };
  try {
    switch (cmd.command) {
      case 'status':
        return await status(ctx);
      case 'restart':
        return await restart(ctx);
      case 'wait':
        return await wait(ctx, Date.now());
      case 'logs':
        return await logs(ctx);
      case 'verify':
        return await verify(ctx);
      case 'forward':
        return await forward(ctx);
      case 'parsers':
        return await parsers(ctx);
      case 'advice':
        return await adviceCommand(ctx);
    }
  } catch (error) {
    if (error instanceof Interrupted) {
      io.stderr(`kimi-service: ${l10n.t('{0}; nothing on the host was changed by stopping here.', error.message)}`);
      return exitForSignal(error.signal);
    }
    if (error instanceof TransportError) return refused(ctx, error);
    if (cmd.json) io.stdout(errorLine(errorText(error), EXIT.failed, true, 'error'));
    io.stderr(`kimi-service: ${errorText(error)}`);
    return EXIT.failed;
  } finally {
    removeSignalHandler();
    fleet.dispose();
  }
}

async function status(ctx: Context): Promise<number> {
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  const snapshot = await ctx.interruptible(
    ctx.fleet.status(ctx.server, { timeoutMs: CLI_LIMITS.statusObserveMs, signal: ctx.signal }),
  );
  ctx.io.stdout(statusLine(serverReport(snapshot), ctx.cmd.json));
  return exitForSnapshot(snapshot, EXIT.ok);
}

async function logs(ctx: Context): Promise<number> {
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  const result = await ctx.interruptible(ctx.fleet.logs(ctx.server, ctx.cmd.lines));
  for (const line of logsLines(ctx.server.name, ctx.server.unit, result, ctx.cmd.json)) ctx.io.stdout(line);
  if (result.journalError) {
    if (!ctx.cmd.json)
      ctx.io.stderr(
        `kimi-service: ${l10n.t('the journal of {0} could not be read: {1}', ctx.server.unit, result.journalError)}`,
      );
    return result.journal.length > 0 ? EXIT.ok : exitForSnapshot(ctx.fleet.snapshot(ctx.server), EXIT.failed);
  }
  return EXIT.ok;
}

async function verify(ctx: Context): Promise<number> {
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  let result;
  try {
    result = await ctx.interruptible(
      ctx.fleet.verifyParsers(ctx.server, (line) => ctx.cmd.verbose && ctx.io.stderr(maskSecrets(line))),
    );
  } catch (error) {
    if (!(error instanceof NotReadyError)) throw error;
    ctx.io.stdout(statusLine(serverReport(error.snapshot), ctx.cmd.json));
    if (!ctx.cmd.json) ctx.io.stderr(`${COMMAND}: ${notReadyAdvice(ctx.server.name, error.why)}`);
    return error.why === 'loading' ? EXIT.timeout : EXIT.failed;
  }
  for (const line of verifyLines(ctx.server.name, result, ctx.cmd.json)) ctx.io.stdout(line);
  return result.allPassed ? EXIT.ok : EXIT.failed;
}

async function parsers(ctx: Context): Promise<number> {
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  return parsersCommand({
    cmd: ctx.cmd,
    fleet: ctx.fleet,
    server: ctx.server,
    terminal: ctx.io.terminal,
    stdout: (line) => ctx.io.stdout(line),
    stderr: (line) => ctx.io.stderr(line),
    interruptible: (work) => ctx.interruptible(work),
    // The command line changed: a load under way runs the old one, so it is replaced, not followed.
    restartAndWait: () => restart({ ...ctx, cmd: { ...ctx.cmd, force: true, yes: true, wait: true } }),
  });
}
