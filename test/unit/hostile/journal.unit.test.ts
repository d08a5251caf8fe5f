import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
import type { JournalEvent } from '../../../src/engine/events';
import { DedupeByRank, JournalReader, parseJournalMessage } from '../../../src/engine/logReader';
import { parseJournalJsonLine } from '../../../src/target/journalctl';
import {
  assertLinear,
  check,
  junk,
  MiB,
  numberWords,
  repeatTo,
  retainedHeap,
  TEN_MB,
  timed,
  wordSoup,
} from './hostileInputs';

/** The words the journal and vLLM recognisers look for (prefixes, phases, errors, systemd). */
const JOURNAL_WORDS = [
  '[2025-03-08 12:29:21 TP1] ',
  '[2025-03-08 12:29:21 DP7 TP7 EP7] ',
  '[2025-03-08 12:29:21] ',
  '(EngineCore_DP0 pid=165) ',
  '(VllmWorker rank=5 pid=50999) ',
  'INFO 03-07 10:00:00 [loader.py:12] ',
  'ERROR 03-07 10:00:00 core.py:948] ',
  ' ',
  '\r',
  '\n',
  '\t',
  '\x1b[0m',
  'Init torch distributed begin.',
  'Load weight begin.',
  'Load weight end. ',
  'elapsed=',
  'mem usage=',
  'avail mem=',
  'type=',
  'dtype=',
  ' GB',
  ', ',
  'Multi-thread loading shards: ',
  'Loading safetensors checkpoint shards: ',
  '% Completed | ',
  '/',
  '|',
  ':',
  '%|',
  '█',
  'KV Cache is allocated. ',
  '#tokens: ',
  'KV size: ',
  'Capture cuda graph begin',
  'Capture cuda graph end.',
  'Capture cuda graph bs [',
  ']',
  '1, 2, 4',
  'Capturing batches (bs=8 avail_mem=1.0 GB): ',
  'Capturing CUDA graphs (decode, FULL): ',
  'Graph capturing finished in 3 secs',
  'Uvicorn running on http://0.0.0.0:30000',
  'Application startup complete.',
  'The server is fired up and ready to roll!',
  'Starting vLLM API server 0 on http://x',
  'Traceback (most recent call last):',
  'RuntimeError: ',
  'torch.OutOfMemoryError: CUDA out of memory',
  'CUDA error: ',
  'Received sigquit',
  'Killed',
  'Exit code: -9',
  'sglang.service: Main process exited, code=exited, status=1/FAILURE',
  "sglang.service: Failed with result 'exit-code'",
  'Started x',
  'Stopping x',
  'EngineCore failed to start.',
  'Available KV cache memory: ',
  'GPU KV cache size: ',
  'Model loading took ',
  ' GiB and ',
  ' seconds',
  'Timed out after ',
  ' seconds waiting for clients. ',
  ' clients joined',
  'The client socket has timed out after ',
  ' while trying to connect to (',
  ')',
  'Watchdog caught collective operation timeout',
  '127.0.0.1:5 - "GET /health HTTP/1.1" 200',
  '9'.repeat(400),
  'NaN',
  'Infinity',
  '-1',
  '1e308',
];
const line = wordSoup(JOURNAL_WORDS);

function wellFormed(events: readonly JournalEvent[]): void {
  for (const e of events) {
    if (e.type === 'shards' || e.type === 'cudaGraphBatches') {
      assert.ok(Number.isFinite(e.done) && Number.isFinite(e.total), JSON.stringify(e));
    }
    if (e.type === 'error') assert.equal(typeof e.text, 'string');
  }
}

/** Lines of 10 MB aimed at each recogniser's regex: long runs where a regex could backtrack. */
const ADVERSARIAL: ReadonlyArray<[string, string]> = [
  ['spaces then a letter (splitMessage trailing-space trim)', repeatTo(' ', TEN_MB) + 'x'],
  [
    'Load weight end. elapsed= then spaces (its field regex)',
    'Load weight end. elapsed=' + repeatTo(' ', TEN_MB) + 'x',
  ],
  ['an SGLang prefix whose rank tags never close', '[2025-03-08 12:29:21' + repeatTo(' TP1', TEN_MB)],
  ['a vLLM process tag that never closes', '(EngineCore' + repeatTo(' a=b', TEN_MB)],
  ['a vLLM logger prefix with a 10 MB file name', 'INFO 03-07 10:00:00 [' + repeatTo('a', TEN_MB)],
  ['"Capturing batches" repeated', repeatTo('Capturing batches', TEN_MB)],
  ['"Capturing batches: 1%|" repeated', repeatTo('Capturing batches: 1%|', TEN_MB)],
  ['"a:1 - " repeated (access log)', repeatTo('a:1 - ', TEN_MB)],
  ['word characters then "Erro" (exception line)', repeatTo('a.', TEN_MB) + 'Erro'],
  ['"Error" repeated', repeatTo('Error', TEN_MB)],
  [
    '"The client socket has timed out after x while trying to connect to (" repeated',
    repeatTo('The client socket has timed out after x while trying to connect to (a', TEN_MB),
  ],
  [
    '"Timed out after 1 seconds waiting for clients. " repeated',
    repeatTo('Timed out after 1 seconds waiting for clients. 1/', TEN_MB),
  ],
  ['"Using cache directory: " then 10 MB', 'Using cache directory: ' + repeatTo('x ', TEN_MB)],
  ['"Capturing CUDA graphs (" that never closes', 'Capturing CUDA graphs (' + repeatTo('x', TEN_MB)],
  ['"KV Cache is allocated. KV size: " then digits', 'KV Cache is allocated. KV size: ' + repeatTo('1', TEN_MB)],
  ['10 MB of \\r', repeatTo('\r', TEN_MB)],
  [
    '10 MB of random bytes as UTF-8',
    Buffer.from(Array.from({ length: TEN_MB }, (_, i) => (i * 7919 + 13) % 256)).toString('utf8'),
  ],
];

