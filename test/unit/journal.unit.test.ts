import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { quote, shellLine } from '../../src/transport/shell';
import { DedupeByRank, JournalReader, parseJournalMessage } from '../../src/engine/logReader';
import { journalFollowCommand, journalTailCommand, parseJournalJsonLine } from '../../src/target/journalctl';
import { stripPrefix } from '../../src/engine/logGrammar';
import type { JournalEvent } from '../../src/engine/events';

const P = '[2026-11-30 05:40:12 TP0] ';

describe('journal: SGLang load lines (reference section 3)', () => {
  const cases: Array<[string, JournalEvent[]]> = [
    [`${P}Init torch distributed begin.`, [{ type: 'phase', phase: 'starting' }]],
    [`${P}Init torch distributed ends. elapsed=0.53 s, mem usage=0.09 GB`, []],
    [`${P}Load weight begin. avail mem=50.69 GB`, [{ type: 'phase', phase: 'loading weights' }]],
    [
      'Multi-thread loading shards:  25% Completed | 16/64 [01:02<03:06,  0.26it/s]',
      [{ type: 'shards', percent: 25, done: 16, total: 64 }],
    ],
    [
      `${P}Load weight end. elapsed=213.48 s, type=DeepseekV3ForCausalLM, avail mem=14.93 GB, mem usage=68.76 GB.`,
      [
        {
          type: 'weightsLoaded',
          elapsedSeconds: 213.48,
          memUsageGB: 68.76,
          availMemGB: 14.93,
          modelType: 'DeepseekV3ForCausalLM',
        },
      ],
    ],
    [
      `${P}Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=14.93 GB, mem usage=68.76 GB.`,
      [
        {
          type: 'weightsLoaded',
          memUsageGB: 68.76,
          availMemGB: 14.93,
          modelType: 'DeepseekV3ForCausalLM',
          dtype: 'torch.bfloat16',
        },
      ],
    ],
    [`${P}Using KV cache dtype: torch.bfloat16`, [{ type: 'phase', phase: 'allocating KV cache' }]],
    [
      `${P}KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB`,
      [
        { type: 'phase', phase: 'allocating KV cache' },
        { type: 'kvCache', tokens: 524288, sizeGB: 17.16 },
      ],
    ],
    [`${P}Memory pool end. avail mem=8.98 GB`, [{ type: 'phase', phase: 'allocating KV cache' }]],
    [
      `${P}Capture cuda graph begin. This can take up to several minutes. avail mem=8.04 GB`,
      [{ type: 'phase', phase: 'capturing CUDA graphs' }],
    ],
    [
      `${P}Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24]`,
      [
        { type: 'phase', phase: 'capturing CUDA graphs' },
        { type: 'cudaGraphBatches', done: 0, total: 7 },
      ],
    ],
    [
      'Capturing batches (bs=24 avail_mem=4.00 GB):  43%|████▎     | 3/7 [00:01<00:01,  2.9it/s]',
      [{ type: 'cudaGraphBatches', done: 3, total: 7 }],
    ],
    [
      `${P}Capture cuda graph end. Time elapsed: 41.24 s. mem usage=3.09 GB. avail mem=4.89 GB.`,
      [{ type: 'phase', phase: 'capturing CUDA graphs' }, { type: 'graphsCaptured' }],
    ],
    [
      `[2026-11-30 05:44:01] max_total_num_tokens=524288, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=128, context_len=262144, available_gpu_mem=4.89 GB`,
      [],
    ],
    ['INFO:     Started server process [2403371]', []],
    ['INFO:     Waiting for application startup.', []],
    ['INFO:     Application startup complete.', [{ type: 'phase', phase: 'warming up' }, { type: 'httpUp' }]],
    [
      'INFO:     Uvicorn running on http://127.0.0.1:30001 (Press CTRL+C to quit)',
      [
        { type: 'phase', phase: 'warming up' },
        { type: 'httpUp', url: 'http://127.0.0.1:30001' },
      ],
    ],
    ['INFO:     127.0.0.1:33050 - "GET /model_info HTTP/1.1" 200 OK', []],
    ['INFO:     127.0.0.1:33064 - "POST /generate HTTP/1.1" 200 OK', []],
    ['INFO:     127.0.0.1:33064 - "GET /RuntimeError: CUDA error HTTP/1.1" 404 Not Found', []],
    ['[2026-11-30 05:45:00] The server is fired up and ready to roll!', [{ type: 'ready' }]],
  ];
  for (const [line, expected] of cases) {
    it(JSON.stringify(line.slice(0, 70)), () => assert.deepEqual(parseJournalMessage(line), expected));
  }

  it('older shard desc, with and without a rank prefix', () => {
    assert.deepEqual(
      parseJournalMessage('Loading safetensors checkpoint shards: 100% Completed | 64/64 [03:33<00:00,  3.33s/it]'),
      [{ type: 'shards', percent: 100, done: 64, total: 64 }],
    );
    assert.deepEqual(
      parseJournalMessage(`${P}Loading safetensors checkpoint shards:   0% Completed | 0/64 [00:00<?, ?it/s]`),
      [{ type: 'shards', percent: 0, done: 0, total: 64 }],
    );
  });

  it('takes every tqdm update of one message joined by \\r, and one that starts with \\r', () => {
    const msg =
      'Multi-thread loading shards:   2% Completed | 1/64 [00:04<04:12,  4.0s/it]\r' +
      'Multi-thread loading shards:   3% Completed | 2/64 [00:08<04:08,  4.0s/it]\r' +
      'Multi-thread loading shards:   5% Completed | 3/64 [00:12<04:04,  4.0s/it]';
    assert.deepEqual(
      parseJournalMessage(msg).map((e) => (e.type === 'shards' ? e.done : -1)),
      [1, 2, 3],
    );
    assert.deepEqual(
      parseJournalMessage('\rMulti-thread loading shards:  25% Completed | 16/64 [01:02<03:06,  0.26it/s]'),
      [{ type: 'shards', percent: 25, done: 16, total: 64 }],
    );
    const batches =
      'Capturing batches (bs=24 avail_mem=4.00 GB):  14%|█▍        | 1/7 [00:00<00:03,  1.9it/s]\rCapturing batches (bs=16 avail_mem=3.90 GB):  29%|██▊       | 2/7 [00:01<00:02,  2.1it/s]\r';
    assert.deepEqual(parseJournalMessage(batches), [
      { type: 'cudaGraphBatches', done: 1, total: 7 },
      { type: 'cudaGraphBatches', done: 2, total: 7 },
    ]);
  });

  it('strips DP/TP/EP prefixes', () => {
    assert.deepEqual(stripPrefix('[2026-11-30 05:40:12 DP1 TP3 EP3] Load weight begin. avail mem=50.69 GB'), {
      text: 'Load weight begin. avail mem=50.69 GB',
      prefixed: true,
      record: true,
      ranks: 'DP1 TP3 EP3',
    });
    assert.deepEqual(stripPrefix('[2026-11-30 05:40:12] The server is fired up and ready to roll!'), {
      text: 'The server is fired up and ready to roll!',
      prefixed: true,
      record: true,
    });
    assert.deepEqual(parseJournalMessage('[2026-11-30 05:40:12 DP0 TP7 EP7] Load weight begin. avail mem=50.69 GB'), [
      { type: 'phase', phase: 'loading weights' },
    ]);
  });
});

