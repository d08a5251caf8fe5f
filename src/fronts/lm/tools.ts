/**
 * The language-model tools (contributes.languageModelTools): a front over the fleet, for Copilot
 * agent mode and any extension calling vscode.lm.invokeTool. Each tool turns its input into one
 * fleet verb and answers with text a model reads plus the same as JSON; the wording of states
 * is fleet/report's, shared with the MCP server and the CLI.
 */
import * as vscode from 'vscode';
import { serverHosts, type ServerProfile } from '../../config/config';
import type { Fleet, RestartResult } from '../../fleet/fleet';
import { serverReport, waitReport } from '../../fleet/report';
import { errorText } from '../../util/errors';
import {
  optional,
  requireSession,
  resolveServer,
  vscodeToolSettings,
  type ToolHost,
  type ToolSettings,
} from './toolHost';
import type { ParserVerification } from '../../fleet/fleet';

const VERDICT_WORDS: Record<ParserVerification['verdict'], string> = {
  verified: 'all checks passed',
  failed: 'NOT all checks passed',
  inconclusive: 'NOT all checks passed: inconclusive, the answers were cut by max_tokens',
  incomplete: 'NOT all checks passed: some requests got no answer',
};

export const TOOL_NAMES = ['kimi_status', 'kimi_restart', 'kimi_wait', 'kimi_verify_parsers', 'kimi_logs'] as const;

export const WAIT_DEFAULT_SECONDS = 90;
export const WAIT_MAX_SECONDS = 300;
export const LOGS_DEFAULT_LINES = 50;
export const LOGS_MAX_LINES = 1000;
/** prepareInvocation must answer fast (VS Code flags ~3 s as unresponsive): the forecast gets this long. */
export const FORECAST_WAIT_MS = 2000;

interface ServerInput {
  server?: string;
}
interface RestartInput extends ServerInput {
  force?: boolean;
}
interface WaitInput extends ServerInput {
  timeoutSeconds?: number;
}
interface LogsInput extends ServerInput {
  lines?: number;
}

/** The text the model reads, then the same as JSON. */
function toolResult(text: string, json: unknown): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([
    new vscode.LanguageModelTextPart(text),
    new vscode.LanguageModelTextPart(JSON.stringify(json)),
  ]);
}

function serverOf(host: ToolHost, settings: ToolSettings, input: unknown): ServerProfile {
  return resolveServer(host, settings, optional(input, 'server', 'string'));
}

/** kimi_status: every configured server (or the one named), as every front reports it. */
export class StatusTool implements vscode.LanguageModelTool<ServerInput> {
  constructor(
    private readonly host: ToolHost,
    private readonly settings: ToolSettings = vscodeToolSettings,
  ) {}

  invoke(options: vscode.LanguageModelToolInvocationOptions<ServerInput>): vscode.LanguageModelToolResult {
    const named = optional(options.input, 'server', 'string');
    const chosen = resolveServer(this.host, this.settings, named);
    const active = this.host.activeServerProfile()?.name ?? chosen.name;
    const servers = named ? [chosen] : this.host.fleet.servers;
    const reports = servers.map((server) => serverReport(this.host.fleet.snapshot(server)));
    const lines = reports.map((r) => r.summary);
    for (const r of reports) {
      if (r.state === 'not watched')
        lines.push(
          `Nothing watches ${r.server} now: call kimi_wait to attach (it does not restart) and learn its current state.`,
        );
    }
    if (!named && reports.length > 1) lines.push(`Active server (used when "server" is omitted): ${active}.`);
    return toolResult(lines.join('\n'), { activeServer: active, servers: reports });
  }
}

/** The confirmation of kimi_restart, as the command's modal says it. Pure. */
export function restartConfirmation(
  server: ServerProfile,
  expectedLoadTime: string,
  force: boolean,
): vscode.LanguageModelToolConfirmationMessages {
  const lines = [
    `The model server ${server.unit} on ${server.name} (${serverHosts(server)}) stops now and is unavailable until it has loaded again.`,
    `Expected load time: ${expectedLoadTime}.`,
    force
      ? 'force: a load already under way is cut short and started again.'
      : 'If a load is already under way (someone else restarted it moments ago), it is followed instead of restarted again.',
  ];
  return { title: `Restart ${server.unit} on ${server.name}?`, message: lines.join('\n\n') };
}

