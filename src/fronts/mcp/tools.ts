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
import type { FrontFleet } from '../../fleet/fleetVerbs';
import { serverReport } from '../../present/report';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { errorText } from '../../util/errors';
import {
  MCP_DESCRIPTIONS,
  MCP_FACES,
  MCP_INPUTS,
  TOOL_NAMES,
  type McpToolInput,
  type ToolInput,
  type ToolName,
} from '../../agent/definition';
import { AgentTools, type ToolOutcome } from '../../agent/run';
import { confirmRestart } from './confirm';
import { HOST_KEY_REFUSED_HINT } from './front';
import { ProgressPacer, type ProgressUpdate } from './progress';

export interface ToolDeps {
  readonly fleet: FrontFleet;
  /** The settings, read again at each call (a fixed file applies without restarting the server). */
  readonly settings: SettingsSource;
  log(level: LogLevel, message: string): void;
  /** kimi_wait tells progress at least this often when nothing changes (default 5 s: well within the promised 10 s). */
  readonly heartbeatMs?: number;
  /** How long kimi_status / kimi_restart wait for the host's first answer about a server. */
  readonly firstAnswerMs?: number;
}

/** The transport's words for an unknown host key that was refused (transport/ssh/hostKey.ts). */
const HOST_KEY_UNTRUSTED = /was not trusted \(kimiService\.hostKeyPolicy\)/;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A result with the text a model reads first, then the same facts as JSON (text block and structuredContent). */
export function toolResult({ text, json: facts, isError }: ToolOutcome): CallToolResult {
  // The core's hints in the words of an MCP client's user (present/hints).
  const json = forFrontDeep(facts, 'mcp');
  const words = forFront(text, 'mcp');
  return {
    content: [
      { type: 'text', text: HOST_KEY_UNTRUSTED.test(words) ? `${words}\n${HOST_KEY_REFUSED_HINT}` : words },
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
    watchOnStatus: true,
    logOwner: 'the Kimi MCP server',
    log: deps.log,
    ...(deps.firstAnswerMs !== undefined ? { firstAnswerMs: deps.firstAnswerMs } : {}),
  });
  const register = <N extends ToolName>(name: N) =>
    mcp.registerTool(
      name,
      {
        title: MCP_FACES[name].title,
        description: MCP_DESCRIPTIONS[name],
        inputSchema: MCP_INPUTS[name],
        annotations: MCP_FACES[name].annotations,
      },
      // The SDK types the handler by the schema; the agent's run takes the same type.
      (async (input: McpToolInput<N>, extra: Extra) => {
        if (name === 'kimi_restart') {
          const { confirmed: _confirmed, ...restart } = input as McpToolInput<'kimi_restart'>;
          await confirmRestart(mcp, agent, deps.fleet, input as McpToolInput<'kimi_restart'>, extra);
          return toolResult(await agent.run('kimi_restart', restart, { signal: extra.signal }));
        }
        if (name !== 'kimi_wait')
          return toolResult(await agent.run(name, input as ToolInput<N>, { signal: extra.signal }));
        const sender = progressSender(deps, agent, input as ToolInput<'kimi_wait'>, extra);
        try {
          return toolResult(
            await agent.run(name, input as ToolInput<N>, {
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
