// The simulator's replay of published logs (test/gpu-host/sglang-sim/replay-plan.js, docs/replay.md):
// timestamps of every format the logs carry, the compressed schedule, where HTTP opens and the
// server is ready, how the process ends, the witnesses; then the whole corpus through the plan,
// and two short runs of the player (replay.js) as a real process.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { waitFor } from '../util/waitFor';
import { freePort } from '../util/freePort';

interface Step {
  atMs: number;
  realMs?: number;
  line: string;
  shards?: { done: number; total: number };
  markers: string[];
  http: boolean;
  ready: boolean;
}
interface Plan {
  engine: string;
  end: { kind: string; code?: number; signal?: string };
  steps: Step[];
  httpAt: number;
  readyAt: number;
  durationMs: number;
  realSpanMs: number;
}
interface Header {
  engine: string;
  outcome: string;
  exitCode?: number | null;
  exitSignal?: string;
  id?: string;
  class?: string;
}
interface Witness {
  weights: number;
  init: boolean;
  kv: boolean;
  graph: boolean;
}

const SIM_DIR = path.join(__dirname, '..', 'gpu-host', 'sglang-sim');
const P = require(path.join(SIM_DIR, 'replay-plan.js')) as {
  DEFAULT_OPTIONS: Record<string, number>;
  parseTimestamp(line: string, year?: number): { ms: number; family: string; year: boolean } | null;
  logYear(lines: string[]): number;
  planReplay(lines: string[], header: Header, opts?: object): Plan;
  splitLines(text: string): string[];
  withAddress(line: string, host: string, port: number): string;
  witnessesAfter(steps: Step[]): Witness[];
  endOf(header: Header): Plan['end'];
};
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'real-logs');

const utc = (s: string) => Date.parse(`${s}Z`);
const SG: Header = { engine: 'sglang', outcome: 'failed', exitCode: 1 };
const gaps = (plan: Plan) => plan.steps.map((s, i) => (i === 0 ? s.atMs : s.atMs - plan.steps[i - 1]!.atMs));