/** The forecast's text ("~9 min: 41% of the weights are cached"), or why it is unknown; never slower than `waitMs`. */
export async function expectedLoadTime(
  fleet: Pick<Fleet, 'forecast'>,
  server: ServerProfile,
  waitMs = FORECAST_WAIT_MS,
): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const forecast = await Promise.race([
      fleet.forecast(server),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), waitMs);
      }),
    ]);
    if (!forecast) return `unknown (no forecast within ${waitMs / 1000} s)`;
    if (!forecast.text) return `unknown${forecast.warning ? ` (${forecast.warning})` : ''}`;
    return `${forecast.text}${forecast.warning ? ` (${forecast.warning})` : ''}`;
  } catch (error) {
    return `unknown (${errorText(error)})`;
  } finally {
    clearTimeout(timer);
  }
}

/** kimi_restart: restarts the unit, or follows the load under way (fleet.restart decides). */
export class RestartTool implements vscode.LanguageModelTool<RestartInput> {
  constructor(
    private readonly host: ToolHost,
    private readonly settings: ToolSettings = vscodeToolSettings,
  ) {}

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<RestartInput>,
  ): Promise<vscode.PreparedToolInvocation> {
    const server = serverOf(this.host, this.settings, options.input);
    const force = optional(options.input, 'force', 'boolean') ?? false;
    const attaches = this.host.fleet.snapshot(server).loading && !force;
    const invocationMessage = attaches
      ? `Following the load of ${server.unit} on ${server.name} (already under way)`
      : `Restarting ${server.unit} on ${server.name}`;
    // Following a load touches nothing on the host: no question to ask.
    if (attaches || !this.settings.confirmRestart()) return { invocationMessage };
    return {
      invocationMessage,
      confirmationMessages: restartConfirmation(server, await expectedLoadTime(this.host.fleet, server), force),
    };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<RestartInput>,
  ): Promise<vscode.LanguageModelToolResult> {
    const server = serverOf(this.host, this.settings, options.input);
    const force = optional(options.input, 'force', 'boolean') ?? false;
    await requireSession(this.host, server);
    let result: RestartResult;
    try {
      result = await this.host.fleet.restart(server, { force });
    } catch (error) {
      throw new Error(`${server.unit} on ${server.name} was not restarted: ${errorText(error)}`);
    }
    // The load's end is told by the fleet's events (status bar, notifications); kimi_wait follows it.
    result.outcome.catch(() => undefined);
    const report = serverReport(this.host.fleet.snapshot(server));
    const text =
      result.kind === 'restarted'
        ? `Restart of ${server.unit} on ${server.name} issued${force ? ' (force)' : ''}. The load takes minutes: call kimi_wait to follow it ` +
          `(it returns within timeoutSeconds; call it again while it is still loading). Do not call kimi_restart again.`
        : `Not restarted: ${result.reason}. Call kimi_wait to follow that load. (force: true would restart anyway; only when the user asks for it.)`;
    return toolResult(`${text}\nNow: ${report.summary}`, {
      result: result.kind,
      server: server.name,
      unit: server.unit,
      ...(result.kind === 'attached' ? { reason: result.reason } : {}),
      report,
    });
  }
}

/** kimi_wait: a bounded wait for ready / failed / stopped that says what to do next. */
export class WaitTool implements vscode.LanguageModelTool<WaitInput> {
  constructor(
    private readonly host: ToolHost,
    private readonly settings: ToolSettings = vscodeToolSettings,
  ) {}

  prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<WaitInput>,
  ): vscode.PreparedToolInvocation {
    const server = serverOf(this.host, this.settings, options.input);
    return { invocationMessage: `Waiting up to ${waitSeconds(options.input)} s for ${server.name} to be ready` };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<WaitInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const server = serverOf(this.host, this.settings, options.input);
    const seconds = waitSeconds(options.input);
    await requireSession(this.host, server);
    const abort = new AbortController();
    const cancelled = token.onCancellationRequested(() => abort.abort());
    if (token.isCancellationRequested) abort.abort();
    const started = Date.now();
    try {
      const result = await this.host.fleet.waitFor(server, { timeoutMs: seconds * 1000, signal: abort.signal });
      const report = waitReport(result, Date.now() - started, 'kimi_wait');
      return toolResult(`${report.next}\nNow: ${report.report.summary}`, report);
    } finally {
      cancelled.dispose();
    }
  }
}

