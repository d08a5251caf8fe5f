/**
 * Each engine's own conformance fixture: what its real server prints and answers, written from
 * the engine's documentation and source (the simulators in test/gpu-host/sglang-sim build the
 * same HTTP bodies: openai.js for SGLang, vllm-openai.js for vLLM, and these bodies are taken
 * from there). Its published logs are the ones of test/fixtures/real-logs whose header names the
 * engine. An engine of ENGINES (src/engine/engines.ts) without an entry here fails the suite
 * (engines.unit.test.ts): a new backend is done when it has one and passes (docs/backends.md).
 */
import * as path from 'node:path';

/** One HTTP answer as the server sends it. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export interface EngineFixture {
  /** Command lines that run this engine's server (ExecStart, a container's Path and Args). */
  readonly commandLines: readonly (readonly string[])[];
  /**
   * What is read of a command line, one for each of the engine's launch forms (`Engine.launch`):
   * the form found, the index of its first server argument, the model path.
   */
  readonly launches: readonly {
    readonly argv: readonly string[];
    readonly form: string;
    readonly argsStart: number;
    readonly modelPath: string;
  }[];
  /** Command lines that name the engine but run no server of it (a benchmark, another subcommand, a shell). */
  readonly notServers: readonly (readonly string[])[];
  /** The port the server listens on without --port, from its documentation. */
  readonly defaultPort: number;
  /** What says ready: a log line of its own (SGLang's "fired up"), or the HTTP server coming up (vLLM). */
  readonly readyEvidence: 'log-line' | 'http';
  /** `/health` between the HTTP server's start and ready; undefined: HTTP opens only once it is ready. */
  readonly healthWhileWarming?: Answer;
  /** `/health` once ready. */
  readonly healthReady: Answer;
  /** `/health` answers 200 only once a generation passed (SGLang), not once the engine is up (vLLM). */
  readonly healthRunsGeneration: boolean;
  /** `/v1/models` and the model it lists. */
  readonly models: Answer;
  readonly modelId: string;
  /** A 1-token `/v1/completions` answer, and its text. */
  readonly completion: Answer;
  readonly completionText: string;
  /** The engine's error answers to a completion: never ready, the message shown. */
  readonly completionErrors: readonly { readonly answer: Answer; readonly shows: RegExp }[];
  /** Where the server describes itself (its flags), newest first; empty: it does not. */
  readonly serverInfoPaths: readonly string[];
  /** Parser names the server accepts, per kind (at least the Kimi ones), and spellings it refuses. */
  readonly parsers: {
    readonly reasoning: readonly string[];
    readonly toolCall: readonly string[];
    readonly refused: { readonly reasoning: readonly string[]; readonly toolCall: readonly string[] };
    /** What a parser change adds besides the two flags. */
    readonly switches: readonly string[];
  };
}

interface SimBodies {
  completion(text: string, finishReason: string, meta: Record<string, unknown>): unknown;
  errorBody(message: string, status?: number): unknown;
}
const SIM = path.join(__dirname, '..', 'gpu-host', 'sglang-sim');
const sglangSim = require(path.join(SIM, 'openai.js')) as SimBodies & {
  modelsList(name: string, created: number, maxLen?: number): unknown;
};
const vllmSim = require(path.join(SIM, 'vllm-openai.js')) as SimBodies & {
  modelsList(name: string, root: string, created: number, maxLen: number): unknown;
};

const JSON_TYPE = 'application/json';
const json = (status: number, value: unknown): Answer => ({
  status,
  contentType: JSON_TYPE,
  body: JSON.stringify(value),
});
const empty = (status: number): Answer => ({ status, contentType: '', body: '' });
const MODEL = '/root/models/Kimi-K2.6';
const META = { model: MODEL, promptTokens: 1, completionTokens: 1, created: 1769183473 };
/** An error whose words contain "choices": matching the word is no proof of an answer (reference §6). */
const CHOICES_IN_ERROR = 'Invalid request: "choices" is not a valid parameter';