describe('replay of published logs: the plan (replay-plan.js)', () => {
  describe('timestamps', () => {
    it('reads SGLang, Python logging, vLLM and glog/c10 stamps, with any rank tag or process prefix', () => {
      const cases: [string, string, string][] = [
        ['[2025-03-08 12:29:21 TP1] Capture cuda graph begin.', '2025-03-08T12:29:21', 'sglang'],
        ['[2025-02-21 21:52:50] server_args=ServerArgs(...)', '2025-02-21T21:52:50', 'sglang'],
        ['[2026-02-26 06:25:15 DP7 TP7 EP7] Scheduler hit an exception:', '2026-02-26T06:25:15', 'sglang'],
        ['\x1b[1;36m[2025-11-03 10:00:01 TP0]\x1b[0m Load weight end.', '2025-11-03T10:00:01', 'sglang'],
        [
          '2025-05-02 16:14:33,560 - INFO - flashinfer.jit: Prebuilt kernels not found',
          '2025-05-02T16:14:33.560',
          'pylog',
        ],
        [
          '(APIServer pid=1) INFO 03-18 06:54:54 [api_server.py:1354] vLLM API server version 0.13.0',
          '2025-03-18T06:54:54',
          'vllm',
        ],
        ['ERROR 07-07 15:19:51 [core.py:515] EngineCore failed to start.', '2025-07-07T15:19:51', 'vllm'],
        [
          '[rank6]:[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] [Rank 6] Watchdog caught collective operation timeout',
          '2025-02-07T01:29:36.730',
          'glog',
        ],
        [
          '(EngineCore_DP0 pid=165) [rank0]:W0318 06:57:13.573000 165 torch/_inductor/utils.py:1703] Not enough SMs',
          '2025-03-18T06:57:13.573',
          'glog',
        ],
        ['W1120 08:01:02.123456 1234567 rdma_transport.cpp:99] retry', '2025-11-20T08:01:02.123', 'glog'],
      ];
      for (const [line, iso, family] of cases) {
        const t = P.parseTimestamp(line, 2025);
        assert.ok(t, line);
        assert.equal(new Date(t.ms).toISOString(), new Date(utc(iso)).toISOString(), line);
        assert.equal(t.family, family, line);
      }
    });

    it("a log line glued to the end of a tqdm bar: the line's time is the glued stamp (its newline comes with it)", () => {
      const t = P.parseTimestamp(
        'Capturing batches (avail_mem=0.00 GB):   0%|   | 0/4 [00:00<?, ?it/s]2025-05-02 16:14:34,907 - INFO - flashinfer.jit: Loading JIT ops',
      );
      assert.equal(t?.ms, utc('2025-05-02T16:14:34.907'));
      assert.equal(
        P.parseTimestamp('...it/s][2025-03-08 12:29:21 TP1] Capture cuda graph begin')?.ms,
        utc('2025-03-08T12:29:21'),
      );
    });

    it('no stamp: tracebacks, tqdm bars, blank lines, impossible dates', () => {
      for (const line of [
        'Traceback (most recent call last):',
        '  File "x.py", line 3, in <module>',
        '',
        'Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:08<00:08,  8.96s/it]',
        '[2025-13-01 00:00:00] month 13',
        'INFO:     127.0.0.1:1 - "GET /health HTTP/1.1" 200 OK',
      ]) {
        assert.equal(P.parseTimestamp(line), null, line);
      }
    });

    it('yearless stamps borrow the first year the log states, else 2000', () => {
      assert.equal(
        P.logYear(['INFO 02-21 21:52:48 __init__.py:190] platform', '[2025-02-21 21:52:50] server_args=...']),
        2025,
      );
      assert.equal(P.logYear(['INFO 02-21 21:52:48 x']), 2000);
    });
  });

  describe('the schedule', () => {
    const opts = { speed: 10, maxGapMs: 1000, defaultGapMs: 2, leadMs: 0 };

    it("gaps are the log's own, divided by speed, capped at maxGapMs", () => {
      const plan = P.planReplay(
        [
          '[2025-01-01 00:00:00] a',
          '[2025-01-01 00:00:05] b (5 s later)',
          '[2025-01-01 00:00:05] c (same second)',
          '[2025-01-01 00:10:05] d (10 min of silence)',
        ],
        SG,
        opts,
      );
      assert.deepEqual(gaps(plan), [0, 500, 2, 1000]);
      assert.deepEqual(
        plan.steps.map((s) => s.realMs),
        [0, 5000, 5000, 605000],
      );
      assert.equal(plan.realSpanMs, 605000);
      assert.equal(plan.durationMs, 1502);
    });

    it('lines without a stamp follow after a small gap, and the next stamp is not delayed by them', () => {
      const plan = P.planReplay(
        ['[2025-01-01 00:00:00] a', 'Traceback (most recent call last):', '  File "x"', '[2025-01-01 00:00:01] b'],
        SG,
        opts,
      );
      assert.deepEqual(gaps(plan), [0, 2, 2, 96]);
      assert.equal(plan.steps[3]!.atMs, 100);
    });

    it('a stamp earlier than the last one (ranks out of order) is written at once and does not move the clock back', () => {
      const plan = P.planReplay(
        ['[2025-01-01 00:00:10 TP0] a', '[2025-01-01 00:00:09 TP1] b', '[2025-01-01 00:00:11 TP0] c'],
        SG,
        opts,
      );
      assert.deepEqual(gaps(plan), [0, 2, 100]);
    });

    it('a format on another clock (vLLM-style lines a day off inside an SGLang log) keeps its offset: no day-long gap', () => {
      const plan = P.planReplay(
        [
          '[2025-02-21 21:52:50] server_args=...',
          'INFO 02-22 21:52:51 __init__.py:190] Automatically detected platform cuda.',
          '[2025-02-21 21:52:52] Init torch distributed begin.',
          'INFO 02-22 21:52:55 x.py:1] later',
        ],
        SG,
        opts,
      );
      // its first line is taken as "now" on the log's clock; its later lines keep their spacing
      assert.deepEqual(gaps(plan), [0, 2, 200, 200]);
    });

    it('leadMs before the first line; speed and gaps validated', () => {
      assert.equal(P.planReplay(['[2025-01-01 00:00:00] a'], SG, { leadMs: 40 }).steps[0]!.atMs, 40);
      assert.throws(() => P.planReplay(['a'], SG, { speed: 0 }), /speed must be a positive number/);
      assert.throws(() => P.planReplay(['a'], SG, { maxGapMs: -1 }), /maxGapMs must be a non-negative number/);
      assert.throws(
        () => P.planReplay(['a'], { engine: 'tgi', outcome: 'failed' }),
        /engine must be one of sglang, vllm/,
      );
    });
  });

  describe('HTTP, readiness, the end', () => {
    const sglangReady = [
      '[2025-05-02 16:14:58] Capture cuda graph end.',
      '[2025-05-02 16:14:59] INFO:     Application startup complete.',
      '[2025-05-02 16:14:59] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)',
      '[2025-05-02 16:15:37] The server is fired up and ready to roll!',
    ];

    it('SGLang: HTTP opens at uvicorn\'s first line, ready at "fired up"', () => {
      const plan = P.planReplay(sglangReady, { engine: 'sglang', outcome: 'ready' });
      assert.equal(plan.httpAt, 1);
      assert.equal(plan.readyAt, 3);
      assert.deepEqual(plan.end, { kind: 'serve' });
    });

    it('vLLM: HTTP opens (and it is ready) at "Starting vLLM API server", before "Application startup complete"', () => {
      const plan = P.planReplay(
        [
          '(APIServer pid=1) INFO 03-18 06:57:59 [api_server.py:1428] Starting vLLM API server 0 on http://0.0.0.0:8000',
          '(APIServer pid=1) INFO:     Application startup complete.',
        ],
        { engine: 'vllm', outcome: 'ready' },
      );
      assert.equal(plan.httpAt, 0);
      assert.equal(plan.readyAt, 0);
    });

    it('a warm-up failure after HTTP is up: HTTP opens, never ready, killed by its signal', () => {
      const plan = P.planReplay(
        [...sglangReady.slice(0, 3), '[2024-12-13 01:47:34] Initialization failed. warmup error: Traceback', 'Killed'],
        { engine: 'sglang', outcome: 'failed', exitCode: 137, exitSignal: 'SIGKILL' },
      );
      assert.equal(plan.httpAt, 1);
      assert.equal(plan.readyAt, -1);
      assert.deepEqual(plan.end, { kind: 'signal', signal: 'SIGKILL' });
    });

    it('the end follows the header: exit code (1 when unknown), signal, hang, serve', () => {
      assert.deepEqual(P.endOf({ engine: 'sglang', outcome: 'failed', exitCode: 2 }), { kind: 'exit', code: 2 });
      assert.deepEqual(P.endOf({ engine: 'sglang', outcome: 'failed', exitCode: null }), { kind: 'exit', code: 1 });
      assert.deepEqual(P.endOf({ engine: 'vllm', outcome: 'failed', exitSignal: 'KILL' }), {
        kind: 'signal',
        signal: 'SIGKILL',
      });
      assert.deepEqual(P.endOf({ engine: 'sglang', outcome: 'hang', exitCode: null }), { kind: 'hang' });
      assert.deepEqual(P.endOf({ engine: 'vllm', outcome: 'ready' }), { kind: 'serve' });
    });

    it("the HTTP lines announce the replay's own address; other lines are left as they are", () => {
      assert.equal(
        P.withAddress(
          '[x] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)',
          '127.0.0.1',
          4321,
        ),
        '[x] INFO:     Uvicorn running on http://127.0.0.1:4321 (Press CTRL+C to quit)',
      );
      assert.equal(
        P.withAddress(
          '(APIServer pid=1) INFO 03-18 06:57:59 [api_server.py:1428] Starting vLLM API server 0 on http://[::]:8000',
          '0.0.0.0',
          9,
        ),
        '(APIServer pid=1) INFO 03-18 06:57:59 [api_server.py:1428] Starting vLLM API server 0 on http://0.0.0.0:9',
      );
      const other = 'HTTP Request: GET https://huggingface.co:443/api "HTTP/1.1 200 OK"';
      assert.equal(P.withAddress(other, '127.0.0.1', 1), other);
    });
  });

  describe('witnesses', () => {
    it('weights follow the shard lines and never go back; later phases mean all weights are in', () => {
      const plan = P.planReplay(
        [
          '[2025-05-02 16:13:42] Init torch distributed ends. mem usage=0.00 GB',
          'Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]',
          'Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:10<00:10,  5.0s/it]',
          'Multi-thread loading shards:  25% Completed | 1/4 [00:11<00:30,  1.0it/s]',
          '[2025-05-02 16:14:33] KV Cache is allocated. #tokens: 15387',
          '[2025-05-02 16:14:58] Capture cuda graph end. Time elapsed: 24.85 s.',
        ],
        SG,
      );
      const w = P.witnessesAfter(plan.steps);
      assert.deepEqual(
        w.map((x) => x.weights),
        [0, 0, 0.5, 0.5, 1, 1],
      );
      assert.deepEqual(
        w.map((x) => x.init),
        [true, true, true, true, true, true],
      );
      assert.deepEqual(
        w.map((x) => x.kv),
        [false, false, false, false, true, true],
      );
      assert.deepEqual(
        w.map((x) => x.graph),
        [false, false, false, false, false, true],
      );
    });

    it('a hang before the weights moves nothing: no weights, no GPU phase', () => {
      const lines = P.splitLines(fs.readFileSync(path.join(FIXTURES, 'sg-3765-stuck.log'), 'utf8'));
      const w = P.witnessesAfter(P.planReplay(lines, { engine: 'sglang', outcome: 'hang' }).steps);
      assert.deepEqual(w[w.length - 1], { weights: 0, init: false, kv: false, graph: false });
    });
  });

  describe('every fixture of the corpus', () => {
    const headers = fs
      .readdirSync(FIXTURES)
      .filter((n) => n.endsWith('.json'))
      .map((n) => JSON.parse(fs.readFileSync(path.join(FIXTURES, n), 'utf8')) as Header & { id: string });
    const opts = { speed: 100, maxGapMs: 1500 };

    it('plans, in order, no gap over maxGapMs, its end from its header, readiness where a ready log has it', () => {
      assert.ok(headers.length >= 22, `${headers.length} fixtures`);
      for (const h of headers) {
        const lines = P.splitLines(fs.readFileSync(path.join(FIXTURES, `${h.id}.log`), 'utf8'));
        const plan = P.planReplay(lines, h, opts);
        assert.equal(plan.steps.length, lines.length, h.id);
        const g = gaps(plan);
        assert.ok(
          g.every((x) => x >= 0 && x <= opts.maxGapMs),
          `${h.id}: gaps ${Math.min(...g)}..${Math.max(...g)}`,
        );
        assert.equal(
          plan.end.kind,
          { ready: 'serve', hang: 'hang' }[h.outcome] ?? (h.exitSignal ? 'signal' : 'exit'),
          h.id,
        );
        if (plan.end.kind === 'exit') assert.equal(plan.end.code, h.exitCode ?? 1, h.id);
        if (plan.readyAt >= 0) assert.ok(plan.httpAt >= 0 && plan.httpAt <= plan.readyAt, `${h.id}: ready before HTTP`);
        if (h.outcome !== 'ready')
          assert.ok(!plan.steps.some((s) => s.ready), `${h.id}: a ready line in a log that did not get ready`);
      }
    });
  });
});

