/**
 * The MCP tools: an adapter over src/agent. Each call's input (validated by the SDK with the
 * agent's schemas) goes to the agent's run; its result becomes MCP content (the text, then the
 * same JSON as a text block and structuredContent); kimi_wait's state changes become progress
 * notifications.
 */
import { forFront, forFrontDeep } from '../../present/hints';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { SettingsSource } from '../../config/settingsSource';
import type { Fleet } from '../../fleet/fleet';
import { serverReport } from '../../fleet/report';
import type { LogLevel } from '../../monitor/watcher';
import { errorText } from '../../util/errors';
import { DESCRIPTIONS, INPUTS, MCP_FACES, TOOL_NAMES, type ToolInput, type ToolName } from '../../agent/definition';
import { AgentTools, type ToolOutcome } from '../../agent/run';
import { ProgressPacer, type ProgressUpdate } from './progress';

export interface ToolDeps {
  readonly fleet: Fleet;
  /** The settings, read again at each call (a fixed file applies without restarting the server). */
  readonly settings: SettingsSource;
  log(level: LogLevel, message: string): void;
  /** kimi_wait tells progress at least this often when nothing changes (default 5 s: well within the promised 10 s). */
  readonly heartbeatMs?: number;
  /** How long kimi_status / kimi_restart wait for the host's first answer about a server. */
  readonly firstAnswerMs?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A result with the text a model reads first, then the same facts as JSON (text block and structuredContent). */
export function toolResult({ text, json: facts, isError }: ToolOutcome): CallToolResult {
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

/** Sends kimi_wait's progress notifications: at each change, and at least every `heartbeatMs`. */
function progressSender(deps: ToolDeps, agent: AgentTools, input: ToolInput<'kimi_wait'>, extra: Extra) {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { progress: undefined, stop: () => undefined };
  const { fleet } = deps;
  const server = agent.server(input.server);
  const pacer = new ProgressPacer(deps.heartbeatMs ?? 5000);
  const send = (update: ProgressUpdate | undefined) => {
    if (!update || extra.signal.aborted) return;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } })
      .catch((error: unknown) =>
        deps.log('warn', `[${server.name}] progress notification not sent: ${errorText(error)}`),
      );
  };
  if (fleet.snapshot(server).watching) send(pacer.onChange(serverReport(fleet.snapshot(server)), Date.now()));
  const ticker = setInterval(
    () => send(pacer.onTick(serverReport(fleet.snapshot(server)), Date.now())),
    Math.min(1000, deps.heartbeatMs ?? 5000),
  );
  return {
    progress: (snapshot: Parameters<typeof serverReport>[0]) =>
      send(pacer.onChange(serverReport(snapshot), Date.now())),
    stop: () => clearInterval(ticker),
  };
}

export function registerKimiTools(mcp: McpServer, deps: ToolDeps): AgentTools {
  const agent = new AgentTools({
    fleet: deps.fleet,
    settings: () => deps.settings.read(),
    attachOnStatus: true,
    logOwner: 'the Kimi MCP server',
    log: deps.log,
    ...(deps.firstAnswerMs !== undefined ? { firstAnswerMs: deps.firstAnswerMs } : {}),
  });
  const register = <N extends ToolName>(name: N) =>
    mcp.registerTool(
      name,
      {
        title: MCP_FACES[name].title,
        description: DESCRIPTIONS[name],
        inputSchema: INPUTS[name],
        annotations: MCP_FACES[name].annotations,
      },
      // The SDK types the handler by the schema; the agent's run takes the same type.
      (async (input: ToolInput<N>, extra: Extra) => {
        if (name !== 'kimi_wait') return toolResult(await agent.run(name, input, { signal: extra.signal }));
        const sender = progressSender(deps, agent, input as ToolInput<'kimi_wait'>, extra);
        try {
          return toolResult(
            await agent.run(name, input, {
              signal: extra.signal,
              ...(sender.progress ? { progress: sender.progress } : {}),
            }),
          );
        } finally {
          sender.stop();
        }
      }) as never,
    );
  for (const name of TOOL_NAMES) register(name);
  return agent;
}
