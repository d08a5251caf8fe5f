/** A response body read as it arrives: each piece of text told, at most `cap` bytes kept. */
import { StringDecoder } from 'node:string_decoder';

export async function readStream(
  stream: NodeJS.ReadableStream,
  cap: number,
  onText: (text: string) => void,
): Promise<{ text: string; truncated: boolean }> {
  const decoder = new StringDecoder('utf8');
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const whole = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const buf = size + whole.length > cap ? whole.subarray(0, cap - size) : whole;
    chunks.push(buf);
    size += buf.length;
    onText(decoder.write(buf));
    if (buf !== whole) {
      truncated = true;
      break; // leaving for-await destroys the stream
    }
  }
  if (truncated) (stream as { destroy?: () => void }).destroy?.();
  return { text: Buffer.concat(chunks, size).toString('utf8'), truncated };
}
