// What the chat model's request path costs on a host with a set round-trip time: time to first
// token and tokens per second through the extension's path (the fleet's session over SSH, as
// KimiChatProvider.provideLanguageModelChatResponse sends it) against the same request sent
// directly to a port forwarded by the same fleet (`Kimi Service: Forward server port`), for a
// 40-message conversation with 10 tools, and the remote round trips made for token counting.
//
//   npm run bench:chat                         # defaults: --runs 5 --rtt 80
//   npm run bench:chat -- --runs 7 --rtt 80 --out BENCHMARKS.md
//
// Options:
//   --runs N      runs of each case (default 5; the table has the medians), interleaved
//   --rtt MS      the round-trip time between this machine and the GPU host (default 80)
//   --out FILE    the markdown file whose "## Chat model latency (bench:chat)" section is rewritten
//                 (default BENCHMARKS.md; only that section is touched, through benchDoc.replaceSection)
//
// The round-trip time: `tc qdisc ... netem` is not available in this kernel ("Specified qdisc kind
// is unknown"), so a TCP proxy in front of the host's sshd holds every chunk for RTT/2 in each
// direction (order kept). Everything the extension says to the host goes over that one SSH
// connection, so every SSH round trip (a channel open, a request, the first byte back) pays the
// RTT, as on a real network; the simulator itself adds nothing.
//
// Cases (each run: one request of each, in this order):
//   direct        POST /v1/chat/completions to 127.0.0.1:PORT, the fleet's forward (fleet.forward):
//                 node's http, the answer read with the chat model's own SSE decoder and accumulator;
//   chat model    the same body (buildChatRequest from the editor's neutral messages) through
//                 fleet.sessionFor(server).client.postStream, read as the provider reads it;
//   + counts      the chat model after one token count per message and per tool (VS Code asks the
//                 provider for them when it fits a prompt), one after another: made locally by
//                 ChatTokenCounts (what provideTokenCount calls now), and as provideTokenCount sent
//                 them before (POST /tokenize through the session; once at the end also all at once:
//                 its outcome is told, not tabulated).
// The provider class itself needs the VS Code API (its progress, cancellation and parts), so the
// script calls the functions it calls, in its order; the remote /tokenize calls are counted from the
// simulator's access log (the unit's journal), per request.
import { unitWithParsers } from '../test/e2e/scenario';
import './vscodeStub'; // first: tokenCounter.ts needs `vscode` (CancellationError) at run time
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseSettings } from '../src/config/parseSettings';
import type { ServerProfile } from '../src/config/config';
import { Fleet } from '../src/fleet/fleet';
import { NO_QUESTIONS_UI } from '../src/fleet/servers/standalone';
import {
  buildChatRequest,
  ChatStreamAccumulator,
  type NeutralMessage,
  type NeutralTool,
} from '../src/fronts/vscode/chat/openaiChat';
import { SseDecoder } from '../src/fronts/vscode/chat/sse';
import { ChatTokenCounts } from '../src/fronts/vscode/chat/tokenCounter';
import { startGpuHost } from '../test/gpu-host/harness';
import { serverEntry } from '../test/integration/simHost';
import { replaceSection } from './benchDoc';

const HEADING = '## Chat model latency (bench:chat)';
const REPO = path.resolve(__dirname, '..');

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
}
const RUNS = Math.max(1, Math.floor(Number(arg('runs', '5'))));
const RTT_MS = Number(arg('rtt', '80'));
const OUT = path.resolve(REPO, arg('out', 'BENCHMARKS.md'));
if (!(RTT_MS >= 0)) throw new Error('--rtt must be >= 0');

