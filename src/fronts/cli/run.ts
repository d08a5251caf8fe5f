/**
 * `kimi-service`: argv -> a fleet verb -> lines on stdout and an exit code. A front only: every
 * state, word and decision comes from src/fleet (Fleet, report, standalone). The process
 * environment comes in through CliIo, so main.ts is the only file that touches `process`.
 */
import { forFront } from '../../present/hints';
import type { ServerProfile, Settings } from '../../config/config';
import { Fleet, type ServerSnapshot } from '../../fleet/fleet';
import { serverReport, waitReport, type ServerReport } from '../../fleet/words/report';
import {
  defaultConfigFile,
  defaultHistoryFile,
  FileMemento,
  loadStandaloneSettings,
  NO_QUESTIONS_UI,
  nonInteractivePolicy,
} from '../../fleet/servers/standalone';
import { FileSettingsSource } from '../../fleet/servers/fileSettingsSource';
import { resolveServer } from '../../fleet/servers/resolveServer';
import { serverChoiceText } from '../../present/serverChoice';
import type { LogLevel } from '../../monitor/watcher';
import { TransportError } from '../../transport/transport';
import { NotReadyError } from '../../fleet/fleetError';
import { refusalMessage } from '../../present/refusals';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import { parseCliArgs, type CliCommand } from './args';
import { CLI_LIMITS } from './limits';
import { EXIT, exitForRefusal, exitForSignal, exitForWait } from './exitCodes';
import {
  alertLine,
  errorLine,
  INITIAL_PRINTER,
  logsLines,
  nextWaitLine,
  notReadyAdvice,
  restartLine,
  restartNext,
  statusLine,
  verifyLines,
  waitLine,
  waitSummaryLine,
} from './format';
import { confirm, terminalUi, type Terminal } from './prompt';
import { ForwardError, openedLine } from '../../fleet/forward/forwardPlan';
import { parsersCommand } from './parsersCommand';
import { discoverCommand } from './discoverCommand';
import { adviceCommand } from './advice';

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

const COMMAND = 'kimi-service';

class Interrupted extends Error {
  constructor(readonly signal: StopSignal) {
    super(`interrupted by ${signal}`);
  }
}

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
      io.stderr(`Run "kimi-service --help" for the commands and options.`);
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
      io.stderr(`kimi-service: ${error.message}; nothing on the host was changed by stopping here.`);
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

interface Context {
  readonly cmd: CliCommand;
  readonly io: CliIo;
  readonly fleet: Fleet;
  readonly server: ServerProfile;
  readonly settings: Settings;
  readonly signal: AbortSignal;
  stoppedBy(): StopSignal | undefined;
  /** Rejects with Interrupted when SIGINT/SIGTERM arrives first. */
  interruptible<T>(work: Promise<T>): Promise<T>;
}

/** The settings and the server to act on, or why there are none (exit 5, nothing run). */
function configure(cmd: CliCommand, io: CliIo): { settings: Settings; server: ServerProfile } | { error: string } {
  const fromFlags = cmd.flags.host !== undefined || cmd.flags.unit !== undefined;
  const loaded = new FileSettingsSource(
    {
      ...(cmd.configFile !== undefined ? { configFile: cmd.configFile } : {}),
      ...(cmd.settingsFile !== undefined ? { settingsFile: cmd.settingsFile } : {}),
      ...(fromFlags ? { flags: { ...cmd.flags, ...(cmd.server !== undefined ? { name: cmd.server } : {}) } } : {}),
      env: io.env,
      platform: io.platform,
      home: io.home,
    },
    io.terminal !== undefined,
  ).read();
  if (!loaded.ok)
    return {
      error:
        loaded.source === 'none'
          ? loaded.errors.join('\n')
          : `the settings from ${loaded.source} are not valid:\n${loaded.errors.join('\n')}`,
    };
  if (fromFlags && loaded.source !== 'command-line flags') {
    // The servers file won over the flags: acting on another server than the one named would be worse than stopping.
    return {
      error: `--host/--unit were given, but the servers come from ${loaded.source}; pick one of its servers with --server NAME, or pass --config FILE`,
    };
  }
  const { settings } = loaded;
  const choice = resolveServer(settings, cmd.server);
  if (!choice.ok) return { error: serverChoiceText(choice, loaded.source) };
  const server = choice.server;
  return { settings, server };
}

/** Connects; a refusal is reported (the state line and what to do) and its exit code returned. */
async function connect(ctx: Context): Promise<number | undefined> {
  try {
    await ctx.interruptible(ctx.fleet.connect(ctx.server));
    return undefined;
  } catch (error) {
    if (error instanceof TransportError) return refused(ctx, error);
    throw error;
  }
}

