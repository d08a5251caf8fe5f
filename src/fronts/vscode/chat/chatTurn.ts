/**
 * One answer of the chat model, without VS Code: the server's stream (or a plain JSON answer)
 * read into the parts the editor gets (text, tool calls), the reasoning kept aside for the tool
 * chain (./toolChainReasoning) and the log, the offer's repairs and limits applied on the way.
 */
import {
  ChatStreamAccumulator,
  completionAsStreamData,
  type OpenAiMessage,
  type OpenAiToolCall,
  type ReasoningInContent,
  type StreamEvent,
} from './openaiChat';
import { SseDecoder } from './sse';

export type AnswerPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'toolCall'; readonly callId: string; readonly name: string; readonly input: object };

export interface TurnOptions {
  /** Content read for leaked reasoning ('beforeEnd' where the offer repairs a known fault). */
  readonly reasoningInContent: ReasoningInContent;
  /** Parallel calls withheld: only the first call of an answer is passed on. */
  readonly singleCall: boolean;
}

/** The request answers tool results: a role "tool" message after the last assistant message. */
export function answersToolResult(messages: readonly OpenAiMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = messages[i]!.role;
    if (role === 'tool') return true;
    if (role === 'assistant') return false;
  }
  return false;
}

export class ChatTurn {
  private readonly decoder = new SseDecoder();
  private readonly accumulator: ChatStreamAccumulator;
  private reasoningText = '';
  private textChars = 0;
  private readonly calls: Extract<StreamEvent, { kind: 'toolCall' }>[] = [];
  private droppedCalls = 0;
  private usage: { prompt: number; completion: number } | undefined;

  constructor(
    private readonly options: TurnOptions,
    private readonly emit: (part: AnswerPart) => void,
  ) {
    this.accumulator = new ChatStreamAccumulator(options.reasoningInContent);
  }

  /** A piece of the SSE body. */
  push(chunk: string): void {
    for (const data of this.decoder.push(chunk)) this.take(this.accumulator.push(data));
  }

  /** The whole body of a plain (non-streamed) JSON answer. */
  pushCompletion(body: string): void {
    this.take(this.accumulator.push(completionAsStreamData(body)));
  }

  end(): void {
    for (const data of this.decoder.end()) this.take(this.accumulator.push(data));
    this.take(this.accumulator.end());
  }

  /** All the reasoning of the answer (the reasoning field, and what a repair moved back from content). */
  get reasoning(): string {
    return this.reasoningText;
  }

  /** The calls passed on, as the assistant message VS Code replays them (for ./toolChainReasoning). */
  get toolCalls(): OpenAiToolCall[] {
    return this.calls.map((c) => ({
      id: c.callId,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.input) },
    }));
  }

  get finishReason(): string | undefined {
    return this.accumulator.finishReason;
  }

  /** For the log: "12 characters of text, tool calls a, b, 30 prompt + 5 completion tokens; reasoning 80 characters". */
  summary(): string {
    const calls = this.calls.length ? `, tool calls ${this.calls.map((c) => c.name).join(', ')}` : '';
    const dropped = this.droppedCalls
      ? ` (${this.droppedCalls} more not passed on: parallel calls are withheld for this server)`
      : '';
    const usage = this.usage ? `, ${this.usage.prompt} prompt + ${this.usage.completion} completion tokens` : '';
    return `${this.textChars} characters of text${calls}${dropped}${usage}; reasoning ${this.reasoningText.length} characters`;
  }

  private take(events: readonly StreamEvent[]): void {
    for (const event of events) {
      switch (event.kind) {
        case 'text':
          this.textChars += event.text.length;
          this.emit(event);
          break;
        case 'toolCall':
          if (this.options.singleCall && this.calls.length > 0) {
            this.droppedCalls++;
            break;
          }
          this.calls.push(event);
          this.emit(event);
          break;
        case 'reasoning':
          this.reasoningText += event.text;
          break;
        case 'usage':
          this.usage = { prompt: event.promptTokens, completion: event.completionTokens };
          break;
      }
    }
  }
}
