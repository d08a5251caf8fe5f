/**
 * How a chat message becomes tokens beyond its text: the role markers and tool-call wrapping of
 * the model's chat template. The count of a message is the count of what the template renders
 * for it, so a conversation's count is the sum of its messages' counts (plus the generation
 * prompt, which VS Code does not ask about).
 *  - Kimi (K2, K2 Thinking, K2.5: chat_template.jinja): `<|im_user|>user<|im_middle|>TEXT<|im_end|>`
 *    (`im_system`/`system`, `im_assistant`/`assistant`); a tool result is its own message
 *    `<|im_system|>tool<|im_middle|>## Return of ID\nTEXT<|im_end|>`; tool calls follow the
 *    assistant's text as `<|tool_calls_section_begin|><|tool_call_begin|>ID<|tool_call_argument_begin|>ARGS<|tool_call_end|>...<|tool_calls_section_end|>`.
 *  - ChatML (Qwen and others with `<|im_start|>`): `<|im_start|>ROLE\nTEXT<|im_end|>\n`, tool calls
 *    as `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>`, results as a `tool` message.
 *  - Otherwise: the text alone plus 4 tokens a message (roles and separators of an unknown template).
 */

export type Role = 'system' | 'user' | 'assistant';

export type MessagePiece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'toolCall'; readonly callId: string; readonly name: string; readonly input: unknown }
  | { readonly kind: 'toolResult'; readonly callId: string; readonly text: string }
  /** An image: its tokens depend on the vision tower's patching, not on the tokenizer. */
  | { readonly kind: 'image'; readonly bytes: number };

export interface FramedMessage {
  readonly role: Role;
  readonly pieces: readonly MessagePiece[];
}

/** A template's markup (counted with special tokens) and the user's text (counted as plain text). */
export type Segment = { readonly markup: string } | { readonly text: string } | { readonly fixed: number };

export type FramingKind = 'kimi' | 'chatml' | 'plain';

/** What a template renders for one message, as segments. */
export function frame(kind: FramingKind, message: FramedMessage): Segment[] {
  const out: Segment[] = [];
  const text = (t: string) => t !== '' && out.push({ text: t });
  const markup = (m: string) => out.push({ markup: m });
  const images = message.pieces.filter((p) => p.kind === 'image').length;
  const results = message.pieces.filter(
    (p): p is Extract<MessagePiece, { kind: 'toolResult' }> => p.kind === 'toolResult',
  );
  const calls = message.pieces.filter((p): p is Extract<MessagePiece, { kind: 'toolCall' }> => p.kind === 'toolCall');
  const body = message.pieces
    .filter((p): p is Extract<MessagePiece, { kind: 'text' }> => p.kind === 'text')
    .map((p) => p.text)
    .join('');
  if (images > 0) out.push({ fixed: images * IMAGE_TOKENS_ESTIMATE });
  switch (kind) {
    case 'kimi': {
      for (const r of results) {
        markup('<|im_system|>tool<|im_middle|>');
        text(`## Return of ${r.callId}\n${r.text}`);
        markup('<|im_end|>');
      }
      if (results.length > 0 && body === '' && calls.length === 0) return out;
      const role = message.role === 'assistant' ? 'assistant' : message.role === 'system' ? 'system' : 'user';
      markup(`<|im_${role}|>${role}<|im_middle|>`);
      text(body);
      if (calls.length > 0) {
        markup('<|tool_calls_section_begin|>');
        for (const c of calls) {
          markup('<|tool_call_begin|>');
          text(c.callId);
          markup('<|tool_call_argument_begin|>');
          text(JSON.stringify(c.input ?? {}));
          markup('<|tool_call_end|>');
        }
        markup('<|tool_calls_section_end|>');
      }
      markup('<|im_end|>');
      return out;
    }
    case 'chatml': {
      for (const r of results) {
        markup('<|im_start|>');
        text(`tool\n${r.text}`);
        markup('<|im_end|>');
        text('\n');
      }
      if (results.length > 0 && body === '' && calls.length === 0) return out;
      markup('<|im_start|>');
      text(`${message.role}\n${body}`);
      for (const c of calls)
        text(`\n<tool_call>\n${JSON.stringify({ name: c.name, arguments: c.input ?? {} })}\n</tool_call>`);
      markup('<|im_end|>');
      text('\n');
      return out;
    }
    case 'plain': {
      text(body);
      for (const r of results) text(r.text);
      for (const c of calls) text(`${c.name}${JSON.stringify(c.input ?? {})}`);
      out.push({ fixed: PLAIN_MESSAGE_OVERHEAD * Math.max(1, results.length + (body !== '' || calls.length ? 1 : 0)) });
      return out;
    }
  }
}

/** Roles and separators of a template the counter does not know, per message. */
export const PLAIN_MESSAGE_OVERHEAD = 4;

/**
 * An image's tokens are the vision tower's patches (Kimi K2.5's MoonViT: one token per 28x28
 * pixels after merging), which need the image's size; a fixed budget is counted instead.
 */
export const IMAGE_TOKENS_ESTIMATE = 1024;