describe('hostile input: the journal (journalctl -o json, SGLang and vLLM lines)', () => {
  it('parseJournalJsonLine: any line, JSON or not, gives undefined or a well-formed entry', () => {
    const field = fc.oneof(
      junk,
      fc.array(fc.integer({ min: -5, max: 300 }), { maxLength: 50 }),
      fc.jsonValue({ maxDepth: 3 }),
      numberWords,
    );
    const entry = fc.record(
      {
        MESSAGE: field,
        __REALTIME_TIMESTAMP: field,
        __MONOTONIC_TIMESTAMP: field,
        _PID: field,
        SYSLOG_IDENTIFIER: field,
      },
      { requiredKeys: [] },
    );
    const lineArb = fc.oneof(
      junk,
      entry.map((e) => JSON.stringify(e)),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      wordSoup(['{', '}', '"MESSAGE":', '[', ']', ',', '1', '"x"', 'null']),
    );
    check(
      1702,
      fc.property(lineArb, (l) => {
        const e = parseJournalJsonLine(l);
        if (e === undefined) return;
        assert.equal(typeof e.message, 'string');
        assert.ok(Number.isFinite(e.at));
        if (e.pid !== undefined) assert.ok(Number.isSafeInteger(e.pid) && e.pid > 0, `pid ${e.pid}`);
        if (e.monotonicUs !== undefined) assert.ok(Number.isFinite(e.monotonicUs) && e.monotonicUs > 0);
      }),
    );
  });

  it('a journal entry with a 10 MB binary MESSAGE (a byte array) is decoded once, in linear time', function () {
    this.timeout(120_000);
    const entryOf = (n: number): string =>
      JSON.stringify({
        MESSAGE: Array.from({ length: n }, (_, i) => (i * 31) % 256),
        __REALTIME_TIMESTAMP: '1764481212000000',
        _PID: '42',
      });
    const json = entryOf(TEN_MB);
    const e = timed('parseJournalJsonLine: 10 MiB MESSAGE as a byte array (36 MB of JSON)', () =>
      parseJournalJsonLine(json),
    );
    assert.equal(e?.pid, 42);
    assert.ok((e?.message.length ?? 0) > 0);
    const lines = { 1: entryOf(TEN_MB / 10), 10: json };
    assertLinear('parseJournalJsonLine: a 1 MiB binary MESSAGE, then 10 MiB', (scale) =>
      parseJournalJsonLine(lines[scale]),
    );
  });

  it("parseJournalMessage: no exception, well-formed events, and `ready` only from SGLang's ready line", () => {
    check(
      1703,
      fc.property(fc.array(fc.oneof(line, junk), { maxLength: 20 }), (lines) => {
        const ctx = { inTraceback: false };
        for (const l of lines) {
          const events = parseJournalMessage(l, ctx);
          wellFormed(events);
          if (events.some((e) => e.type === 'ready'))
            assert.ok(l.includes('The server is fired up and ready to roll!'), l);
        }
      }),
    );
  });

  for (const [what, text] of ADVERSARIAL) {
    it(`a 10 MB line: ${what}`, function () {
      this.timeout(120_000);
      const events = timed(`JournalReader.read: ${what}`, () => new JournalReader().read(text, 1_000));
      wellFormed(events);
      assert.ok(!events.some((e) => e.type === 'ready'));
    });
  }

  it('JournalReader: 100k random rank-tagged lines within one de-duplication window keep its memory bounded', function () {
    this.timeout(120_000);
    const reader = new JournalReader();
    const feed = (from: number, n: number): void => {
      for (let i = from; i < from + n; i++) {
        reader.read(`[2025-03-08 12:29:21 TP${i % 8}] line ${i} ${'x'.repeat(i % 200)}`, 1_000);
        reader.read(`(EngineCore_DP0 pid=1) Capturing CUDA graphs (bar ${i}): 50%|█| ${i % 7}/7`, 1_000);
      }
    };
    feed(0, 10_000);
    const before = retainedHeap();
    timed('JournalReader: 200k rank-tagged lines in one 10 s window', () => feed(10_000, 100_000));
    const grown = retainedHeap() - before;
    assert.ok(grown < 16 * MiB, `retained ${Math.round(grown / MiB)} MiB more after 100k lines`);
  });

  it("DedupeByRank: 100k distinct 10 kB lines from many ranks keep memory bounded, and a second rank's copy is still dropped", function () {
    this.timeout(120_000);
    const d = new DedupeByRank();
    const before = retainedHeap();
    for (let i = 0; i < 100_000; i++) d.accept(`[2025-03-08 12:29:21 TP${i % 64}] ${i} ${'y'.repeat(10_000)}`, 5_000);
    const grown = retainedHeap() - before;
    assert.ok(grown < 64 * MiB, `retained ${Math.round(grown / MiB)} MiB after 100k lines of 10 kB`);
    assert.equal(d.accept('[2025-03-08 12:29:21 TP0] Load weight begin.', 5_000), true);
    assert.equal(d.accept('[2025-03-08 12:29:21 TP1] Load weight begin.', 5_000), false);
  });
});
