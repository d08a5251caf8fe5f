/**
 * What the five agent tools do, once for the language-model tools and the MCP server: input (as
 * definition.ts validates it) -> fleet verbs -> a result (the text a model reads and the same
 * facts as JSON). The fronts only translate that result into their medium. Refusals before
 * anything runs are thrown as ToolRefusal, with words a model can act on.
 */
import type { ServerProfile, Settings } from '../config/config';
import type { SettingsRead } from '../config/settingsSource';
import type { RestartAnswer, ServerSnapshot } from '../fleet/fleetTypes';
import type { FrontFleet } from '../fleet/fleetVerbs';
import { serverReport, waitReport, type ServerReport } from '../present/report';
import { NotReadyError } from '../fleet/fleetError';
import { resolveServer } from '../fleet/servers/resolveServer';
import { observe } from '../fleet/restart/observe';
import type { LogLevel } from '../monitor/watch/watchTypes';
import { expectedLoadTime } from '../present/forecast';
import { invalidSettingsText, sentence, serverChoiceText } from '../present/serverRefusalText';
import { TransportError } from '../transport/transport';
import { errorText } from '../util/errors';
import { maskSecrets } from '../util/secrets';
import type { ToolInput, ToolName } from './definition';
import { TOOL_ERROR_LINES_STATUS, TOOL_ERROR_LINES_WAIT, TOOL_FIRST_ANSWER_MS } from './limits';
import { verifyText } from './verifyText';
import { notRestarted, notVerified } from '../present/words/agentWords';

/** A call refused before anything ran on a host; the message says why and what to do. */
export class ToolRefusal extends Error {}

/** A verification the fleet refused: the state, and the tool to call instead. */
function notReadyText(error: NotReadyError): string {
  const next =
    error.why === 'loading'
      ? 'call kimi_wait until it is ready, then kimi_verify_parsers'
      : 'it is not serving: kimi_logs says why, kimi_restart starts it again';
  return `${serverReport(error.snapshot).summary}\nThe parsers can be checked only on a ready server: ${next}. Nothing was run.`;
}

export interface ToolOutcome {
  /** What a model reads first. */
  readonly text: string;
  /** The same facts, structured. */
  readonly json: Record<string, unknown>;
  /** The verb was refused or failed on the host (a refusal, a restart that did not happen). */
  readonly isError: boolean;
}

export interface AgentHost {
  readonly fleet: FrontFleet;
  /** The settings now (read again at each call: a fixed setting applies at the next one). */
  settings(): SettingsRead;
  /** Sets up the server's session before a verb runs on its host; throws (a ToolRefusal) when there is none. */
  prepare?(server: ServerProfile): Promise<void>;
  /**
   * kimi_status watches a server nothing watches yet (the MCP server, a fresh process); in
   * VS Code the extension's own watches decide, and status reports what they know.
   */
  readonly watchOnStatus: boolean;
  /** Whose log kimi_logs returns besides the server's ("the Kimi MCP server", "the Kimi Service extension"). */
  readonly logOwner: string;
  log(level: LogLevel, message: string): void;
  /** How long status and restart wait for the host's first answer (default TOOL_FIRST_ANSWER_MS). */
  readonly firstAnswerMs?: number;
}

export interface RunOptions {
  readonly signal?: AbortSignal;
  /** kimi_wait: called at each change of the server's state. */
  readonly progress?: (snapshot: ServerSnapshot) => void;
}

/** The journal's error lines of a failed load (the traceback's end), masked. */
export function errorLines(snapshot: ServerSnapshot, max: number): string[] {
  return (snapshot.state?.failure?.lines ?? []).slice(-max).map((line) => maskSecrets(line.trimEnd()));
}

