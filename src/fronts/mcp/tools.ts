/**
 * The MCP tools: each translates a call into a fleet verb and the fleet's answer into a tool
 * result (the summary lines a model reads, and the same as JSON), in the one wording of
 * fleet/report. No monitoring of its own.
 */
import { forFront, forFrontDeep } from '../../present/hints';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ServerProfile, Settings } from '../../config/config';
import type { Fleet, RestartResult, ServerSnapshot } from '../../fleet/fleet';
import { serverReport, waitReport, type ServerReport } from '../../fleet/report';
import { observe, whenRestartIssued } from '../../fleet/standalone';
import type { LogLevel } from '../../monitor/watcher';
import { TransportError } from '../../transport/transport';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import { ProgressPacer, type ProgressUpdate } from './progress';
import { DESCRIPTIONS, logsInput, restartInput, statusInput, verifyInput, waitInput } from '../../agent/toolSpecs';

/** The verbs of the fleet the tools use. */
export type FleetVerbs = Fleet;

export type SettingsNow =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly message: string };

export interface ToolDeps {
  readonly fleet: FleetVerbs;
  /** The settings as they are now (read again at each call: a fixed file applies without restarting the server). */
  settings(): SettingsNow;
  log(level: LogLevel, message: string): void;
  /** kimi_wait tells progress at least this often when nothing changes (default 5 s: well within the promised 10 s). */
  readonly heartbeatMs?: number;
  /** How long kimi_status / kimi_restart wait for the host's first answer about a server (default 15 s). */
  readonly firstAnswerMs?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A result with the text a model reads first, then the same facts as JSON (text block and structuredContent). */
export function toolResult(text: string, facts: Record<string, unknown>, isError = false): CallToolResult {
  // The core's words name VS Code's palette commands: an MCP client's user gets the CLI's (present/hints).
  const json = forFrontDeep(facts, 'mcp');
  return {
    content: [
      { type: 'text', text: forFront(text, 'mcp') },
      { type: 'text', text: JSON.stringify(json) },
    ],
    structuredContent: json,
    ...(isError ? { isError: true } : {}),
  };
}

/** The settings, or an error that says nothing was run. */
function settingsOrThrow(deps: ToolDeps): Settings {
  const now = deps.settings();
  if (!now.ok) throw new Error(now.message);
  return now.settings;
}

function names(settings: Settings): string {
  return settings.servers.map((s) => JSON.stringify(s.name)).join(', ');
}

/** The server a call is about: the named one, else the active one (kimi.activeServer), else the first. */
export function resolveServer(settings: Settings, name: string | undefined): ServerProfile {
  if (settings.servers.length === 0)
    throw new Error('No server is configured (kimi.servers is empty); nothing was run.');
  if (name === undefined) return settings.servers.find((s) => s.name === settings.activeServer) ?? settings.servers[0]!;
  const server = settings.servers.find((s) => s.name === name);
  if (!server)
    throw new Error(
      `No server named ${JSON.stringify(name)}; the configured servers are ${names(settings)}. Nothing was run.`,
    );
  return server;
}

/**
 * The journal's error lines of a failed load (the traceback's end), masked: the report's
 * lastError names the cause in one line; a model may want the lines around it.
 */
export function errorLines(snapshot: ServerSnapshot, max = 12): string[] {
  return (snapshot.state?.failure?.lines ?? []).slice(-max).map((line) => maskSecrets(line.trimEnd()));
}

/** A refusal (host key, login, DNS...): the report names it; nothing was run. */
function refusedResult(fleet: FleetVerbs, server: ServerProfile, error: TransportError, what: string): CallToolResult {
  const report = serverReport(fleet.snapshot(server));
  const text = `${report.summary}\n${what}: ${error.message}`;
  return toolResult(text, { action: 'refused', error: error.message, report }, true);
}

export function registerKimiTools(mcp: McpServer, deps: ToolDeps): void {
  const { fleet } = deps;
  const heartbeatMs = deps.heartbeatMs ?? 5000;
  const firstAnswerMs = deps.firstAnswerMs ?? 15_000;
  /** Servers being attached to by a status call, so two calls at once attach once. */
  const observing = new Map<string, Promise<string | undefined>>();

  /**
   * Makes sure something watches the server (attaching: read only) and the host answered one
   * full round; an error text when it could not even try. A refusal is in the snapshot.
   */
  const observed = (server: ServerProfile): Promise<string | undefined> => {
    let pending = observing.get(server.name);
    if (!pending) {
      pending = (async () => {
        const deadline = Date.now() + firstAnswerMs;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>(
          (resolve) => (timer = setTimeout(() => resolve('timeout'), firstAnswerMs)),
        );
        try {
          const connected = await Promise.race([fleet.connect(server).then(() => 'connected' as const), timeout]);
          if (connected === 'timeout')
            return `still connecting to ${server.host ?? 'this machine'} after ${Math.round(firstAnswerMs / 1000)} s`;
        } catch (error) {
          return error instanceof TransportError ? undefined : errorText(error);
        } finally {
          clearTimeout(timer);
        }
        await observe(fleet, server, { timeoutMs: Math.max(0, deadline - Date.now()) });
        return undefined;
      })().finally(() => observing.delete(server.name));
      observing.set(server.name, pending);
    }
    return pending;
  };

  mcp.registerTool(
    'kimi_status',
    {
      title: 'Kimi: status',
      description: DESCRIPTIONS.kimi_status,
      inputSchema: statusInput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ server }) => {
      const settings = settingsOrThrow(deps);
      const servers = server === undefined ? settings.servers : [resolveServer(settings, server)];
      if (servers.length === 0) throw new Error('No server is configured (kimi.servers is empty).');
      const problems = await Promise.all(servers.map((s) => observed(s)));
      const reports: (ServerReport & { connectError?: string; errorLines?: string[] })[] = servers.map((s, i) => {
        const snapshot = fleet.snapshot(s);
        const lines = snapshot.state?.verdict === 'failed' ? errorLines(snapshot, 6) : [];
        return {
          ...serverReport(snapshot),
          ...(problems[i] ? { connectError: problems[i] } : {}),
          ...(lines.length ? { errorLines: lines } : {}),
        };
      });
      const text = reports
        .map((r) =>
          [
            r.connectError ? `${r.summary} (${r.connectError})` : r.summary,
            ...(r.errorLines ?? []).map((l) => `  ${l}`),
          ].join('\n'),
        )
        .join('\n');
      return toolResult(text, { servers: reports });
    },
  );