function refused(ctx: Context, error: TransportError): number {
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
function exitForSnapshot(snapshot: ServerSnapshot, otherwise: number): number {
  return snapshot.refusal ? exitForRefusal(snapshot.refusal.kind) : otherwise;
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

async function restart(ctx: Context): Promise<number> {
  // restart --wait --timeout S: S counts from here (from the answer, when a person was asked).
  let started = Date.now();
  const { cmd, io, fleet, server } = ctx;
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  // In a script the command is the confirmation; on a terminal it asks (unless --yes or kimiService.confirmRestart is off).
  if (io.terminal && !cmd.yes && ctx.settings.confirmRestart) {
    const where = `${server.unit} on ${server.host ?? 'this machine'} (server ${server.name})`;
    const yes = await ctx.interruptible(
      confirm(
        io.terminal,
        `Restart ${where}? A load takes minutes.${cmd.force ? ' --force: even if a load is under way.' : ''}`,
      ),
    );
    if (!yes) {
      io.stderr('Not restarted.');
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
  if (result.kind === 'restarted') {
    const { issued, snapshot } = result;
    if (!issued) {
      const report = serverReport(snapshot);
      io.stdout(statusLine(report, cmd.json));
      if (!cmd.json)
        io.stderr(
          `kimi-service: the restart of ${server.unit} was not confirmed by the host${report.lastError ? `: ${report.lastError}` : ''}.`,
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
    io.stdout(restartLine('attached', result.reason, shown, cmd.json));
  }
  if (cmd.wait) return wait(ctx, started, shown);
  if (!cmd.json) io.stdout(restartNext(server.name, COMMAND));
  return EXIT.ok;
}

/**
 * Waits until ready / failed / the deadline (counted from `started`): bounded output, a last
 * summary line. `shown`: the state restart --wait has printed already (not repeated).
 */
async function wait(ctx: Context, started: number, shown?: ServerReport): Promise<number> {
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

async function logs(ctx: Context): Promise<number> {
  const refusedCode = await connect(ctx);
  if (refusedCode !== undefined) return refusedCode;
  const result = await ctx.interruptible(ctx.fleet.logs(ctx.server, ctx.cmd.lines));
  for (const line of logsLines(ctx.server.name, ctx.server.unit, result, ctx.cmd.json)) ctx.io.stdout(line);
  if (result.journalError) {
    if (!ctx.cmd.json)
      ctx.io.stderr(`kimi-service: the journal of ${ctx.server.unit} could not be read: ${result.journalError}`);
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

/** `discover HOST`: no server needs to be configured; the settings, when there are any, give the host-key policy. */
async function discover(cmd: CliCommand, io: CliIo): Promise<number> {
  const sources = { env: io.env, platform: io.platform, home: io.home };
  const loaded = loadStandaloneSettings({
    ...sources,
    ...(cmd.configFile !== undefined ? { configFile: cmd.configFile } : {}),
  });
  const base = loaded.ok ? loaded.settings : undefined;
  const abort = new AbortController();
  const interrupted = new Promise<never>((_, reject) => {
    abort.signal.addEventListener('abort', () => reject(new Interrupted('SIGINT')), { once: true });
  });
  interrupted.catch(() => undefined);
  let stoppedBy: StopSignal = 'SIGINT';
  const removeSignalHandler = io.onSignal((signal) => {
    stoppedBy = signal;
    abort.abort();
  });
  try {
    return await discoverCommand({
      cmd,
      serversFile: cmd.configFile ?? defaultConfigFile(sources),
      knownHostsFile: base?.knownHostsFile ?? '~/.ssh/known_hosts',
      hostKeyPolicy: nonInteractivePolicy(base?.hostKeyPolicy ?? 'ask', io.terminal !== undefined),
      ui: io.terminal ? terminalUi(io.terminal) : NO_QUESTIONS_UI,
      stdout: (line) => io.stdout(line),
      stderr: (line) => io.stderr(line),
      interruptible: (work) => Promise.race([work, interrupted]),
    });
  } catch (error) {
    if (error instanceof Interrupted) {
      io.stderr(`kimi-service: interrupted by ${stoppedBy}; nothing was written.`);
      return exitForSignal(stoppedBy);
    }
    if (cmd.json) io.stdout(errorLine(errorText(error), EXIT.failed, true, 'error'));
    io.stderr(`kimi-service: ${errorText(error)}`);
    return EXIT.failed;
  } finally {
    removeSignalHandler();
  }
}

/** Opens the forward and keeps it until SIGINT/SIGTERM: the normal end of this command (exit 0). */
async function forward(ctx: Context): Promise<number> {
  const { cmd, io, fleet, server } = ctx;
  if (server.host !== undefined) {
    const refusedCode = await connect(ctx);
    if (refusedCode !== undefined) return refusedCode;
  }
  let info;
  try {
    ({ info } = await ctx.interruptible(
      fleet.forward(server, cmd.localPort !== undefined ? { localPort: cmd.localPort } : {}),
    ));
  } catch (error) {
    if (!(error instanceof ForwardError)) throw error;
    const code = error.kind === 'prohibited' ? EXIT.failed : EXIT.config;
    if (cmd.json) io.stdout(errorLine(error.message, code, true, 'forward'));
    io.stderr(`kimi-service: ${error.message}`);
    return code;
  }
  io.stdout(cmd.json ? JSON.stringify({ event: 'forward', ...info }) : openedLine(info));
  if (!cmd.json) io.stderr('Press Ctrl-C to close the forward.');
  try {
    await ctx.interruptible(new Promise<never>(() => undefined));
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
  }
  await fleet.closeForward(server);
  if (cmd.json) io.stdout(JSON.stringify({ event: 'closed', server: server.name, localPort: info.localPort }));
  else io.stderr(`Closed 127.0.0.1:${info.localPort}.`);
  return EXIT.ok;
}
