/**
 * The language-model tools (contributes.languageModelTools, generated from src/agent): an
 * adapter for Copilot agent mode and any extension calling vscode.lm.invokeTool. Each call's
 * input is checked with the agent's schema, runs the agent's tool, and comes back as a
 * LanguageModelToolResult (the text a model reads, then the same as JSON). What is VS Code's
 * own: prepareInvocation (the invocation message, the restart confirmation) and cancellation.
 */
import * as vscode from 'vscode';
import type { ServerProfile } from '../../config/config';
import type { SettingsSource } from '../../config/settingsSource';
import type { FleetVerbs } from '../../fleet/fleetVerbs';
import { boundedForecast, restartNeedsConfirmation, restartQuestion } from '../../agent/confirmation';
import { parseToolInput, TOOL_NAMES, type ToolInput, type ToolName } from '../../agent/definition';
import { ToolRefusal, type AgentHost, type AgentTools, type ToolOutcome } from '../../agent/run';
import { vscodeSettingsSource } from '../vscode/settings/settingsSource';
import { lmAgent, type ToolHost } from './toolHost';
import { restrictedModeMessage, TOOLS_ACTION } from '../vscode/trust/trustRules';
import { forFront, forFrontDeep } from '../../present/hints';

export { TOOL_NAMES };

function toolResult({ text, json }: ToolOutcome): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([
    new vscode.LanguageModelTextPart(forFront(text, 'lm')),
    new vscode.LanguageModelTextPart(JSON.stringify(forFrontDeep(json, 'lm'))),
  ]);
}

/** The confirmation of kimi_restart, as the command's modal says it. Pure. */
export function restartConfirmation(
  server: ServerProfile,
  expected: string,
  force: boolean,
): vscode.LanguageModelToolConfirmationMessages {
  const question = restartQuestion(server, expected, force);
  return { title: question.title, message: question.lines.join('\n\n') };
}

export { boundedForecast };

/** One of the five tools, over the agent's run. */
export class KimiTool<N extends ToolName> implements vscode.LanguageModelTool<unknown> {
  constructor(
    readonly name: N,
    private readonly agent: AgentTools,
    private readonly fleet: FleetVerbs,
    private readonly settings: SettingsSource,
  ) {}

  private input(input: unknown): ToolInput<N> {
    const parsed = parseToolInput(this.name, input);
    if (!parsed.ok) throw new ToolRefusal(parsed.error);
    return parsed.input;
  }

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<unknown>,
  ): Promise<vscode.PreparedToolInvocation> {
    if (!vscode.workspace.isTrusted) return { invocationMessage: restrictedModeMessage(TOOLS_ACTION) };
    const input = this.input(options.input) as Partial<ToolInput<'kimi_wait'> & ToolInput<'kimi_restart'>>;
    const server = this.agent.server(input.server);
    switch (this.name) {
      case 'kimi_status':
        return { invocationMessage: 'Reading the state of the Kimi servers' };
      case 'kimi_wait':
        return { invocationMessage: `Waiting up to ${input.timeoutSeconds} s for ${server.name} to be ready` };
      case 'kimi_verify_parsers':
        return { invocationMessage: `Checking reasoning and tool calling on ${server.name}` };
      case 'kimi_logs':
        return { invocationMessage: `Reading the log of ${server.unit} on ${server.name}` };
    }
    const force = input.force === true;
    const loading = this.fleet.snapshot(server).loading;
    if (loading && !force)
      // Following a load touches nothing on the host: no question to ask.
      return { invocationMessage: `Following the load of ${server.unit} on ${server.name} (already under way)` };
    const invocationMessage = `Restarting ${server.unit} on ${server.name}`;
    const read = this.settings.read();
    if (read.ok && !restartNeedsConfirmation(read.settings.confirmRestart, loading, force))
      return { invocationMessage };
    return {
      invocationMessage,
      confirmationMessages: restartConfirmation(server, await boundedForecast(this.fleet, server), force),
    };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<unknown>,
    token?: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    // A model reads the message (Restricted Mode: trustRules.ts).
    if (!vscode.workspace.isTrusted) throw new ToolRefusal(restrictedModeMessage(TOOLS_ACTION));
    const input = this.input(options.input);
    const abort = new AbortController();
    const cancelled = token?.onCancellationRequested(() => abort.abort());
    if (token?.isCancellationRequested) abort.abort();
    try {
      const outcome = await this.agent.run(this.name, input, { signal: abort.signal });
      // A model reads a thrown error's message; VS Code results have no error flag.
      if (outcome.isError) throw new Error(forFront(outcome.text, 'lm'));
      return toolResult(outcome);
    } finally {
      cancelled?.dispose();
    }
  }
}

/** The five tools over one agent, by name. */
export function languageModelTools(
  host: ToolHost,
  settings: SettingsSource = vscodeSettingsSource,
  log: AgentHost['log'] = () => undefined,
): { [N in ToolName]: KimiTool<N> } {
  const agent = lmAgent(host, settings, log);
  const tool = <N extends ToolName>(name: N) => new KimiTool(name, agent, host.fleet, settings);
  return {
    kimi_status: tool('kimi_status'),
    kimi_restart: tool('kimi_restart'),
    kimi_wait: tool('kimi_wait'),
    kimi_verify_parsers: tool('kimi_verify_parsers'),
    kimi_logs: tool('kimi_logs'),
  };
}

/** Registers the five tools; the Disposables go into the extension's subscriptions. */
export function registerLanguageModelTools(
  host: ToolHost,
  settings: SettingsSource = vscodeSettingsSource,
): vscode.Disposable[] {
  // vscode.lm is missing in hosts older than 1.95 (engines says ^1.104; a fork may differ).
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  const tools = languageModelTools(host, settings);
  return TOOL_NAMES.map((name) => vscode.lm.registerTool(name, tools[name]));
}