/** What a restart request came to, as every front tells it: the fleet's answer read once. */
export type RestartReading =
  | { readonly kind: 'watched'; readonly reason: string }
  /** The host did not take the restart and says why (a refusal, a failure, the connection's error). */
  | { readonly kind: 'failed'; readonly problem: string; readonly snapshot: ServerSnapshot }
  /** Asked, but the host has not confirmed it within the issue timeout. */
  | { readonly kind: 'unconfirmed'; readonly snapshot: ServerSnapshot }
  | { readonly kind: 'issued'; readonly snapshot: ServerSnapshot };

export function readRestart(result: RestartAnswer): RestartReading {
  if (result.kind === 'watched') return { kind: 'watched', reason: result.reason };
  const { issued, snapshot } = result;
  if (issued) return { kind: 'issued', snapshot };
  const problem =
    snapshot.refusal?.message ??
    snapshot.state?.failure?.summary ??
    (snapshot.state && !snapshot.state.connected ? snapshot.state.connectionError : undefined);
  return problem ? { kind: 'failed', problem, snapshot } : { kind: 'unconfirmed', snapshot };
}

function outcome(text: string, json: Record<string, unknown>, isError = false): ToolOutcome {
  return { text, json, isError };
}

export class AgentTools {
  /** Servers a status call is starting to watch, so two calls at once start one watch. */
  private readonly observing = new Map<string, Promise<string | undefined>>();

  constructor(private readonly host: AgentHost) {}

  private get fleet(): FrontFleet {
    return this.host.fleet;
  }

  private get firstAnswerMs(): number {
    return this.host.firstAnswerMs ?? TOOL_FIRST_ANSWER_MS;
  }

  /** The settings, or a refusal that names what is wrong. */
  settings(): { settings: Settings; source: string } {
    const read = this.host.settings();
    if (!read.ok)
      throw new ToolRefusal(
        `${sentence(invalidSettingsText(read.source, read.errors))}. Nothing was run; fix it and call again.`,
      );
    return read;
  }

  /** The server a call names, else the active one; a refusal when there is none. */
  server(name: string | undefined): ServerProfile {
    const { settings, source } = this.settings();
    const choice = resolveServer(settings, name);
    if (!choice.ok) throw new ToolRefusal(`${sentence(serverChoiceText(choice, source))}. Nothing was run.`);
    return choice.server;
  }

  run<N extends ToolName>(name: N, input: ToolInput<N>, options: RunOptions = {}): Promise<ToolOutcome> {
    switch (name) {
      case 'kimi_status':
        return this.status(input as ToolInput<'kimi_status'>);
      case 'kimi_restart':
        return this.restart(input as ToolInput<'kimi_restart'>);
      case 'kimi_wait':
        return this.wait(input as ToolInput<'kimi_wait'>, options);
      case 'kimi_verify_parsers':
        return this.verify(input as ToolInput<'kimi_verify_parsers'>);
      case 'kimi_logs':
        return this.logs(input as ToolInput<'kimi_logs'>);
    }
    throw new ToolRefusal(`There is no tool named ${JSON.stringify(name)}.`);
  }

  /** A refusal (host key, login, DNS...): the report names it; nothing was run. */
  private refused(server: ServerProfile, error: TransportError, what: string): ToolOutcome {
    const report = serverReport(this.fleet.snapshot(server));
    return outcome(
      `${report.summary}\n${what}: ${error.message}`,
      { action: 'refused', error: error.message, report },
      true,
    );
  }

  /**
   * Makes sure something watches the server (read only: nothing is restarted) and the host answered one
   * full round; an error text when it could not even try. A refusal is in the snapshot.
   */
  private observed(server: ServerProfile): Promise<string | undefined> {
    let pending = this.observing.get(server.name);
    if (!pending) {
      pending = this.connectAndObserve(server).finally(() => this.observing.delete(server.name));
      this.observing.set(server.name, pending);
    }
    return pending;
  }

