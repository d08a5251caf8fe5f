import type { Transport } from '../transport/transport';
import { DEFAULT_PARSER } from '../engine/parserNames';
import { engineOf, getFlag } from '../engine/execStart';
import type { ServerHttpClient } from '../engine/serverHttp';
import type { ExpectedParsers } from './judges';
import { targetIo, type Target } from '../target/target';
import { verifyParsers, type ProgressOptions, type VerifierDeps, type VerifyResult } from './verifier';
import { readStream } from './streamRead';
import { connectionRefused, noAnswerWithin } from '../present/words/verifyWords';
import { verifyingParsersLine } from '../present/words/verifyProgressWords';

export const REQUEST_TIMEOUT_MS = 60_000;
/** A streamed answer of the retry budget (8192 tokens, ~250 bytes of SSE each) fits. */
const ANSWER_MAX_BYTES = 8 * 1024 * 1024;

/** The parsers the target's command line asks for; kimi_k2 where it asks for none (what we want it to have). */
export async function expectedParsers(
  transport: Transport,
  target: Target,
  log: (line: string) => void,
): Promise<ExpectedParsers> {
  const argv = (await target.readState(targetIo(transport, 20_000, (command) => log(`$ ${command}`)))).argv;
  return {
    reasoningParser: getFlag(argv, '--reasoning-parser') ?? DEFAULT_PARSER,
    toolCallParser: getFlag(argv, '--tool-call-parser') ?? DEFAULT_PARSER,
    engine: engineOf(argv) ?? 'sglang',
  };
}

/** The verifier's HTTP needs, served by the SGLang client through the SSH tunnel. */
export function verifierDeps(
  client: ServerHttpClient,
  timeoutMs = REQUEST_TIMEOUT_MS,
  readRunningArgv?: () => Promise<readonly string[] | undefined>,
): VerifierDeps {
  const unwrap = async (pending: ReturnType<ServerHttpClient['request']>) => {
    const result = await pending;
    if (result.kind === 'http') return result;
    if (result.kind === 'timeout') throw new Error(noAnswerWithin(Math.round(timeoutMs / 1000)));
    if (result.kind === 'refused') throw new Error(connectionRefused());
    throw new Error(result.message);
  };
  return {
    timeoutMs,
    ...(readRunningArgv ? { runningArgv: readRunningArgv } : {}),
    async getJson(path) {
      const result = await unwrap(client.request('GET', path, undefined, timeoutMs));
      let body: unknown = result.body;
      try {
        body = JSON.parse(result.body);
      } catch {
        // Not JSON: the judges report the text as evidence.
      }
      return { status: result.status, body };
    },
    async postJson(path, body, options) {
      const onText = options?.onText;
      if (options?.stream && onText && options.signal) {
        // Read as it arrives, so that a slow answer shows where it is (./progress).
        const streamed = await client.postStream(path, JSON.stringify(body), options.signal);
        if (streamed.kind === 'refused') throw new Error(connectionRefused());
        if (streamed.kind === 'error') throw new Error(streamed.message);
        options.onResponse?.();
        const read = await readStream(streamed.body, ANSWER_MAX_BYTES, onText);
        return { status: streamed.status, body: read.text, ...(read.truncated ? { truncated: true } : {}) };
      }
      const result = await unwrap(
        client.request('POST', path, JSON.stringify(body), options?.timeoutMs ?? timeoutMs, ANSWER_MAX_BYTES),
      );
      return { status: result.status, body: result.body, ...(result.truncated ? { truncated: true } : {}) };
    },
  };
}

/** Runs every parser check against the server the session reaches. */
export async function verifyServer(
  transport: Transport,
  client: ServerHttpClient,
  target: Target,
  log: (line: string) => void,
  onProgress?: ProgressOptions['onProgress'],
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<VerifyResult> {
  const expected = await expectedParsers(transport, target, log);
  log(
    verifyingParsersLine(
      expected.engine === 'vllm' ? 'vLLM' : undefined,
      expected.reasoningParser,
      expected.toolCallParser,
    ),
  );
  // The flags the server really runs with: the running process's, as its target reads them.
  const readArgv = () => target.runningArgv(targetIo(transport));
  return verifyParsers(verifierDeps(client, timeoutMs, readArgv), expected, {
    log,
    ...(onProgress ? { onProgress } : {}),
  });
}
