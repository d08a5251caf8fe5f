'use strict';
/*
 * Hostile mode of the simulated GPU host: sim.json `"hostile": true` (or
 * `{ "seed": N, "gapMs": N }`). The unit's process then is no SGLang at all but a server that
 * says everything wrong, for real, through the journal, HTTP and the stand-ins:
 *  - journal: random bytes and invalid UTF-8, control characters, lines aimed at the parsers'
 *    regexes (runs of spaces, rank tags that never close, repeated phrases), counts of 400
 *    digits, tracebacks with 30 kB messages, SGLang's own ready line, lines of 4 MiB (appended to
 *    the journal directly: the supervisor, like journald's LineMax, cuts stdout lines at 48 KiB),
 *    a 256 KiB binary message (journalctl prints it as a byte array, ~1.4 MB); the big ones in
 *    round 1 only. Each round ends with a traceback whose error line is
 *    `RuntimeError: hostile round N done`; the next round comes `roundGapMs` (default 2000) later.
 *  - HTTP on the unit's port: /health 200 (with garbage bodies), /v1/models now valid, now not,
 *    and /v1/completions never a real answer: JSON nested 100k levels, `choices` of null, an
 *    error object carrying choices, HTML, binary, a 2 MB body, an event stream, a body cut off
 *    mid-JSON, a malformed status line.
 *  - `systemctl show` (bin/systemctl.js) and `nvidia-smi` (bin/nvidia-smi.js) append garbage
 *    lines (garbageShowText, garbageGpuText) while sim.json says hostile.
 * Node.js builtins only; deterministic for a seed.
 */
const fs = require('fs');
const http = require('http');
const path = require('path');
const { writeAll, ts } = require('./log');

/*
 * The watch's journal follow cuts the address fields on the host with a loop of shell builtins,
 * whose `read` takes a byte per system call: 0.5-2 s of the host's CPU per MB, several times that
 * on a busy machine. The big lines are sized so that round 1 is read in seconds, not minutes (4 MiB
 * is still 85 times journald's LineMax and 256 times what the log grammar reads of a line), and
 * the rounds are paced so that the journal is written more slowly than that loop reads it.
 */
const BIG_LINE = 4 * 1024 * 1024;
const BINARY_BYTES = 256 * 1024;

function isHostile(stateDir) {
  try {
    const sim = JSON.parse(fs.readFileSync(path.join(stateDir, 'sim.json'), 'utf8'));
    return Boolean(sim && sim.hostile);
  } catch {
    return false;
  }
}

/** mulberry32: a small seeded generator. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(rand, n) {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256) === 0x0a ? 0xff : Math.floor(rand() * 256);
  return b;
}

const repeatTo = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
const NINES = '9'.repeat(400);

/** One round of journal output: Buffers go to stderr (one journal entry each), `{ direct }` straight into the journal. */
function journalRound(rand, round) {
  const p = `[${ts()} TP0] `;
  const items = [
    randomBytes(rand, 300),
    Buffer.from([
      0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0x00, 0x0d, 0x1b, 0x5b, 0x33, 0x31, 0x6d,
    ]),
    `${p}Multi-thread loading shards: 100% Completed | ${NINES}/${NINES} [00:01<00:00]`,
    `${p}Capturing batches (bs=1 avail_mem=1 GB): 100%|##| ${NINES}/${NINES} [00:01<00:00]`,
    `[${ts()}${repeatTo(' TP1', 40_000)}`,
    `${p}Load weight end. elapsed=${repeatTo(' ', 40_000)}x`,
    repeatTo('Capturing batches: 1%|', 40_000),
    `(EngineCore_DP0 pid=1) Capturing CUDA graphs (bar ${round}-${Math.floor(rand() * 1e9)}): 50%|#| 1/2`,
    repeatTo('The client socket has timed out after x while trying to connect to (a', 40_000),
    `${p}Traceback (most recent call last):`,
    `${p}RuntimeError: ${repeatTo('boom ', 30_000)}`,
    `\u001b[31m\ud83d\ude00 ${'\u202e'.repeat(50)} ${repeatTo('\t\r', 200)}`,
    'sglang.service: Main process exited, code=exited, status=0/SUCCESS',
    `${p}The server is fired up and ready to roll!`,
  ];
  // The big ones come once (see BIG_LINE).
  if (round === 1) {
    items.push({ direct: `${p}Load weight end. elapsed=${repeatTo(' ', BIG_LINE)}x` });
    items.push({ direct: repeatTo('The client socket has timed out after x while trying to connect to (a', BIG_LINE) });
    items.push({
      direct: randomBytes(rand, BINARY_BYTES).toString('latin1').replace(/\n/g, ' '),
    });
  }
  items.push('Traceback (most recent call last):', `RuntimeError: hostile round ${round} done`);
  return items;
}

function appendDirect(msg) {
  const root = process.env.KIMI_SIM_ROOT;
  const unit = process.env.KIMI_SIM_UNIT;
  if (!root || !unit) return;
  const usec = Date.now() * 1000;
  fs.appendFileSync(
    path.join(root, 'journal', `${unit}.jsonl`),
    JSON.stringify({ t: usec, pid: process.pid, ident: 'python3', unit, msg }) + '\n',
  );
}

const deep = (n) => '['.repeat(n) + ']'.repeat(n);

