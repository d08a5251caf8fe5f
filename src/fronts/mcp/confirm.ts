/**
 * kimiService.confirmRestart in the standalone MCP server: the user is asked through the client
 * (MCP elicitation, a yes/no form) when the client supports it; a client that cannot ask gets a
 * refusal until the call carries `confirmed: true`, which the model may only pass after asking
 * the user itself. Following a load under way needs no confirmation (nothing is restarted).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ElicitResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ServerProfile } from '../../config/config';
import type { FleetVerbs } from '../../fleet/fleetVerbs';
import { errorText } from '../../util/errors';
import { boundedForecast, restartNeedsConfirmation, restartQuestion } from '../../agent/confirmation';
import type { McpToolInput } from '../../agent/definition';
import { ToolRefusal, type AgentTools } from '../../agent/run';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How long a person has to answer the question (the SDK's default request timeout is 60 s). */
export const CONFIRM_ANSWER_MS = 10 * 60_000;

/** The one field of the yes/no form. */
const CONFIRM_FIELD = 'restart';

export type ConfirmWay = 'none' | 'elicit' | 'given' | 'refuse';

/** How a restart is confirmed, from the settings, the server's state, the client and the call. Pure. */
export function confirmWay(options: {
  readonly confirmRestart: boolean;
  readonly loading: boolean;
  readonly force: boolean;
  readonly canElicit: boolean;
  readonly confirmed: boolean;
}): ConfirmWay {
  if (!restartNeedsConfirmation(options.confirmRestart, options.loading, options.force)) return 'none';
  if (options.canElicit) return 'elicit';
  return options.confirmed ? 'given' : 'refuse';
}

/** The refusal a client that cannot ask gets: what the model must do (ask the user, then pass confirmed). Pure. */
export function confirmationNeededText(server: ServerProfile, expected: string): string {
  return (
    `Not restarted: kimiService.confirmRestart is on and this MCP client cannot be asked for a confirmation (no MCP elicitation). ` +
    `Ask the user whether to restart ${server.unit} on ${server.name} now (the model is unavailable until it has loaded again; expected load time: ${expected}), ` +
    `and only if they say yes call kimi_restart again with confirmed: true. Nothing was run.`
  );
}

/** What an elicitation's answer means: a yes, or the refusal's words. Pure. */
export function elicitAnswer(
  result: ElicitResult,
): { readonly yes: true } | { readonly yes: false; readonly why: string } {
  if (result.action === 'accept' && result.content?.[CONFIRM_FIELD] === true) return { yes: true };
  const why =
    result.action === 'accept' ? 'answered no' : result.action === 'decline' ? 'declined it' : 'dismissed the question';
  return { yes: false, why };
}

export function canElicit(mcp: McpServer): boolean {
  return mcp.server.getClientCapabilities()?.elicitation?.form !== undefined;
}

/**
 * Resolves when the restart may go on; throws a ToolRefusal (nothing run) when the user said no,
 * could not be asked, or the client gave no answer.
 */
export async function confirmRestart(
  mcp: McpServer,
  agent: AgentTools,
  fleet: FleetVerbs,
  input: McpToolInput<'kimi_restart'>,
  extra: Extra,
): Promise<void> {
  const server = agent.server(input.server);
  const { settings } = agent.settings();
  const force = input.force === true;
  const way = confirmWay({
    confirmRestart: settings.confirmRestart,
    loading: fleet.snapshot(server).loading,
    force,
    canElicit: canElicit(mcp),
    confirmed: input.confirmed === true,
  });
  if (way === 'none' || way === 'given') return;
  const expected = await boundedForecast(fleet, server);
  if (way === 'refuse') throw new ToolRefusal(confirmationNeededText(server, expected));
  const question = restartQuestion(server, expected, force);
  let result: ElicitResult;
  try {
    result = await mcp.server.elicitInput(
      {
        mode: 'form',
        message: [question.title, ...question.lines].join('\n\n'),
        requestedSchema: {
          type: 'object',
          properties: {
            [CONFIRM_FIELD]: {
              type: 'boolean',
              title: `Restart ${server.unit} on ${server.name}`,
              description: 'Yes: restart it now (kimiService.confirmRestart asks first).',
              default: false,
            },
          },
          required: [CONFIRM_FIELD],
        },
      },
      { signal: extra.signal, timeout: CONFIRM_ANSWER_MS, relatedRequestId: extra.requestId },
    );
  } catch (error) {
    throw new ToolRefusal(`Not restarted: the confirmation could not be asked (${errorText(error)}). Nothing was run.`);
  }
  const answer = elicitAnswer(result);
  if (!answer.yes)
    throw new ToolRefusal(
      `Not restarted: the user ${answer.why} (kimiService.confirmRestart). Nothing was run; do not ask again unless the user asks for a restart.`,
    );
}