describe('journal: errors', () => {
  it('a traceback, its frames and the OOM line at its end', () => {
    const reader = new JournalReader();
    const lines = [
      '[2026-11-30 05:41:00 TP3] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/opt/sglang/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2312, in run_scheduler_process',
      '    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)',
      '                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.10 GiB of which 1.02 GiB is free.',
      '',
      '[2026-11-30 05:41:00] Received sigquit from a child process. It usually means the child failed.',
      'Killed',
    ];
    const events = lines.flatMap((l, i) => reader.read(l, 1000 + i));
    assert.deepEqual(events, [
      { type: 'error', text: 'Scheduler hit an exception: Traceback (most recent call last):', fatal: true },
      { type: 'error', text: lines[4], fatal: true },
      { type: 'error', text: 'Received sigquit from a child process. It usually means the child failed.', fatal: true },
      { type: 'error', text: 'Killed', fatal: true },
    ]);
  });

  it('a generic exception line counts after a traceback, or alone on stderr (its traceback cut off), not right after another', () => {
    // A journal tail, a rank's header dropped as a duplicate, an excerpt: the traceback's head may be missing.
    assert.deepEqual(parseJournalMessage('ValueError: invalid literal'), [
      { type: 'error', text: 'ValueError: invalid literal', fatal: false },
    ]);
    assert.deepEqual(parseJournalMessage('[2026-01-01 00:00:00 TP0] ValueError: invalid literal'), []);
    const reader = new JournalReader();
    assert.deepEqual(reader.read('Traceback (most recent call last):', 1), [
      { type: 'error', text: 'Traceback (most recent call last):', fatal: false },
    ]);
    assert.deepEqual(reader.read('  File "x.py", line 1, in <module>', 2), []);
    assert.deepEqual(reader.read('ValueError: invalid literal', 3), [
      { type: 'error', text: 'ValueError: invalid literal', fatal: false },
    ]);
    // the traceback is over
    assert.deepEqual(reader.read('KeyError: x', 4), []);
  });

  it('CUDA errors, warm-up failure, failed health check', () => {
    assert.deepEqual(parseJournalMessage('RuntimeError: CUDA error: an illegal memory access was encountered'), [
      { type: 'error', text: 'RuntimeError: CUDA error: an illegal memory access was encountered', fatal: true },
    ]);
    assert.deepEqual(
      parseJournalMessage(
        '[2026-11-30 05:46:00] Initialization failed. warmup error: Traceback (most recent call last):',
      ),
      [{ type: 'error', text: 'Initialization failed. warmup error: Traceback (most recent call last):', fatal: true }],
    );
    assert.deepEqual(parseJournalMessage('[2026-11-30 05:46:00] Initialization failed. warmup error: timed out'), [
      { type: 'error', text: 'Initialization failed. warmup error: timed out', fatal: true },
    ]);
    assert.deepEqual(
      parseJournalMessage(
        "[2026-11-30 06:00:00] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds.",
      ),
      [
        {
          type: 'error',
          text: "Health check failed. Server couldn't get a response from detokenizer for last 20 seconds.",
          fatal: false,
        },
      ],
    );
  });
});