export const ENGINE_FIXTURES: Readonly<Record<string, EngineFixture>> = {
  sglang: {
    commandLines: [
      ['/usr/bin/python3', '-m', 'sglang.launch_server', '--model-path', '/models/Kimi-K2.6', '--tp', '8'],
      ['/opt/venv/bin/sglang', 'serve', '--model-path', '/models/Kimi-K2.6'],
    ],
    launches: [
      {
        argv: ['/usr/bin/python3.11', '-u', '-m', 'sglang.launch_server', '--model-path', '/m/K2', '--tp', '8'],
        form: 'launch_server',
        argsStart: 4,
        modelPath: '/m/K2',
      },
      {
        argv: ['/opt/venv/bin/sglang', 'serve', '--model', '/m/K2'],
        form: 'sglang serve',
        argsStart: 2,
        modelPath: '/m/K2',
      },
      {
        argv: ['python3', '-m', 'sglang.cli', 'serve', '--model-path=/m/K2'],
        form: 'sglang serve',
        argsStart: 4,
        modelPath: '/m/K2',
      },
    ],
    notServers: [
      ['/bin/bash', '-c', 'python -m sglang.launch_server --model-path /m'],
      ['python3', '-m', 'sglang.bench_serving', '--model', '/m'],
      ['/opt/venv/bin/sglang', 'version'],
      ['python3', '/opt/serve.py', '-m', 'sglang.launch_server'],
    ],
    defaultPort: 30000,
    readyEvidence: 'log-line',
    healthWhileWarming: empty(503),
    healthReady: empty(200),
    healthRunsGeneration: true,
    models: json(200, sglangSim.modelsList(MODEL, 1769183473)),
    modelId: MODEL,
    completion: json(200, sglangSim.completion('Hi', 'length', META)),
    completionText: 'Hi',
    completionErrors: [
      { answer: json(400, sglangSim.errorBody('The model `x` does not exist.', 400)), shows: /does not exist/ },
      { answer: json(200, sglangSim.errorBody(CHOICES_IN_ERROR, 400)), shows: /error: Invalid request/ },
      { answer: json(401, { error: 'Unauthorized' }), shows: /API key/ },
      { answer: empty(503), shows: /HTTP 503 with an empty body/ },
    ],
    serverInfoPaths: ['/server_info', '/get_server_info'],
    parsers: {
      reasoning: ['kimi_k2', 'deepseek-r1', 'qwen3'],
      toolCall: ['kimi_k2', 'deepseekv3', 'qwen25'],
      refused: { reasoning: ['deepseek_r1', 'hermes'], toolCall: ['deepseek_v3', 'Kimi K2'] },
      switches: [],
    },
  },
  vllm: {
    commandLines: [
      ['/opt/venv/bin/vllm', 'serve', '/models/Kimi-K2.6', '--tensor-parallel-size', '8'],
      ['python3', '-m', 'vllm.entrypoints.openai.api_server', '--model', '/models/Kimi-K2.6'],
    ],
    launches: [
      {
        argv: ['/opt/venv/bin/vllm', 'serve', '/m/K2', '--port', '8100'],
        form: 'vllm serve',
        argsStart: 2,
        modelPath: '/m/K2',
      },
      { argv: ['python3', '/usr/bin/vllm', 'serve', '/m/K2'], form: 'vllm serve', argsStart: 3, modelPath: '/m/K2' },
      {
        argv: ['python3', '-m', 'vllm.entrypoints.cli.main', 'serve', '/m/K2'],
        form: 'vllm serve',
        argsStart: 4,
        modelPath: '/m/K2',
      },
      {
        argv: ['/usr/bin/python3', '-m', 'vllm.entrypoints.openai.api_server', '--model', '/m/K2'],
        form: 'vllm api_server',
        argsStart: 3,
        modelPath: '/m/K2',
      },
    ],
    notServers: [
      ['/usr/bin/vllm', 'bench', 'serve', '/m'],
      ['python3', '-m', 'vllm.entrypoints.openai.api_server_v2'],
      ['/bin/sh', '-c', 'vllm serve /m'],
    ],
    defaultPort: 8000,
    readyEvidence: 'http',
    healthReady: empty(200),
    healthRunsGeneration: false,
    models: json(200, vllmSim.modelsList(MODEL, MODEL, 1769183473, 262144)),
    modelId: MODEL,
    completion: json(200, vllmSim.completion('Hi', 'length', META)),
    completionText: 'Hi',
    completionErrors: [
      {
        answer: json(
          500,
          vllmSim.errorBody('EngineCore encountered an issue. See stack trace (above) for the root cause.', 500),
        ),
        shows: /EngineCore encountered an issue/,
      },
      { answer: json(200, vllmSim.errorBody(CHOICES_IN_ERROR, 400)), shows: /error: Invalid request/ },
      { answer: json(401, { error: 'Unauthorized' }), shows: /API key/ },
    ],
    serverInfoPaths: [],
    parsers: {
      reasoning: ['kimi_k2', 'deepseek_r1', 'qwen3'],
      toolCall: ['kimi_k2', 'deepseek_v3', 'hermes'],
      refused: { reasoning: ['deepseek-r1', 'kimi'], toolCall: ['deepseekv3', 'qwen25'] },
      switches: ['--enable-auto-tool-choice'],
    },
  },
};