// ---- the player, as a process ----------------------------------------------------------------

function healthStatus(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

describe('replay of published logs: the player (replay.js) as a process', function () {
  // Generous: a node process and its readers start slowly on a busy machine; nothing here is timed.
  this.timeout(60_000);
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-replay-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  function run(
    id: string,
    port: number,
    onStderr?: (all: Buffer) => void,
    o: { model?: string; started?: (pid: number) => void; speed?: number; maxGapMs?: number } = {},
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: Buffer }> {
    const replay = { log: id, speed: o.speed ?? 100, maxGapMs: o.maxGapMs ?? 300 };
    fs.writeFileSync(path.join(root, 'sim.json'), JSON.stringify({ replay }));
    return new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [
          path.join(SIM_DIR, 'main.js'),
          '-m',
          'sglang.launch_server',
          '--model-path',
          o.model ?? path.join(root, 'none'),
          '--tp',
          '2',
          '--port',
          String(port),
        ],
        { env: { ...process.env, KIMI_SIM_ROOT: root }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      o.started?.(child.pid!);
      const parts: Buffer[] = [];
      child.stderr.on('data', (d: Buffer) => {
        parts.push(d);
        onStderr?.(Buffer.concat(parts));
      });
      child.on('close', (code, signal) => resolve({ code, signal, stderr: Buffer.concat(parts) }));
    });
  }

  /** Bytes read (rchar) by the children of pid: the reader processes. */
  function childrenRead(pid: number): number {
    let kids: string[] = [];
    try {
      kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      return 0;
    }
    let n = 0;
    for (const k of kids) {
      try {
        n += Number(/^rchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${k}/io`, 'utf8'))?.[1] ?? 0);
      } catch {
        /* gone */
      }
    }
    return n;
  }

  it('a ready log: the shards are read and GPU memory shown as its lines go, /health 200 after "fired up", SIGTERM ends it', async () => {
    const model = path.join(root, 'model');
    fs.mkdirSync(model);
    for (let i = 1; i <= 4; i++)
      fs.writeFileSync(path.join(model, `model-0000${i}-of-00004.safetensors`), Buffer.alloc(2 << 20, i));
    const port = await freePort();
    let pid = 0;
    const done = run('sg-zhdoc-qwen3-06b-ready', port, undefined, {
      model,
      started: (p) => {
        pid = p;
      },
    });
    await waitFor(async () => (await healthStatus(port)) === 200, { timeoutMs: 30_000, message: '/health 200' });
    // The readers are separate processes: on a busy machine they may still be reading when the log says ready.
    await waitFor(() => childrenRead(pid) >= 4 * (2 << 20), {
      timeoutMs: 30_000,
      message: `the readers read 8 MiB (last ${childrenRead(pid)} bytes)`,
    });
    const gpu = JSON.parse(fs.readFileSync(path.join(root, 'gpu.json'), 'utf8')) as {
      pid: number;
      gpus: { memoryUsedMiB: number }[];
    };
    assert.equal(gpu.pid, pid);
    assert.equal(gpu.gpus.length, 2);
    assert.ok(
      gpu.gpus.every((g) => g.memoryUsedMiB > 60 * 1024),
      JSON.stringify(gpu.gpus),
    );
    process.kill(pid, 'SIGTERM');
    const r = await done;
    assert.equal(r.code, 0);
    assert.equal(r.stderr.toString('utf8').split('\n').length - 1, 30, 'every line of the log, nothing else');
  });

  it("an argparse error: the log's bytes on stderr, exit 2", async () => {
    const r = await run('sg-12818-kimi-argparse', await freePort());
    assert.equal(r.code, 2);
    assert.deepEqual(r.stderr, fs.readFileSync(path.join(FIXTURES, 'sg-12818-kimi-argparse.log')));
  });

  it("a warm-up failure: connection refused before uvicorn's line, /health 503 after it, then killed by SIGKILL", async () => {
    const port = await freePort();
    const seen: (number | string)[] = [];
    let probing = Promise.resolve();
    let httpLineSeen = false;
    // 4 s of replay between the HTTP line and the kill (the log's 2 minutes, capped): time for a
    // busy machine to schedule the probe, which only has to land inside it.
    const paced = { speed: 25, maxGapMs: 4000 };
    const done = run(
      'sg-2468-warmup-502',
      port,
      (all) => {
        const text = all.toString('utf8');
        if (!httpLineSeen && /Application startup complete/.test(text)) {
          httpLineSeen = true;
          // the port opens at that line (listen() completes just after it is written): the first answer is 503
          probing = waitFor(
            async () => {
              const status = await healthStatus(port);
              return status === 'ECONNREFUSED' ? undefined : status;
            },
            { timeoutMs: 30_000, intervalMs: 20, message: 'the port open after the HTTP line' },
          ).then((s) => void seen.push(s));
        }
      },
      paced,
    );
    seen.push(await healthStatus(port)); // before any line: closed
    const r = await done;
    await probing;
    assert.equal(r.signal, 'SIGKILL');
    assert.equal(seen[0], 'ECONNREFUSED');
    assert.deepEqual(seen.slice(1), [503]);
    assert.match(
      r.stderr.toString('utf8'),
      new RegExp(`Uvicorn running on http://127\\.0\\.0\\.1:${port} \\(Press CTRL\\+C to quit\\)`),
    );
  });
});