describe('journal: systemd lines', () => {
  const u = 'sglang-k26-ddtree.service';
  const cases: Array<[string, string]> = [
    [`Started ${u} - SGLang Kimi K2.6.`, 'started'],
    ['Started SGLang Kimi K2.6.', 'started'],
    [`Stopping ${u} - SGLang Kimi K2.6...`, 'stopping'],
    [`Stopped ${u} - SGLang Kimi K2.6.`, 'stopped'],
    [`${u}: Deactivated successfully.`, 'stopped'],
    [`${u}: Failed with result 'exit-code'.`, 'failed'],
    [`${u}: Scheduled restart job, restart counter is at 3.`, 'scheduled-restart'],
  ];
  for (const [text, what] of cases) {
    it(text, () => assert.deepEqual(parseJournalMessage(text), [{ type: 'systemd', what, text }]));
  }
  it('main process exited with a failure is also a fatal error', () => {
    const text = `${u}: Main process exited, code=exited, status=1/FAILURE`;
    assert.deepEqual(parseJournalMessage(text), [
      { type: 'systemd', what: 'exited', text },
      { type: 'error', text, fatal: true },
    ]);
    const ok = `${u}: Main process exited, code=exited, status=0/SUCCESS`;
    assert.deepEqual(parseJournalMessage(ok), [{ type: 'systemd', what: 'exited', text: ok }]);
    const killed = `${u}: Main process exited, code=killed, status=9/KILL`;
    assert.equal(parseJournalMessage(killed).length, 2);
  });
  it('uvicorn "Started server process" is not systemd', () => {
    assert.deepEqual(parseJournalMessage('INFO:     Started server process [2403371]'), []);
  });
});

