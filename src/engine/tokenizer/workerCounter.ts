/**
 * Token counters as the chat model uses them (asynchronous): an exact one whose tokenizer lives
 * in a worker thread (./countWorker.ts; dist/tokenCountWorker.js in the bundle), the estimate,
 * and a bounded memory of counts made (VS Code counts the whole history again for each request).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SyncTokenCounter, TokenizerFiles } from './counter';
import type { FramedMessage } from './framing';
import type { WorkerReply, WorkerRequest } from './countWorker';
import { counterNoCount, counterNotLoaded, counterWorkerEnded } from '../../present/words/modelWords';

export interface TokenCounter {
  /** How counts are made, for the log. */
  readonly how: string;
  readonly exact: boolean;
  countText(text: string): Promise<number>;
  countMessage(message: FramedMessage): Promise<number>;
  dispose(): void;
}

/** A synchronous counter (the estimate) as a TokenCounter. */
export function fromSync(counter: SyncTokenCounter): TokenCounter {
  return {
    how: counter.how,
    exact: counter.exact,
    countText: async (text) => counter.countText(text),
    countMessage: async (message) => counter.countMessage(message),
    dispose: () => undefined,
  };
}

/** The worker's script: next to the bundle (dist/), else the source under tsx (tests, scripts). */
function workerScript(): { file: string; execArgv: string[] } {
  const bundled = path.join(__dirname, 'tokenCountWorker.js');
  if (fs.existsSync(bundled)) return { file: bundled, execArgv: [] };
  return { file: path.join(__dirname, 'countWorker.ts'), execArgv: ['--require', 'tsx/cjs'] };
}

type Omit0<T> = T extends unknown ? Omit<T, 'id'> : never;

/** Starts a worker with the tokenizer built from `files`; rejects when the files do not make one. */
export async function workerCounter(files: TokenizerFiles, checksum: string): Promise<TokenCounter> {
  const { file, execArgv } = workerScript();
  const worker = new Worker(file, { execArgv });
  worker.unref();
  const waiting = new Map<number, { resolve(r: WorkerReply): void; reject(e: Error): void }>();
  let next = 0;
  let failed: Error | undefined;
  const failAll = (error: Error) => {
    failed = error;
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  worker.on('message', (reply: WorkerReply) => {
    const w = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (!w) return;
    if ('error' in reply) w.reject(new Error(reply.error));
    else w.resolve(reply);
  });
  worker.on('error', (error) => failAll(error));
  worker.on('exit', (code) => failAll(new Error(counterWorkerEnded(code))));
  const ask = (request: Omit0<WorkerRequest>) =>
    new Promise<WorkerReply>((resolve, reject) => {
      if (failed) return reject(failed);
      const id = next++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  const count = async (request: Omit0<WorkerRequest>) => {
    const reply = await ask(request);
    if (!('count' in reply)) throw new Error(counterNoCount());
    return reply.count;
  };
  try {
    const loaded = await ask({ kind: 'load', files, checksum });
    if (!('how' in loaded)) throw new Error(counterNotLoaded());
    return {
      how: loaded.how,
      exact: loaded.exact,
      countText: (text) => (text === '' ? Promise.resolve(0) : count({ kind: 'text', text })),
      countMessage: (message) => count({ kind: 'message', message }),
      dispose: () => void worker.terminate(),
    };
  } catch (error) {
    void worker.terminate();
    throw error;
  }
}

/** The same counts, remembered: bounded by the characters of the keys kept (oldest out). */
export function remembering(counter: TokenCounter, maxChars = 8 << 20): TokenCounter {
  const seen = new Map<string, number>();
  let chars = 0;
  const memo = async (key: string, count: () => Promise<number>): Promise<number> => {
    const known = seen.get(key);
    if (known !== undefined) {
      seen.delete(key);
      seen.set(key, known);
      return known;
    }
    const n = await count();
    if (key.length > maxChars / 4 || seen.has(key)) return n;
    seen.set(key, n);
    chars += key.length;
    for (const [old] of seen) {
      if (chars <= maxChars) break;
      seen.delete(old);
      chars -= old.length;
    }
    return n;
  };
  return {
    how: counter.how,
    exact: counter.exact,
    countText: (text) => memo(`t${text}`, () => counter.countText(text)),
    countMessage: (message) => memo(`m${JSON.stringify(message)}`, () => counter.countMessage(message)),
    dispose: () => counter.dispose(),
  };
}
