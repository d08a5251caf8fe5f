/**
 * VS Code's request message parts, read by their shape (parts may come from another extension's
 * copy of the API classes), as the neutral parts ./openaiChat translates. Pure: no `vscode` here.
 */
import type { NeutralMessage, NeutralPart } from './openaiChat';
import { imagePart } from './imageParts';

/** A part by its shape: a tool call, a tool result, an image, else its text (undefined when empty). */
export function toNeutralPart(part: unknown): NeutralPart | undefined {
  const p = part as {
    value?: unknown;
    callId?: unknown;
    name?: unknown;
    input?: unknown;
    content?: unknown;
    mimeType?: unknown;
    data?: unknown;
  };
  if (typeof p?.callId === 'string' && typeof p.name === 'string' && 'input' in p)
    return { kind: 'toolCall', callId: p.callId, name: p.name, input: p.input };
  if (typeof p?.callId === 'string' && Array.isArray(p.content)) {
    const images = p.content.flatMap((c) => imagePart(c?.mimeType, c?.data) ?? []);
    const text = p.content.map((c) => partText(c)).join('');
    return { kind: 'toolResult', callId: p.callId, text, ...(images.length ? { images } : {}) };
  }
  const image = imagePart(p?.mimeType, p?.data);
  if (image) return image;
  const text = partText(part);
  return text === '' ? undefined : { kind: 'text', text };
}

/** The text of a text part, of a data part with a text or JSON mime type, else of a value as JSON. */
export function partText(part: unknown): string {
  const p = part as { value?: unknown; mimeType?: unknown; data?: unknown };
  if (typeof p?.value === 'string') return p.value;
  if (typeof p?.mimeType === 'string' && p.data instanceof Uint8Array) {
    return /^text\/|json/.test(p.mimeType) ? Buffer.from(p.data).toString('utf8') : '';
  }
  if (typeof part === 'string') return part;
  return part === undefined || part === null ? '' : JSON.stringify(part);
}

/** One message of `role` made of `content`'s parts, empty parts left out. */
export function neutralMessage(role: NeutralMessage['role'], content: readonly unknown[]): NeutralMessage {
  return { role, parts: content.map(toNeutralPart).filter((p): p is NeutralPart => p !== undefined) };
}