describe('journal: JSON entries', () => {
  it('string MESSAGE, realtime timestamp, pid', () => {
    const line = JSON.stringify({
      __REALTIME_TIMESTAMP: '1795930812123456',
      _PID: '2403371',
      SYSLOG_IDENTIFIER: 'python',
      MESSAGE: '[2026-11-30 05:40:12 TP0] Load weight begin. avail mem=50.69 GB',
    });
    assert.deepEqual(parseJournalJsonLine(line), {
      message: '[2026-11-30 05:40:12 TP0] Load weight begin. avail mem=50.69 GB',
      at: 1795930812123,
      pid: 2403371,
      identifier: 'python',
    });
  });
  it('byte-array MESSAGE (tqdm \\r, UTF-8 bar) decodes and parses', () => {
    const text = '\rCapturing batches (bs=24 avail_mem=4.00 GB):  43%|████▎     | 3/7 [00:01<00:01,  2.9it/s]';
    const line = JSON.stringify({ __REALTIME_TIMESTAMP: '1795930812000000', MESSAGE: [...Buffer.from(text, 'utf8')] });
    const entry = parseJournalJsonLine(line);
    assert.equal(entry?.message, text);
    assert.deepEqual(parseJournalMessage(entry?.message ?? ''), [{ type: 'cudaGraphBatches', done: 3, total: 7 }]);
  });
  it('null MESSAGE, garbage and non-objects are skipped', () => {
    assert.equal(parseJournalJsonLine(JSON.stringify({ MESSAGE: null, __REALTIME_TIMESTAMP: '1' })), undefined);
    assert.equal(parseJournalJsonLine('-- No entries --'), undefined);
    assert.equal(parseJournalJsonLine('{"MESSAGE": "x"'), undefined);
    assert.equal(parseJournalJsonLine('[1,2]'), undefined);
  });
});

describe('journal: commands', () => {
  it('follow and tail are quoted', () => {
    const follow = journalFollowCommand('sglang-k26-ddtree.service', 1795930812999);
    assert.ok(
      follow.argv[2]!.startsWith(
        '{ s=$( { { journalctl -u "$1" -f -a -o json --output-fields=MESSAGE,_PID,SYSLOG_IDENTIFIER --no-pager --since "$2"; echo "$?" >&3; } | ',
      ),
    );
    assert.deepEqual(follow.argv.slice(3), ['sh', 'sglang-k26-ddtree.service', '@1795930812']);
    assert.match(
      shellLine(journalFollowCommand("x'; touch /tmp/canary; '", 0)),
      / sh 'x'\\''; touch \/tmp\/canary; '\\''' @0$/,
    );
    assert.equal(
      shellLine(journalTailCommand("x'; touch /tmp/canary; '", 50)),
      `journalctl -u 'x'\\''; touch /tmp/canary; '\\''' -n 50 -a -o json --no-pager`,
    );
  });
});

