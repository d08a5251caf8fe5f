/**
 * One chat request's answer read into its turn: a refused port, a transport error or an HTTP error
 * become the Error the user sees; a JSON answer and an SSE stream are both fed to the turn. No `vscode`.
 */
import type { StreamResult } from '../../../engine/serverHttp';
import { httpErrorText } from './openaiChat';

/** What the answer is fed to (a ChatTurn). */
export interface AnswerSink {
  push(chunk: string): void;
  pushCompletion(body: string): void;
}

const ERROR_BODY_CAP = 64 * 1024;
const COMPLETION_CAP = 16 * 1024 * 1024;

/** Feeds `result` to `sink`, calling `onChunk` for each streamed chunk; throws what the user is told. */
export async function readAnswer(
  result: StreamResult,
  modelName: string,
  sink: AnswerSink,
  onChunk: () => void,
): Promise<void> {
  if (result.kind === 'refused') throw new Error(`${modelName}: the server's port is closed (connection refused).`);
  if (result.kind === 'error') throw new Error(`${modelName}: ${result.message}`);
  if (result.status !== 200) {
    const text = await readText(result.body, ERROR_BODY_CAP);
    throw new Error(`${modelName} refused the request: ${httpErrorText(result.status, text)}`);
  }
  if (/json/i.test(result.contentType)) {
    sink.pushCompletion(await readText(result.body, COMPLETION_CAP));
    return;
  }
  for await (const chunk of result.body as AsyncIterable<Buffer | string>) {
    onChunk();
    sink.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
  }
}

/** The stream's text, at most `cap` characters (reading stops there). */
export async function readText(stream: NodeJS.ReadableStream, cap: number): Promise<string> {
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length >= cap) break;
  }
  return text.slice(0, cap);
}
