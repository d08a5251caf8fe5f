/**
 * The worker thread that holds one tokenizer (./workerCounter.ts starts it): building Kimi's
 * 163,840 ranks takes seconds of CPU, and counting a long message milliseconds, neither of which
 * may stall the editor's extension host.
 */
import { parentPort } from 'node:worker_threads';
import { counterFromFiles, type SyncTokenCounter, type TokenizerFiles } from './counter';
import type { FramedMessage } from './framing';

export type WorkerRequest =
  | { readonly id: number; readonly kind: 'load'; readonly files: TokenizerFiles; readonly checksum: string }
  | { readonly id: number; readonly kind: 'text'; readonly text: string }
  | { readonly id: number; readonly kind: 'message'; readonly message: FramedMessage };

export type WorkerReply =
  | { readonly id: number; readonly count: number }
  | { readonly id: number; readonly how: string; readonly exact: boolean }
  | { readonly id: number; readonly error: string };

let counter: SyncTokenCounter | undefined;

parentPort?.on('message', (request: WorkerRequest) => {
  const reply = (r: WorkerReply) => parentPort?.postMessage(r);
  try {
    if (request.kind === 'load') {
      counter = counterFromFiles(request.files, request.checksum);
      return reply({ id: request.id, how: counter.how, exact: counter.exact });
    }
    if (!counter) return reply({ id: request.id, error: 'no tokenizer loaded' });
    const count = request.kind === 'text' ? counter.countText(request.text) : counter.countMessage(request.message);
    reply({ id: request.id, count });
  } catch (error) {
    reply({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