/** The answers /v1/completions gives in turn: none of them a real completion. */
function completionAnswers(rand) {
  const json = 'application/json';
  return [
    { status: 200, type: json, body: deep(100_000) },
    { status: 200, type: json, body: `{"choices":[{"text":${deep(100_000)}}]}` },
    { status: 200, type: json, body: '{"choices":[null]}' },
    { status: 200, type: json, body: '{"choices":"hi"}' },
    { status: 200, type: json, body: '{"error":{"message":"x"},"choices":[{"text":"ok"}]}' },
    { status: 200, type: 'text/html', body: '<!doctype html><html><body>{"choices":[{"text":"ok"}]}</body></html>' },
    { status: 200, type: json, body: randomBytes(rand, 2000) },
    { status: 200, type: json, body: `{"choices":[{"text":"${repeatTo('a', 2 * 1024 * 1024)}"}]}` },
    { status: 200, type: 'text/event-stream', body: 'data: {"choices":[{"text":"ok"}]}\n\ndata: [DONE]\n\n' },
    { status: 200, type: json, body: '{"choices":[{"text":5}]}' },
    { status: 200, type: json, body: '{"choices":[{"message":{"content":null}}]}' },
    { raw: 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n{"choices":[{"te' },
    { raw: `HTTP/1.1 ${NINES} \u0000\r\n\r\n` },
    { status: 200, type: `application/json; ${repeatTo('x', 4000)}`, body: '{"choices":[{"text":"ok"},' },
  ];
}

function answer(res, a) {
  if (a.raw !== undefined) {
    res.socket.end(a.raw);
    return;
  }
  res.writeHead(a.status, { 'Content-Type': a.type });
  res.end(a.body);
}

function serveHttp(port, host, rand) {
  const completions = completionAnswers(rand);
  const counts = new Map();
  const next = (key) => {
    const n = counts.get(key) || 0;
    counts.set(key, n + 1);
    return n;
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = (req.url || '').split('?')[0];
      const n = next(url);
      if (url === '/health' || url === '/health_generate') {
        const bodies = ['', deep(100_000), randomBytes(rand, 100), '{"status":"ok"'];
        return answer(res, {
          status: n % 5 === 4 ? 503 : 200,
          type: 'application/json',
          body: bodies[n % bodies.length],
        });
      }
      if (url === '/v1/models') {
        const models = [
          '{"object":"list","data":[{"id":"hostile"}]}',
          deep(100_000),
          '{"data":[null,5,{"id":""}]}',
          randomBytes(rand, 64),
        ];
        return answer(res, { status: 200, type: 'application/json', body: models[n % models.length] });
      }
      if (url === '/v1/completions' || url === '/v1/chat/completions' || url === '/generate')
        return answer(res, completions[n % completions.length]);
      return answer(res, { status: 404, type: 'application/octet-stream', body: randomBytes(rand, 200) });
    });
  });
  server.listen(port, host);
  return server;
}

async function main(args, cfg) {
  const opts = typeof cfg.hostile === 'object' && cfg.hostile !== null ? cfg.hostile : {};
  const rand = rng(Number(opts.seed) || 17);
  const gapMs = Number(opts.gapMs) || 20;
  const roundGapMs = Number.isFinite(Number(opts.roundGapMs)) ? Number(opts.roundGapMs) : 2000;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => process.exit(0));
  writeAll(2, `[${ts()}] server_args=ServerArgs(model_path='${args.model_path}', hostile=True)\n`);
  serveHttp(args.port, args.host, rand);
  writeAll(2, `INFO:     Uvicorn running on http://${args.host}:${args.port} (Press CTRL+C to quit)\n`);
  for (let round = 1; ; round++) {
    for (const item of journalRound(rand, round)) {
      if (Buffer.isBuffer(item)) fs.writeSync(2, Buffer.concat([item, Buffer.from('\n')]));
      else if (typeof item === 'string') writeAll(2, `${item}\n`);
      else appendDirect(item.direct);
      await sleep(gapMs);
    }
    await sleep(roundGapMs);
  }
}

/** Lines `systemctl show` appends after the unit's own properties while hostile (the first value of a key wins). */
function garbageShowText() {
  const rand = rng(Date.now() & 0xffff);
  return [
    `MainPID=${NINES}`,
    'NRestarts=1e308',
    'ExecMainStartTimestamp=@' + NINES,
    'ExecStart={ path=/x ; argv[]=/x \\UFFFFFFFF "unbalanced ; ignore_errors=no }',
    `Description=${repeatTo('x ', 200_000)}`,
    randomBytes(rand, 200).toString('latin1').replace(/\n/g, ' '),
    '=no key',
    'toString=x',
    '',
  ].join('\n');
}

/** Lines `nvidia-smi` prints among its readings while hostile (index 0 lines start a sampler round). */
function garbageGpuText() {
  const rand = rng(Date.now() & 0xffff);
  return [
    `0, ${NINES}, ${NINES}`,
    `1, [N/A], [N/A]`,
    `0,1${repeatTo(' ', 20_000)}x,2`,
    randomBytes(rand, 100).toString('latin1').replace(/\n/g, ' '),
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
    '',
  ].join('\n');
}

module.exports = { main, isHostile, garbageShowText, garbageGpuText };