  mcp.registerTool(
    'kimi_restart',
    {
      title: 'Kimi: restart',
      description: DESCRIPTIONS.kimi_restart,
      inputSchema: restartInput,
      annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async ({ server: name, force }) => {
      const server = resolveServer(settingsOrThrow(deps), name);
      let forecast: string | undefined;
      try {
        // What history and the page cache predict (a load already followed here is attached to: no forecast needed).
        if (force || !fleet.snapshot(server).loading) {
          const f = await fleet.forecast(server);
          forecast = [f.text, f.warning].filter(Boolean).join('; ') || undefined;
        }
      } catch (error) {
        if (error instanceof TransportError) return refusedResult(fleet, server, error, 'Nothing was restarted');
        deps.log('warn', `[${server.name}] No load forecast: ${errorText(error)}`);
      }
      let result: RestartResult;
      const asked = Date.now();
      try {
        result = await fleet.restart(server, force ? { force: true } : {});
      } catch (error) {
        if (error instanceof TransportError) return refusedResult(fleet, server, error, 'Nothing was restarted');
        throw error;
      }
      result.outcome.catch((error: unknown) => deps.log('warn', `[${server.name}] ${errorText(error)}`));
      deps.log(
        'info',
        `[${server.name}] kimi_restart: ${result.kind === 'restarted' ? `restarted${force ? ' (force)' : ''}` : `attached (${result.reason})`}`,
      );
      let next: string;
      let failed = false;
      if (result.kind === 'attached') {
        await observe(fleet, server, { timeoutMs: firstAnswerMs });
        next = `Not restarted: ${result.reason}. Call kimi_wait to follow that load (force: true would restart anyway).`;
      } else {
        const { issued, snapshot } = await whenRestartIssued(fleet, server, { timeoutMs: firstAnswerMs, since: asked });
        const problem =
          snapshot.refusal?.message ??
          snapshot.state?.failure?.summary ??
          (snapshot.state && !snapshot.state.connected ? snapshot.state.connectionError : undefined);
        if (!issued && problem) {
          failed = true;
          next = `The restart of ${server.unit} on ${server.name} failed: ${problem}. Read kimi_logs; do not call kimi_wait for this restart.`;
        } else if (!issued) {
          next = `The restart of ${server.unit} on ${server.name} was asked but the host has not confirmed it within ${Math.round(firstAnswerMs / 1000)} s. Call kimi_wait to follow it; do not restart again.`;
        } else {
          next = `Restart of ${server.unit} on ${server.name} issued${forecast ? ` (expected: ${forecast})` : ''}. Call kimi_wait now, and again after each timeout, until ready or failed; do not restart again.`;
        }
      }
      const report = serverReport(fleet.snapshot(server));
      return toolResult(
        `${report.summary}\n${next}`,
        {
          action: result.kind,
          ...(result.kind === 'attached' ? { reason: result.reason } : {}),
          ...(forecast ? { forecast } : {}),
          next,
          report,
        },
        failed,
      );
    },
  );

  mcp.registerTool(
    'kimi_wait',
    {
      title: 'Kimi: wait until ready',
      description: DESCRIPTIONS.kimi_wait,
      inputSchema: waitInput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ server: name, timeoutSeconds }, extra: Extra) => {
      const server = resolveServer(settingsOrThrow(deps), name);
      const token = extra._meta?.progressToken;
      const pacer = new ProgressPacer(heartbeatMs);
      const started = Date.now();
      let sent = 0;
      const send = (update: ProgressUpdate | undefined) => {
        if (!update || token === undefined || extra.signal.aborted) return;
        sent++;
        extra
          .sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } })
          .catch((error: unknown) =>
            deps.log('warn', `[${server.name}] progress notification not sent: ${errorText(error)}`),
          );
      };
      const now = (snapshot: ServerSnapshot = fleet.snapshot(server)) => serverReport(snapshot);
      if (fleet.snapshot(server).watching) send(pacer.onChange(now(), Date.now()));
      const ticker =
        token === undefined
          ? undefined
          : setInterval(() => send(pacer.onTick(now(), Date.now())), Math.min(1000, heartbeatMs));
      try {
        const result = await fleet.waitFor(server, {
          timeoutMs: timeoutSeconds * 1000,
          signal: extra.signal,
          onChange: (snapshot) => send(pacer.onChange(now(snapshot), Date.now())),
        });
        const waited = Date.now() - started;
        const report = waitReport(result, waited, 'kimi_wait');
        deps.log(
          'info',
          `[${server.name}] kimi_wait: ${result.kind} after ${(waited / 1000).toFixed(1)} s (${sent} progress notifications)`,
        );
        const lines = result.kind === 'failed' ? errorLines(result.snapshot) : [];
        const text = [
          report.report.summary,
          report.next,
          ...(lines.length ? ['Error lines of the server:', ...lines.map((l) => `  ${l}`)] : []),
        ].join('\n');
        return toolResult(text, { ...report, ...(lines.length ? { errorLines: lines } : {}) });
      } finally {
        if (ticker) clearInterval(ticker);
      }
    },
  );

  mcp.registerTool(
    'kimi_verify_parsers',
    {
      title: 'Kimi: verify tool calling and thinking parsers',
      description: DESCRIPTIONS.kimi_verify_parsers,
      inputSchema: verifyInput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ server: name }) => {
      const server = resolveServer(settingsOrThrow(deps), name);
      const snapshot = fleet.snapshot(server);
      if (snapshot.watching && snapshot.state && snapshot.state.verdict !== 'ready') {
        const report = serverReport(snapshot);
        throw new Error(
          `${report.summary}\nThe parsers can be checked only on a ready server: call kimi_wait until it is ready, then kimi_verify_parsers. Nothing was run.`,
        );
      }
      try {
        const result = await fleet.verifyParsers(server, (line) => deps.log('info', `[${server.name}] ${line}`));
        return toolResult(`${server.name}: ${result.summary}\n${result.table}`, {
          server: server.name,
          summary: result.summary,
          verdict: result.verdict,
          allPassed: result.allPassed ?? null,
          table: result.table,
        });
      } catch (error) {
        if (error instanceof TransportError) return refusedResult(fleet, server, error, 'Nothing was checked');
        throw new Error(`${server.name}: not verified (${errorText(error)})`);
      }
    },
  );

  mcp.registerTool(
    'kimi_logs',
    {
      title: 'Kimi: logs',
      description: DESCRIPTIONS.kimi_logs,
      inputSchema: logsInput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ server: name, lines }) => {
      const server = resolveServer(settingsOrThrow(deps), name);
      const logs = await fleet.logs(server, lines);
      const parts = [
        `Journal of ${server.unit} on ${server.name} (last ${logs.journal.length} lines):`,
        ...(logs.journal.length ? logs.journal : ['(none)']),
      ];
      if (logs.journalError) parts.push(`The journal could not be read: ${logs.journalError}`);
      parts.push(
        `Log of the Kimi MCP server about ${server.name} (last ${logs.log.length} lines):`,
        ...(logs.log.length ? logs.log : ['(none)']),
      );
      return toolResult(parts.join('\n'), {
        server: server.name,
        unit: server.unit,
        journal: logs.journal,
        ...(logs.journalError ? { journalError: logs.journalError } : {}),
        log: logs.log,
      });
    },
  );
}