const t0 = Date.now();
const log = (s: string) =>
  process.stderr.write(`[bench-chat ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);

// ---------------------------------------------------------------- the round-trip time

/** A TCP proxy that holds each chunk for `oneWayMs` in each direction, in order. */
class DelayProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly oneWayMs: number,
  ) {
    this.server = net.createServer((client) => {
      const upstream = net.connect({ host: '127.0.0.1', port: this.targetPort });
      for (const s of [client, upstream]) {
        s.setNoDelay(true);
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      this.pipe(client, upstream);
      this.pipe(upstream, client);
    });
  }

  /** Timers of one duration fire in the order they were set: the stream's order is kept. */
  private pipe(from: net.Socket, to: net.Socket): void {
    from.on('data', (d: Buffer) => setTimeout(() => to.destroyed || to.write(d), this.oneWayMs));
    from.on('end', () => setTimeout(() => to.end(), this.oneWayMs));
  }

  listen(): Promise<void> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        this.port = (this.server.address() as net.AddressInfo).port;
        resolve();
      }),
    );
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- the conversation

const TOOL_NAMES = [
  'read_file',
  'write_file',
  'list_dir',
  'grep',
  'run_tests',
  'git_diff',
  'git_log',
  'open_url',
  'get_weather',
  'search_docs',
];

const TOOLS: NeutralTool[] = TOOL_NAMES.map((name, i) => ({
  name,
  description: `${name.replace(/_/g, ' ')}: a tool of an agent in the editor (${i + 1} of ${TOOL_NAMES.length}), described as a real one is, with when to call it and what it returns.`,
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'A path in the workspace.' },
      query: { type: 'string', description: 'What to look for.' },
      limit: { type: 'integer', description: 'At most this many results.' },
    },
    required: ['path'],
  },
}));

/** 40 messages: a system prompt, then user / assistant-with-a-tool-call / tool-result turns, ending with a user question. */
function conversation(): NeutralMessage[] {
  const messages: NeutralMessage[] = [
    {
      role: 'system',
      parts: [{ kind: 'text', text: 'You are a coding agent in the editor. Use the tools to read and change files.' }],
    },
  ];
  let call = 0;
  while (messages.length < 39) {
    const tool = TOOL_NAMES[call % TOOL_NAMES.length]!;
    const callId = `functions.${tool}:${call}`;
    messages.push({
      role: 'assistant',
      parts: [
        { kind: 'text', text: `Let me look at step ${call + 1}.` },
        { kind: 'toolCall', callId, name: tool, input: { path: `src/module${call}.ts`, query: 'export' } },
      ],
    });
    messages.push({
      role: 'user',
      parts: [
        {
          kind: 'toolResult',
          callId,
          text: `export function step${call}(input: string): string {\n  return input.trim();\n}\n`.repeat(4),
        },
      ],
    });
    call++;
  }
  messages.push({ role: 'user', parts: [{ kind: 'text', text: 'What is the weather in Paris? Use the tool.' }] });
  return messages;
}

/** What provideTokenCount counted for a message before local counting (one remote /tokenize of this text). */
function messageText(message: NeutralMessage): string {
  return message.parts
    .map((p) =>
      p.kind === 'text' || p.kind === 'toolResult'
        ? p.text
        : p.kind === 'toolCall'
          ? `${p.name}${JSON.stringify(p.input)}`
          : '',
    )
    .join('\n');
}

// ---------------------------------------------------------------- one request

interface Timing {
  /** From the start of the request (token counts included) to the first streamed token (reasoning, text or a tool call). */
  ttftMs: number;
  /** Completion tokens (the server's usage) per second from the first token to the end. */
  tokensPerSecond: number;
  totalMs: number;
  completionTokens: number;
  /** Remote POST /tokenize calls this request made (the simulator's access log). */
  tokenizeCalls: number;
}

/** Reads a streamed chat completion with the chat model's own decoder; the time of its first token. */
async function readStream(
  body: AsyncIterable<Buffer | string>,
  started: number,
): Promise<Omit<Timing, 'tokenizeCalls'>> {
  const decoder = new SseDecoder();
  const acc = new ChatStreamAccumulator();
  let first: number | undefined;
  let completionTokens = 0;
  const take = (events: ReturnType<ChatStreamAccumulator['push']>) => {
    for (const e of events) {
      if (e.kind === 'usage') completionTokens = e.completionTokens;
      else first ??= Date.now();
    }
  };
  for await (const chunk of body)
    for (const data of decoder.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'))) take(acc.push(data));
  for (const data of decoder.end()) take(acc.push(data));
  take(acc.end());
  const end = Date.now();
  if (first === undefined) throw new Error('no token in the answer');
  return {
    ttftMs: first - started,
    tokensPerSecond: completionTokens / Math.max(0.001, (end - first) / 1000),
    totalMs: end - started,
    completionTokens,
  };
}

function directRequest(port: number, body: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        agent: false,
      },
      resolve,
    );
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------- the run

type CaseName =
  | 'direct'
  | 'chat model'
  | '+ counts (local, as provideTokenCount now)'
  | '+ counts as before (remote /tokenize)';
const CASES: CaseName[] = [
  'direct',
  'chat model',
  '+ counts (local, as provideTokenCount now)',
  '+ counts as before (remote /tokenize)',
];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const started = Date.now();
  log(`starting the simulated GPU host (RTT ${RTT_MS} ms through a delaying proxy in front of sshd)`);
  const host = await startGpuHost({ shards: 2, shardBytes: 256 * 1024, sim: { warmupSeconds: 0.5 } });
  const proxy = new DelayProxy(host.sshPort, RTT_MS / 2);
  await proxy.listen();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-bench-chat-'));
  const fleet = new Fleet({
    ui: NO_QUESTIONS_UI,
    log: () => undefined,
    history: { get: () => undefined, update: async () => undefined },
  });
  try {
    await host.writeUnit(unitWithParsers(host), { reload: true });
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `[127.0.0.1]:${proxy.port} ${host.hostPublicKey}\n`);
    const parsed = parseSettings({
      servers: [{ ...serverEntry(host, 'sim'), port: proxy.port }],
      knownHostsFile,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
    });
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    fleet.configure(parsed.settings);
    const server: ServerProfile = parsed.settings.servers[0]!;
    await fleet.restart(server, { issueTimeoutMs: 60_000 });
    const ready = await fleet.waitFor(server, { timeoutMs: 180_000 });
    if (ready.kind !== 'ready') throw new Error(`the server is not ready: ${ready.kind}`);
    log('ready');

    // The provider's token counts (ChatTokenCounts): the tokenizer read from the host once, when the model is offered.
    const tokens = new ChatTokenCounts(fleet, { info: (m) => log(m), warn: (m) => log(m), debug: () => undefined });
    const how = await tokens.ready(server);
    log(`token counts: ${how.how}`);
    const session = await fleet.sessionFor(server);
    const models = await session.client.request('GET', '/v1/models');
    const modelId =
      models.kind === 'http' ? (JSON.parse(models.body) as { data: { id: string }[] }).data[0]?.id : undefined;
    if (!modelId) throw new Error(`no model in GET /v1/models: ${JSON.stringify(models)}`);
    log(`model ${modelId}`);
    const { info } = await fleet.forward(server);
    log(`forwarded to 127.0.0.1:${info.localPort}`);
    const messages = conversation();
    const body = JSON.stringify(buildChatRequest({ model: modelId, messages, tools: TOOLS, maxTokens: 512 }));
    const countTexts = [...messages.map(messageText), ...TOOLS.map((t) => `${t.name}\n${t.description}`)];
    const tokenizeLines = async () => (await host.journal()).filter((l) => /"POST \/tokenize/.test(l)).length;
    const count = (text: string) =>
      session.client.request(
        'POST',
        '/tokenize',
        JSON.stringify({ model: modelId, prompt: text, add_special_tokens: false }),
      );

    const runCase = async (name: CaseName): Promise<Timing> => {
      if (process.env.BENCH_CHAT_DEBUG) log(`${name}...`);
      const before = await tokenizeLines();
      const start = Date.now();
      let timing: Omit<Timing, 'tokenizeCalls'>;
      if (name === 'direct') {
        const res = await directRequest(info.localPort, body);
        if (res.statusCode !== 200) throw new Error(`direct: HTTP ${res.statusCode}`);
        timing = await readStream(res, start);
      } else {
        if (name === '+ counts as before (remote /tokenize)') for (const text of countTexts) await count(text);
        if (name === '+ counts (local, as provideTokenCount now)') {
          for (const message of messages) await tokens.count(server, message);
          for (const tool of TOOLS) await tokens.count(server, `${tool.name}\n${tool.description}`);
        }
        const s = await fleet.sessionFor(server);
        const result = await s.client.postStream('/v1/chat/completions', body, new AbortController().signal);
        if (result.kind !== 'http' || result.status !== 200) throw new Error(`chat model: ${JSON.stringify(result)}`);
        timing = await readStream(result.body as AsyncIterable<Buffer>, start);
      }
      // The access log line is written when the answer is sent: wait until the journal has all of them.
      const expected = name === '+ counts as before (remote /tokenize)' ? countTexts.length : 0;
      let calls = (await tokenizeLines()) - before;
      for (const end = Date.now() + 10_000; calls < expected && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 200));
        calls = (await tokenizeLines()) - before;
      }
      return { ...timing, tokenizeCalls: calls };
    };

    // One request of each first, not counted: the first channel, the first parse.
    for (const name of CASES) await runCase(name);
    const results = new Map<CaseName, Timing[]>(CASES.map((c) => [c, []]));
    for (let run = 1; run <= RUNS; run++) {
      for (const name of CASES) {
        const t = await runCase(name);
        results.get(name)!.push(t);
        log(
          `run ${run}/${RUNS} ${name}: first token ${t.ttftMs} ms, ${t.tokensPerSecond.toFixed(0)} tokens/s (${t.completionTokens} tokens), /tokenize calls ${t.tokenizeCalls}`,
        );
      }
    }
    // The same counts all at once (VS Code may ask them concurrently): once, last, with a guard,
    // since they queue for the session's one free channel (MAX_CHANNELS, two held by the watch).
    const probeStart = Date.now();
    const answers = await Promise.all(countTexts.map(count));
    const counted = answers.filter((a) => a.kind === 'http').length;
    const timedOut = answers.filter((a) => a.kind === 'timeout').length;
    const countsMs = Date.now() - probeStart;
    const GUARD_MS = 60_000;
    const after = await Promise.race([
      fleet
        .sessionFor(server)
        .then((s) => s.client.postStream('/v1/chat/completions', body, AbortSignal.timeout(GUARD_MS)))
        .then((r) => (r.kind === 'http' ? readStream(r.body as AsyncIterable<Buffer>, probeStart) : undefined))
        .catch(() => undefined),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), GUARD_MS)),
    ]);
    const probe =
      `${counted} of ${countTexts.length} answered, ${timedOut} timed out (the HTTP client's 5 s, spent waiting for a channel) in ${countsMs} ms; ` +
      (after
        ? `the chat request after them: first token ${after.ttftMs} ms after the counts began`
        : `the chat request after them had no answer within ${GUARD_MS / 1000} s`);
    log(`counts all at once: ${probe}`);
    const tokenizeStatus = (await host.journal()).find((l) => /"POST \/tokenize/.test(l))?.match(/" (\d{3}) /)?.[1];

    const direct = median(results.get('direct')!.map((t) => t.ttftMs));
    const rows = CASES.map((name) => {
      const ts = results.get(name)!;
      const ttft = median(ts.map((t) => t.ttftMs));
      return {
        name,
        ttft,
        tps: median(ts.map((t) => t.tokensPerSecond)),
        ratio: ttft / direct,
        overRtt: (ttft - direct) / Math.max(1, RTT_MS),
        calls: median(ts.map((t) => t.tokenizeCalls)),
        spread: `${Math.min(...ts.map((t) => t.ttftMs))}-${Math.max(...ts.map((t) => t.ttftMs))}`,
      };
    });
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const cpu = os.cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
    const date = new Date().toISOString().slice(0, 10);
    const table = [
      '| path | first token (median) | range | × direct | over direct, in RTTs | tokens/s (median) | remote /tokenize calls per request |',
      '|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.name} | ${r.ttft.toFixed(0)} ms | ${r.spread} ms | ${r.ratio.toFixed(2)} | ${r.overRtt.toFixed(1)} | ${r.tps.toFixed(0)} | ${r.calls} |`,
      ),
    ];
    process.stdout.write(`${table.join('\n')}\n`);
    for (const r of rows.slice(1))
      process.stdout.write(
        `${r.name}: first token ${r.ratio.toFixed(2)} x direct (${(r.ttft - direct).toFixed(0)} ms more)\n`,
      );
    const section = [
      HEADING,
      '',
      `\`npm run bench:chat -- --runs ${RUNS} --rtt ${RTT_MS}\` (scripts/bench-chat.ts; ${((Date.now() - started) / 60_000).toFixed(1)} min here), ${date}, commit ${commit}.`,
      `Machine: ${os.cpus().length} cores (${cpu}), shared with other jobs (load average ${os.loadavg()[0]!.toFixed(1)} at the end), Node ${process.version}.`,
      '',
      `A 40-message conversation (a system prompt, 19 assistant tool calls with their results, a user question) with 10 tools, ${Buffer.byteLength(body)} bytes of request, max_tokens 512, against the SGLang simulator (kimi_k2 parsers) on the simulated GPU host, ${RTT_MS} ms round trip; median of ${RUNS} runs of each path, interleaved, after one unmeasured request of each.`,
      '',
      ...table,
      '',
      `- **direct**: the request to \`127.0.0.1:PORT\` forwarded by the fleet through its SSH connection (*Kimi Service: Forward server port*), read with the chat model's own SSE decoder.`,
      "- **chat model**: the same body through the fleet's session (`postStream` over the SSH tunnel), as `KimiChatProvider.provideLanguageModelChatResponse` sends it (the script calls the functions it calls: `buildChatRequest`, `sessionFor`, `postStream`, `SseDecoder`, `ChatStreamAccumulator`; the class needs the VS Code API).",
      `- **+ counts**: the chat model after one count per message and per tool (${countTexts.length}), one after another, as VS Code asks them when it fits a prompt. *local*: \`ChatTokenCounts.count\`, what \`provideTokenCount\` calls now (the served model's tokenizer, read from the host once when the model is offered: ${how.how}). *as before*: each sent as \`provideTokenCount\` sent it before the local counts (\`POST /tokenize\` through the session). The local row's extra time is CPU on this machine (50 counts, through the tokenizer's worker thread, on this shared 2-core machine), not a round trip: it made no remote call. Remote calls are counted in the simulator's access log (the unit's journal).`,
      `- **The same counts all at once** (run once, after the table's runs): ${probe}.`,
      `- The round trip: \`tc qdisc netem\` is not in this kernel ("Specified qdisc kind is unknown"), so a TCP proxy in front of sshd holds each chunk ${RTT_MS / 2} ms each way (order kept); every SSH round trip pays it, the simulator adds nothing. The simulator streams a chunk every 5 ms (its tokenDelayMs), which bounds tokens/s for every path alike; the answer is a tool call of ${median(results.get('direct')!.map((t) => t.completionTokens))} tokens, so tokens/s is over a short stream and varies by some 30 % between runs.`,
      `- The simulator's \`POST /tokenize\` answered ${tokenizeStatus ?? 'nothing'} (the earlier provider stopped asking after a first non-200 answer and estimated; against an SGLang that serves \`/tokenize\` it made one call per count, as in the *as before* row).`,
    ];
    const doc = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    fs.writeFileSync(OUT, replaceSection(doc, HEADING, section.join('\n')));
    log(`wrote "${HEADING}" in ${path.relative(REPO, OUT)}`);
  } finally {
    fleet.dispose();
    await proxy.close();
    await host.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench-chat: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