function waitSeconds(input: unknown): number {
  const asked = optional(input, 'timeoutSeconds', 'number') ?? WAIT_DEFAULT_SECONDS;
  return Math.min(WAIT_MAX_SECONDS, Math.max(1, asked));
}

/** kimi_verify_parsers: reasoning and tool calling checked on the running server. */
export class VerifyParsersTool implements vscode.LanguageModelTool<ServerInput> {
  constructor(
    private readonly host: ToolHost,
    private readonly settings: ToolSettings = vscodeToolSettings,
  ) {}

  prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ServerInput>,
  ): vscode.PreparedToolInvocation {
    const server = serverOf(this.host, this.settings, options.input);
    return { invocationMessage: `Checking reasoning and tool calling on ${server.name}` };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ServerInput>,
  ): Promise<vscode.LanguageModelToolResult> {
    const server = serverOf(this.host, this.settings, options.input);
    await requireSession(this.host, server);
    const log: string[] = [];
    let result: Awaited<ReturnType<Fleet['verifyParsers']>>;
    try {
      result = await this.host.fleet.verifyParsers(server, (line) => log.push(line));
    } catch (error) {
      throw new Error(
        `The parser checks could not run on ${server.name}: ${errorText(error)}. Is it ready? (kimi_status says.)`,
      );
    }
    const verdict = VERDICT_WORDS[result.verdict];
    const hint =
      result.verdict === 'failed'
        ? '\nEach check that failed says what an agent would suffer ("for agents:"). When the server flags lack the kimi_k2 parsers, the user can add them with the command "Kimi: Enable tool calling and thinking parsers" (a systemd drop-in, then a restart).'
        : result.verdict === 'inconclusive'
          ? '\nInconclusive is not a parser failure: the answers were cut by max_tokens (the budgets are in the table).'
          : '';
    return toolResult(`${server.name}: ${result.summary} (${verdict}).${hint}\n${result.table}`, {
      server: server.name,
      summary: result.summary,
      verdict: result.verdict,
      allPassed: result.allPassed ?? null,
      table: result.table,
      log,
    });
  }
}

/** kimi_logs: the unit's journal tail and the extension's lines about the server, masked. */
export class LogsTool implements vscode.LanguageModelTool<LogsInput> {
  constructor(
    private readonly host: ToolHost,
    private readonly settings: ToolSettings = vscodeToolSettings,
  ) {}

  prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<LogsInput>,
  ): vscode.PreparedToolInvocation {
    const server = serverOf(this.host, this.settings, options.input);
    return { invocationMessage: `Reading the journal of ${server.unit} on ${server.name}` };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<LogsInput>): Promise<vscode.LanguageModelToolResult> {
    const server = serverOf(this.host, this.settings, options.input);
    const asked = optional(options.input, 'lines', 'number') ?? LOGS_DEFAULT_LINES;
    const lines = Math.min(LOGS_MAX_LINES, Math.max(1, Math.floor(asked)));
    await requireSession(this.host, server);
    const logs = await this.host.fleet.logs(server, lines);
    const parts = [
      `Journal of ${server.unit} on ${server.name} (last ${logs.journal.length} of at most ${lines} lines):`,
      ...(logs.journal.length
        ? logs.journal
        : [logs.journalError ? `(not readable: ${logs.journalError})` : '(no lines)']),
      '',
      `Extension log about ${server.name} (last ${logs.log.length} lines):`,
      ...(logs.log.length ? logs.log : ['(no lines yet)']),
    ];
    return toolResult(parts.join('\n'), {
      server: server.name,
      unit: server.unit,
      journal: logs.journal,
      journalError: logs.journalError ?? null,
      log: logs.log,
    });
  }
}

/** Registers the five tools; the Disposables go into the extension's subscriptions. */
export function registerLanguageModelTools(
  host: ToolHost,
  settings: ToolSettings = vscodeToolSettings,
): vscode.Disposable[] {
  // vscode.lm is missing in hosts older than 1.95 (engines says ^1.100; a fork may differ).
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  return [
    vscode.lm.registerTool('kimi_status', new StatusTool(host, settings)),
    vscode.lm.registerTool('kimi_restart', new RestartTool(host, settings)),
    vscode.lm.registerTool('kimi_wait', new WaitTool(host, settings)),
    vscode.lm.registerTool('kimi_verify_parsers', new VerifyParsersTool(host, settings)),
    vscode.lm.registerTool('kimi_logs', new LogsTool(host, settings)),
  ];
}