describe('journal: the follow as /bin/sh runs it', function () {
  // Real shells, sed and stdbuf run here: the limit guards against a hang, it measures nothing, and a
  // loaded machine can take seconds to start a pipeline.
  this.timeout(60000);
  const run = (shell: string, lines: readonly string[], exit: number) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-journalctl-'));
    try {
      // A journalctl on PATH that prints what the real one prints with -o json, then exits.
      const body = lines.map((l) => `printf '%s\\n' ${quote(l)}`).join('\n');
      fs.writeFileSync(
        path.join(dir, 'journalctl'),
        `#!/bin/sh\n${body}\necho 'No journal files were opened' >&2\nexit ${exit}\n`,
        { mode: 0o755 },
      );
      return spawnSync(shell, ['-c', shellLine(journalFollowCommand('a.service', 0))], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  const entry = {
    __CURSOR:
      's=6c1a7b2e4f5d4c3b9a8e7f6d5c4b3a21;i=1f3a;b=3b1f0c7e9a2d4c5b8e6f1a2b3c4d5e6f;m=2a1b3c;t=5f2e1d0c9b8a7;x=9e8d7c6b5a493827',
    __REALTIME_TIMESTAMP: '1796048943123456',
    __MONOTONIC_TIMESTAMP: '2777002',
    __SEQNUM: '8003',
    __SEQNUM_ID: '6c1a7b2e4f5d4c3b9a8e7f6d5c4b3a21',
    _BOOT_ID: '3b1f0c7e9a2d4c5b8e6f1a2b3c4d5e6f',
    MESSAGE: 'a "__CURSOR":"quoted" text \\ with a backslash',
    _PID: '52',
    SYSLOG_IDENTIFIER: 'python3',
  };
  for (const shell of ['/bin/sh', 'bash']) {
    it(`${shell}: the address fields are cut, the entry read as before, journalctl's exit status kept`, () => {
      const last = { MESSAGE: [27, 91, 65], _PID: '1', _BOOT_ID: 'b' };
      const result = run(shell, [JSON.stringify(entry), JSON.stringify(last)], 1);
      assert.equal(result.status, 1);
      assert.equal(result.stderr.trim(), 'No journal files were opened');
      const out = result.stdout.trim().split('\n');
      assert.deepEqual(JSON.parse(out[0]!), {
        __REALTIME_TIMESTAMP: '1796048943123456',
        __MONOTONIC_TIMESTAMP: '2777002',
        MESSAGE: entry.MESSAGE,
        _PID: '52',
        SYSLOG_IDENTIFIER: 'python3',
      });
      assert.deepEqual(parseJournalJsonLine(out[0]!), parseJournalJsonLine(JSON.stringify(entry)));
      assert.deepEqual(JSON.parse(out[1]!), { MESSAGE: [27, 91, 65], _PID: '1' });
      assert.ok(
        out[0]!.length < JSON.stringify(entry).length / 2 + 60,
        `${out[0]!.length} of ${JSON.stringify(entry).length} bytes`,
      );
      assert.equal(run(shell, [], 0).status, 0);
    });
  }
  it('a 10 MB line comes through whole, its address fields cut', () => {
    // Well under a second with block reads; a loop reading a byte per system call takes a minute here.
    const big = { ...entry, MESSAGE: 'x "y" '.repeat((10 * 1024 * 1024) / 6) };
    const result = run('/bin/sh', [JSON.stringify(big)], 0);
    assert.equal(result.status, 0);
    const { __CURSOR, _BOOT_ID, __SEQNUM, __SEQNUM_ID, ...kept } = big;
    assert.ok(__CURSOR && _BOOT_ID && __SEQNUM && __SEQNUM_ID);
    assert.equal(result.stdout, `${JSON.stringify(kept)}\n`);
  });
  it('each line is written as soon as journalctl prints it, not when its buffer fills', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-journalctl-'));
    const fifo = path.join(dir, 'go');
    try {
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      // Prints one entry, then waits until the test has read it.
      fs.writeFileSync(
        path.join(dir, 'journalctl'),
        `#!/bin/sh\nprintf '%s\\n' ${quote(JSON.stringify(entry))}\nread x < ${quote(fifo)}\nexit 0\n`,
        { mode: 0o755 },
      );
      const child = spawn('/bin/sh', ['-c', shellLine(journalFollowCommand('a.service', 0))], {
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const first = await new Promise<string>((resolve) => {
        let text = '';
        child.stdout.on('data', (d: Buffer) => {
          text += d.toString('utf8');
          if (text.includes('\n')) resolve(text);
        });
      });
      fs.writeFileSync(fifo, 'go\n');
      assert.equal(JSON.parse(first.trim()).MESSAGE, entry.MESSAGE);
      assert.equal(await exited, 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('journal: DedupeByRank', () => {
  it('a line repeated by every TP rank counts once', () => {
    const reader = new JournalReader(undefined, 5000);
    const events = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((r) =>
      reader.read(
        `[2026-11-30 05:40:1${r % 3} TP${r}] KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB`,
        1000 + r,
      ),
    );
    assert.equal(events.filter((e) => e.type === 'kvCache').length, 1);
  });
  it('the same rank repeating itself, or a line outside the window, is kept', () => {
    const d = new DedupeByRank(1000);
    assert.equal(d.accept('[2026-11-30 05:40:12 TP0] Health check failed', 0), true);
    assert.equal(d.accept('[2026-11-30 05:40:12 TP1] Health check failed', 10), false);
    assert.equal(d.accept('[2026-11-30 05:40:13 TP0] Health check failed', 20), true);
    assert.equal(d.accept('[2026-11-30 05:40:15 TP1] Health check failed', 3000), true);
    assert.equal(d.accept('no prefix', 1), true);
    assert.equal(d.accept('no prefix', 2), true);
  });
});
