/**
 * A whole request counted the way VS Code asks for it (one count per message and per tool), for
 * the token-count tests: everything runs on this machine. (The chat provider counts each piece
 * as VS Code asks for it: fronts/vscode/chat/tokenCounter.ts.)
 */
import type { FramedMessage } from '../../src/engine/tokenizer/framing';
import type { TokenCounter } from '../../src/engine/tokenizer/workerCounter';

export interface CountedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema?: object | undefined;
}

export interface ConversationCount {
  readonly tokens: number;
  /** How many counts were made (messages + tools). */
  readonly calls: number;
  readonly ms: number;
}

/** A tool as the request's `tools` entry carries it (its JSON is what the template declares). */
export function toolText(tool: CountedTool): string {
  return JSON.stringify({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema ?? {} },
  });
}

export async function countConversation(
  counter: TokenCounter,
  messages: readonly FramedMessage[],
  tools: readonly CountedTool[] = [],
): Promise<ConversationCount> {
  const started = performance.now();
  let tokens = 0;
  for (const m of messages) tokens += await counter.countMessage(m);
  for (const t of tools) tokens += await counter.countText(toolText(t));
  return { tokens, calls: messages.length + tools.length, ms: performance.now() - started };
}