  private async connectAndObserve(server: ServerProfile): Promise<string | undefined> {
    const limit = this.firstAnswerMs;
    const deadline = Date.now() + limit;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), limit)));
    try {
      const connected = await Promise.race([this.fleet.connect(server).then(() => 'connected' as const), timeout]);
      if (connected === 'timeout')
        return `still connecting to ${server.host ?? 'this machine'} after ${Math.round(limit / 1000)} s`;
    } catch (error) {
      return error instanceof TransportError ? undefined : errorText(error);
    } finally {
      clearTimeout(timer);
    }
    await observe(this.fleet, server, { timeoutMs: Math.max(0, deadline - Date.now()) });
    return undefined;
  }

  private async status(input: ToolInput<'kimi_status'>): Promise<ToolOutcome> {
    const { settings } = this.settings();
    const servers = input.server === undefined ? settings.servers : [this.server(input.server)];
    const active = this.server(undefined);
    const problems = this.host.watchOnStatus
      ? await Promise.all(servers.map((s) => this.observed(s)))
      : servers.map(() => undefined);
    const reports: (ServerReport & { connectError?: string; errorLines?: string[] })[] = servers.map((s, i) => {
      const snapshot = this.fleet.snapshot(s);
      const lines = snapshot.state?.verdict === 'failed' ? errorLines(snapshot, TOOL_ERROR_LINES_STATUS) : [];
      return {
        ...serverReport(snapshot),
        ...(problems[i] ? { connectError: problems[i] } : {}),
        ...(lines.length ? { errorLines: lines } : {}),
      };
    });
    const lines = reports.map((r) =>
      [
        r.connectError ? `${r.summary} (${r.connectError})` : r.summary,
        ...(r.errorLines ?? []).map((l) => `  ${l}`),
      ].join('\n'),
    );
    for (const r of reports)
      if (r.state === 'not watched')
        lines.push(
          `Nothing watches ${r.server} now: call kimi_wait to watch it (it does not restart) and learn its current state.`,
        );
    if (input.server === undefined && reports.length > 1)
      lines.push(`Active server (used when "server" is omitted): ${active.name}.`);
    return outcome(lines.join('\n'), { activeServer: active.name, servers: reports });
  }

  private async restart(input: ToolInput<'kimi_restart'>): Promise<ToolOutcome> {
    const { fleet } = this;
    const server = this.server(input.server);
    const force = input.force === true;
    await this.host.prepare?.(server);
    let forecast: string | undefined;
    try {
      // What history and the page cache predict (a load already under way is watched: no forecast needed).
      if (force || !fleet.snapshot(server).loading) {
        const f = await fleet.forecast(server);
        forecast = f.text ? expectedLoadTime(f) : undefined;
      }
    } catch (error) {
      if (error instanceof TransportError) return this.refused(server, error, 'Nothing was restarted');
      this.host.log('warn', `[${server.name}] No load forecast: ${errorText(error)}`);
    }
    let result;
    try {
      // The verb waits until the host has the restart (at most firstAnswerMs: an agent's call stays short).
      result = await fleet.restart(server, { ...(force ? { force: true } : {}), issueTimeoutMs: this.firstAnswerMs });
    } catch (error) {
      if (error instanceof TransportError) return this.refused(server, error, 'Nothing was restarted');
      throw new Error(notRestarted(server.unit, server.name, errorText(error)));
    }
    result.outcome.catch((error: unknown) => this.host.log('warn', `[${server.name}] ${errorText(error)}`));
    this.host.log(
      'info',
      `[${server.name}] kimi_restart: ${result.kind === 'restarted' ? `restarted${force ? ' (force)' : ''}` : `watched, not restarted (${result.reason})`}`,
    );
    const reading = readRestart(result);
    if (reading.kind === 'watched') await observe(fleet, server, { timeoutMs: this.firstAnswerMs });
    const failed = reading.kind === 'failed';
    const next = this.restartNext(server, reading, force, forecast);
    const report = serverReport(fleet.snapshot(server));
    return outcome(
      `${report.summary}\n${next}`,
      {
        // The JSON agents read keeps the action's documented value `attached`.
        action: result.kind === 'watched' ? 'attached' : result.kind,
        server: server.name,
        unit: server.unit,
        ...(result.kind === 'watched' ? { reason: result.reason } : {}),
        ...(forecast ? { forecast } : {}),
        next,
        report,
      },
      failed,
    );
  }

  private restartNext(
    server: ServerProfile,
    reading: RestartReading,
    force: boolean,
    forecast: string | undefined,
  ): string {
    switch (reading.kind) {
      case 'watched':
        return `Not restarted: ${reading.reason}. Call kimi_wait to follow that load (force: true would restart anyway; only when the user asks for it).`;
      case 'failed':
        return `The restart of ${server.unit} on ${server.name} failed: ${reading.problem}. Read kimi_logs; do not call kimi_wait for this restart.`;
      case 'unconfirmed':
        return `The restart of ${server.unit} on ${server.name} was asked but the host has not confirmed it within ${Math.round(this.firstAnswerMs / 1000)} s. Call kimi_wait to follow it; do not restart again.`;
      case 'issued':
        return `Restart of ${server.unit} on ${server.name} issued${force ? ' (force)' : ''}${forecast ? ` (expected: ${forecast})` : ''}. Call kimi_wait now, and again after each timeout, until ready or failed; do not restart again.`;
    }
  }

  private async wait(input: ToolInput<'kimi_wait'>, options: RunOptions): Promise<ToolOutcome> {
    const server = this.server(input.server);
    await this.host.prepare?.(server);
    const started = Date.now();
    const result = await this.fleet.waitFor(server, {
      timeoutMs: input.timeoutSeconds * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.progress ? { onChange: options.progress } : {}),
    });
    const waited = Date.now() - started;
    const report = waitReport(result, waited, 'kimi_wait');
    this.host.log('info', `[${server.name}] kimi_wait: ${result.kind} after ${(waited / 1000).toFixed(1)} s`);
    const lines = result.kind === 'failed' ? errorLines(result.snapshot, TOOL_ERROR_LINES_WAIT) : [];
    const text = [
      report.report.summary,
      report.next,
      ...(lines.length ? ['Error lines of the server:', ...lines.map((l) => `  ${l}`)] : []),
    ].join('\n');
    return outcome(text, { ...report, ...(lines.length ? { errorLines: lines } : {}) });
  }

  private async verify(input: ToolInput<'kimi_verify_parsers'>): Promise<ToolOutcome> {
    const server = this.server(input.server);
    await this.host.prepare?.(server);
    const log: string[] = [];
    try {
      const result = await this.fleet.verifyParsers(server, (line) => {
        log.push(line);
        this.host.log('info', `[${server.name}] ${line}`);
      });
      return outcome(verifyText(server.name, result), {
        server: server.name,
        summary: result.summary,
        verdict: result.verdict,
        allPassed: result.allPassed ?? null,
        table: result.table,
        log,
      });
    } catch (error) {
      if (error instanceof TransportError) return this.refused(server, error, 'Nothing was checked');
      if (error instanceof NotReadyError) throw new ToolRefusal(notReadyText(error));
      throw new Error(notVerified(server.name, errorText(error)));
    }
  }

  private async logs(input: ToolInput<'kimi_logs'>): Promise<ToolOutcome> {
    const server = this.server(input.server);
    await this.host.prepare?.(server);
    const logs = await this.fleet.logs(server, input.lines);
    const parts = [
      `Journal of ${server.unit} on ${server.name} (last ${logs.journal.length} lines):`,
      ...(logs.journal.length ? logs.journal : ['(none)']),
    ];
    if (logs.journalError) parts.push(`The journal could not be read: ${logs.journalError}`);
    parts.push(
      `Log of ${this.host.logOwner} about ${server.name} (last ${logs.log.length} lines):`,
      ...(logs.log.length ? logs.log : ['(none)']),
    );
    return outcome(parts.join('\n'), {
      server: server.name,
      unit: server.unit,
      journal: logs.journal,
      journalError: logs.journalError ?? null,
      log: logs.log,
    });
  }
}
