/**
 * The askpass helper's conversation with the transport over a private Unix socket: one request
 * line (the per-master token, OpenSSH's prompt and its mode), one reply line (the answer, or a
 * cancel). Newline-framed JSON, each line bounded; anything else is refused. Pure.
 */
import { timingSafeEqual } from 'node:crypto';

/** A line longer than this ends the conversation (a prompt is a sentence, an answer a passphrase). */
export const MAX_LINE_BYTES = 8192;

/** How OpenSSH wants the prompt shown (its SSH_ASKPASS_PROMPT): an answer, a yes/no, or a notice only. */
export type PromptMode = 'secret' | 'confirm' | 'notice';

export interface AskpassRequest {
  readonly token: string;
  readonly prompt: string;
  readonly mode: PromptMode;
}

export type AskpassReply = { readonly answer: string } | { readonly cancel: true };

/** SSH_ASKPASS_PROMPT as OpenSSH sets it: unset for a passphrase, `confirm`, or `none` (a notice). */
export function promptModeOf(env: string | undefined): PromptMode {
  if (env === 'confirm') return 'confirm';
  if (env === 'none') return 'notice';
  return 'secret';
}

export function encodeRequest(r: AskpassRequest): string {
  return `${JSON.stringify({ token: r.token, prompt: r.prompt, mode: r.mode })}\n`;
}

export function encodeReply(r: AskpassReply): string {
  return `${JSON.stringify('answer' in r ? { answer: r.answer } : { cancel: true })}\n`;
}

function object(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A request line, or undefined when it is not exactly one. */
export function decodeRequest(line: string): AskpassRequest | undefined {
  const o = object(line);
  if (!o || Object.keys(o).length !== 3) return undefined;
  const { token, prompt, mode } = o;
  if (typeof token !== 'string' || typeof prompt !== 'string') return undefined;
  if (mode !== 'secret' && mode !== 'confirm' && mode !== 'notice') return undefined;
  return { token, prompt, mode };
}

export function decodeReply(line: string): AskpassReply | undefined {
  const o = object(line);
  if (!o || Object.keys(o).length !== 1) return undefined;
  if (typeof o.answer === 'string' && !/[\r\n]/.test(o.answer)) return { answer: o.answer };
  if (o.cancel === true) return { cancel: true };
  return undefined;
}

/** The token compared in constant time. */
export function tokenMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The first line of a byte stream, bounded: `push` returns the line once its newline came,
 * 'overflow' when MAX_LINE_BYTES passed without one, undefined while waiting.
 */
export class FirstLine {
  private chunks: Buffer[] = [];
  private size = 0;

  push(chunk: Buffer): string | 'overflow' | undefined {
    const nl = chunk.indexOf(0x0a);
    const part = nl >= 0 ? chunk.subarray(0, nl) : chunk;
    this.size += part.length;
    if (this.size > MAX_LINE_BYTES) return 'overflow';
    this.chunks.push(part);
    return nl >= 0 ? Buffer.concat(this.chunks).toString('utf8') : undefined;
  }
}
