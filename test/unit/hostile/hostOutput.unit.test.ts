import { strict as assert } from 'node:assert';
import { parserPlanner } from '../../../src/engine/engine';
import * as fc from 'fast-check';
import { SamplerReader } from '../../../src/monitor/watch/sampler';
import { planComposeChange } from '../../../src/target/docker/composeParsers';
import {
  containerServiceStatus,
  endedFromEvents,
  logLineEntry,
  parseInspect,
} from '../../../src/target/docker/dockerInspect';
import type { ServiceStatus } from '../../../src/target/target';
import { diffArgv } from '../../../src/engine/argvDiff';
import { parseExecValue, parseSystemctlCat, renderDropIn } from '../../../src/target/systemd/execStartSyntax';
import { planParserChange } from '../../../src/engine/parserPlan';
import { parseMemAvailable, parseResidency, parseWarmLine } from '../../../src/host/pageCache';
import {
  parseExecStartProperty,
  parseShow,
  parseSystemdTimestamp,
  toServiceStatus,
} from '../../../src/target/systemd/systemd';
import { parseDiscovery } from '../../../src/target/systemd/unitDiscovery';
import { check, deepArray, junk, numberWords, repeatTo, TEN_MB, timed, wordSoup } from './hostileInputs';

const CHOICE = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };
const finiteOrAbsent = (n: number | undefined): boolean => n === undefined || Number.isFinite(n);

function wellFormedUnit(u: ServiceStatus): void {
  assert.ok(Number.isSafeInteger(u.mainPid) && Number.isSafeInteger(u.nRestarts), JSON.stringify(u));
  for (const t of [
    u.execMainStartedAt,
    u.execMainExitedAt,
    u.activeEnteredAt,
    u.execMainStartedMonotonicUs,
    u.execMainStatus,
  ])
    assert.ok(finiteOrAbsent(t), JSON.stringify(u));
  if (u.execMainPid !== undefined) assert.ok(Number.isSafeInteger(u.execMainPid));
}

const SHOW_KEYS = [
  'Id',
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'ExecMainPID',
  'ExecMainStatus',
  'ExecMainCode',
  'ExecMainStartTimestampMonotonic',
  'ExecMainStartTimestamp',
  'ExecMainExitTimestamp',
  'NRestarts',
  'Result',
  'ActiveEnterTimestamp',
  'ExecStart',
  'Description',
  'FragmentPath',
  'toString',
  'constructor',
];
const showValue = fc.oneof(
  junk,
  numberWords,
  fc.constantFrom(
    'active',
    'failed',
    'auto-restart',
    'Mon 2026-11-30 05:40:12 UTC',
    'Mon 9999-99-99 99:99:99 +9999',
    '@' + '9'.repeat(400),
    '@1e5',
    'n/a',
    '{ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m sglang.launch_server --model-path /m ; ignore_errors=no }',
  ),
);
const showText = fc
  .array(
    fc.oneof(
      fc.tuple(fc.constantFrom(...SHOW_KEYS), showValue).map(([k, v]) => `${k}=${v}`),
      junk,
      fc.constant(''),
    ),
    { maxLength: 30 },
  )
  .map((l) => l.join('\n'));

const EXEC_WORDS = [
  '/usr/bin/python3',
  'python3',
  '-m',
  'sglang.launch_server',
  'vllm',
  'serve',
  '--model-path',
  '/m',
  '--tool-call-parser',
  '--reasoning-parser=x',
  ' ',
  ' ; ',
  '\\',
  '\\\n',
  '"',
  "'",
  '%i',
  '$X',
  '${Y}',
  '$$',
  '%%',
  '\\x41',
  '\\UFFFFFFFF',
  '\\u00e9',
  '\\777',
  '-',
  '@',
  '+',
  '!!',
  '\t',
  '\n',
];
const execValue = fc.oneof(wordSoup(EXEC_WORDS), junk);
const unitText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '[Service]',
        '[Unit]',
        '# /etc/systemd/system/x.service',
        '',
        'ExecStart=',
        '# comment',
        '; comment',
      ),
      execValue.map((v) => `ExecStart=${v}`),
      junk,
    ),
    { maxLength: 12 },
  )
  .map((l) => l.join('\n'));

/** The words systemd's ExecStart grammar gives a meaning to, none unbalanced (a whole-value quote stays open). */
const ARG_WORDS = EXEC_WORDS.filter((w) => w !== '"' && w !== "'" && w !== '\\\n');
const SERVER_HEADS = [
  ['/usr/bin/python3', '-m', 'sglang.launch_server'],
  ['python3', '-m', 'sglang.launch_server'],
  ['/opt/venv/bin/sglang', 'serve'],
  ['/usr/local/bin/vllm', 'serve'],
];
/** One argument as it may be written: a bare word of the grammar, or any text quoted (C escapes for what cannot stand in quotes). */
const launchArg = fc.oneof(
  wordSoup(ARG_WORDS).filter((w) => !/["']/.test(w) && !w.endsWith('\\') && !/[\r\n]/.test(w)),
  fc.oneof(fc.string({ maxLength: 40 }), junk).map(
    (t) =>
      '"' +
      [...t]
        .map((ch) => {
          const code = ch.codePointAt(0) ?? 0;
          if (ch === '\\' || ch === '"') return '\\' + ch;
          if (code < 0x20 || code === 0x7f) return '\\x' + code.toString(16).padStart(2, '0');
          return ch;
        })
        .join('') +
      '"',
  ),
  fc.constantFrom(
    '--model-path',
    '/models/kimi',
    '--tool-call-parser',
    'qwen25',
    '--reasoning-parser=deepseek-r1',
    '--tp',
    '8',
    '%i',
    '$X',
    '${Y}',
    '$$',
    '%%',
  ),
);
/** An ExecStart value that starts an SGLang or vLLM server (an optional prefix, a launch head, hostile arguments). */
const launchValue = fc
  .tuple(fc.constantFrom('', '-', '+', '@'), fc.constantFrom(...SERVER_HEADS), fc.array(launchArg, { maxLength: 12 }))
  .map(([prefix, head, args]) => [prefix + head[0], ...head.slice(1), ...args].join(' '));

/** `{"a":{"a":...}}` nested `depth` levels (valid JSON). */
const deepObject = (depth: number): string => '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);
/** `docker inspect` lines (valid JSON) with a value nested 100k levels deep in each field parseInspect reads. */
const DEEP_INSPECT: readonly string[] = (() => {
  const deep = [deepArray(100_000), deepObject(100_000)];
  const fields = ['Id', 'Name', 'Path', 'Args', 'Mounts', 'RestartCount', 'RestartPolicy', 'State', 'Config'];
  const state = ['Status', 'Pid', 'ExitCode', 'StartedAt', 'FinishedAt', 'OOMKilled', 'Health'];
  return [
    ...fields.map((f, i) => `{"Id":"c1","State":{"Status":"running","Pid":42},"${f}":${deep[i % 2]}}`),
    ...state.map((f, i) => `{"Id":"c1","State":{"Status":"running","Pid":42,"${f}":${deep[i % 2]}}}`),
    `{"Id":"c1","Args":[${deepArray(100_000)}],"Mounts":[${deepObject(100_000)}]}`,
  ];
})();

describe("hostile input: what the host's commands print", () => {
  it('systemctl show: any output gives a well-formed unit status (finite times, safe-integer PIDs)', () => {
    check(
      1731,
      fc.property(showText, (text) => {
        wellFormedUnit(toServiceStatus(parseShow(text)));
        parseExecStartProperty(parseShow(text)['ExecStart'] ?? '');
      }),
    );
  });

  it('systemd timestamps: finite or undefined, whatever the text', () => {
    check(
      1732,
      fc.property(
        fc.oneof(
          showValue,
          wordSoup(['@', '9', '.', '-', ':', ' ', 'UTC', '+01:00', 'Mon ', '2026-11-30 ', '05:40:12']),
        ),
        (v) => {
          assert.ok(finiteOrAbsent(parseSystemdTimestamp(v)), v);
        },
      ),
    );
  });

  it('ExecStart (systemctl show and systemctl cat): parsing never throws but for an unbalanced quote', () => {
    check(
      1733,
      fc.property(unitText, execValue, (text, value) => {
        parseExecStartProperty(value);
        try {
          parseExecValue(value);
        } catch (e) {
          assert.match((e as Error).message, /^unbalanced/);
        }
        const unit = parseSystemctlCat(text);
        for (const w of unit.warnings) assert.match(w, /unbalanced/);
      }),
    );
  });

  it('a launch command of hostile words, in a unit among hostile lines: the planned drop-in reads back as the planned command', () => {
    let readBack = 0;
    check(
      1739,
      fc.property(unitText, launchValue, unitText, (before, launch, after) => {
        // Blank lines end whatever continuation the random lines left open; `after` may reset or add ExecStart.
        const unit = parseSystemctlCat(`${before}\n\n[Service]\nExecStart=${launch}\n\n${after}`);
        const own = parseSystemctlCat(`[Service]\nExecStart=${launch}\n`);
        assert.deepEqual(own.warnings, [], launch);
        assert.ok(
          own.commands.length >= 1 && SERVER_HEADS.some((h) => h.every((w, i) => own.commands[0]!.argv[i] === w)),
          launch,
        );
        for (const c of [...own.commands.slice(0, 1), ...unit.commands]) {
          const plan = planParserChange(c.argv, CHOICE);
          if (plan.kind !== 'change' || /^[-@:+!|]/.test(plan.newArgv[0] ?? '') || plan.newArgv[0] === '') continue;
          const dropIn = renderDropIn(plan.newArgv, 'kimi', { keepReferences: c.references });
          const back = parseSystemctlCat(dropIn).commands;
          assert.deepEqual(
            back.map((b) => b.argv),
            [plan.newArgv],
            dropIn,
          );
          if (c === own.commands[0]) readBack++;
        }
      }),
    );
    // Every run: the launch command itself was planned, rendered and read back.
    assert.equal(readBack, 100);
  });

  it('ExecStart of 100k words, 50k continuation lines, \\U escapes past U+10FFFF: read and diffed in linear time', function () {
    this.timeout(120_000);
    const words = Array.from({ length: 100_000 }, (_, i) => `--w${i}`);
    const argv = ['/usr/bin/python3', '-m', 'sglang.launch_server', ...words];
    const plan = timed('planParserChange on an ExecStart of 100k words (diff included)', () =>
      planParserChange(argv, CHOICE),
    );
    assert.equal(plan.kind, 'change');
    assert.ok(
      timed('diffArgv of 100k lines against 100k + 2', () => diffArgv(argv, [...argv, '--x', 'y'])).endsWith(
        '+ --x y\n',
      ),
    );
    const cat = '[Service]\nExecStart=/usr/bin/python3 \\\n' + '  -m \\\n'.repeat(50_000) + '  sglang.launch_server\n';
    assert.equal(
      timed('parseSystemctlCat of 50k continuation lines', () => parseSystemctlCat(cat)).commands[0]?.argv.length,
      50_002,
    );
    assert.deepEqual(parseExecValue('/bin/x \\UFFFFFFFF')[0]?.argv, ['/bin/x', 'UFFFFFFFF']);
    assert.equal(
      timed('planParserChange on 100k words "-/python"', () =>
        planParserChange(Array(100_000).fill('-/python'), CHOICE),
      ).kind,
      'unsupported',
    );
    const show = timed('parseExecStartProperty of a 10 MB argv[]', () =>
      parseExecStartProperty(`{ path=/x ; argv[]=/x ${repeatTo('a "b ', TEN_MB)} ; ignore_errors=no }`),
    );
    assert.ok(show.length > 0);
  });

  it('unit discovery: any systemctl show output, and a key repeated 200k times in linear time', function () {
    this.timeout(60_000);
    check(
      1734,
      fc.property(
        fc.array(fc.oneof(showText, unitText), { maxLength: 4 }).map((b) => b.join('\n\n')),
        (text) => {
          for (const u of parseDiscovery(text)) assert.ok(u.url.startsWith('http://') && u.argv.length > 0);
        },
      ),
    );
    const repeated = 'Id=a.service\n' + 'ExecStart={ path=/x ; argv[]=/x ; ignore_errors=no }\n'.repeat(200_000);
    assert.deepEqual(
      timed('parseDiscovery: ExecStart repeated 200k times', () => parseDiscovery(repeated)),
      [],
    );
  });

  it("the sampler's lines: signals with finite figures only", () => {
    const n = fc.oneof(fc.nat().map(String), fc.constantFrom('9'.repeat(400), '18446744073709551615', '0'));
    const list = fc.array(fc.oneof(n, fc.constantFrom('[N/A]', '')), { maxLength: 4 }).map((l) => l.join(','));
    const record = fc
      .tuple(
        fc.constantFrom('0', '1'),
        n,
        n,
        n,
        n,
        fc.oneof(n, fc.constant('-')),
        fc.constantFrom('', ' L0', ' L1'),
        fc.option(list),
        fc.option(list),
      )
      .map(
        ([a, p, u, rb, rc, cg, l, used, totals]) =>
          `S ${a} ${p} ${u} ${rb} ${rc} ${cg}${l}${used === null ? '' : ` U${used}`}${totals === null ? '' : ` T${totals}`}`,
      );
    const sampler = fc.oneof(
      record,
      fc.tuple(n, n).map(([f, b]) => `M ${f} ${b}`),
      wordSoup(['S ', '1 ', '0 ', '-', ' L1', ' U', ' T', '100,200', ',', 'M ', '9'.repeat(400), ' ']),
    );
    check(
      1736,
      fc.property(fc.array(fc.oneof(sampler, junk), { maxLength: 20 }), (lines) => {
        const reader = new SamplerReader(() => 1e12);
        for (const l of lines) {
          const round = reader.read(l, 1);
          if (round.modelSize)
            assert.ok(Number.isFinite(round.modelSize.bytes) && Number.isFinite(round.modelSize.files));
          for (const s of round.signals) {
            if (s.kind === 'io') assert.ok(Number.isFinite(s.readBytes) && finiteOrAbsent(s.coldBytes), l);
            if (s.kind === 'gpu') assert.ok(Number.isFinite(s.usedMiB) && Number.isFinite(s.totalMiB), l);
          }
        }
      }),
    );
  });

  it('page cache and process I/O output: finite, resident <= total, no exception', () => {
    const residency = wordSoup([
      'method fincore',
      'method mincore',
      'method none',
      '\n',
      '-1 ',
      '100 ',
      '200 ',
      '/m/a.safetensors',
      'error ',
      'fincore: x',
      '\\x41',
      '\\x',
      '9'.repeat(400),
      ' ',
    ]);
    check(
      1737,
      fc.property(fc.oneof(residency, junk), (text) => {
        const r = parseResidency(text);
        if (r.residentBytes !== undefined)
          assert.ok(
            Number.isFinite(r.residentBytes) &&
              Number.isFinite(r.totalBytes ?? NaN) &&
              r.residentBytes <= (r.totalBytes ?? 0),
            text,
          );
        assert.ok(finiteOrAbsent(parseMemAvailable(text)));
        const w = parseWarmLine(text);
        if (w && 'pid' in w) assert.ok(Number.isSafeInteger(w.pid));
      }),
    );
  });

  it('docker inspect, events and logs: any output gives a result and a well-formed unit status', function () {
    this.timeout(60_000);
    const anyJson = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constant(null),
      fc.constant(JSON.parse(deepArray(3_000)) as unknown),
    );
    const inspect = fc
      .record(
        {
          Id: anyJson,
          Name: anyJson,
          Path: anyJson,
          Args: fc.oneof(anyJson, fc.array(anyJson, { maxLength: 3 })),
          Mounts: fc.oneof(
            anyJson,
            fc.array(fc.oneof(anyJson, fc.record({ Source: anyJson, Destination: anyJson })), { maxLength: 3 }),
          ),
          RestartCount: anyJson,
          RestartPolicy: anyJson,
          State: fc.oneof(
            anyJson,
            fc.record(
              {
                Status: fc.oneof(anyJson, fc.constantFrom('running', 'exited', 'restarting', 'dead')),
                Running: anyJson,
                Pid: fc.oneof(anyJson, fc.constantFrom(1e308, -1, 2 ** 53)),
                ExitCode: anyJson,
                StartedAt: fc.oneof(anyJson, fc.constantFrom('2026-11-30T14:29:02.324652777Z', '9999-99-99T99:99:99Z')),
                FinishedAt: anyJson,
                OOMKilled: anyJson,
                Health: anyJson,
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o));
    const events = fc
      .array(
        fc.oneof(
          fc
            .record(
              {
                Action: anyJson,
                status: anyJson,
                time: anyJson,
                timeNano: anyJson,
                Actor: fc.oneof(
                  anyJson,
                  fc.record({ Attributes: fc.oneof(anyJson, fc.record({ exitCode: anyJson })) }),
                ),
              },
              { requiredKeys: [] },
            )
            .map((o) => JSON.stringify(o)),
          junk,
        ),
        { maxLength: 4 },
      )
      .map((l) => l.join('\n'));
    check(
      1738,
      fc.property(fc.oneof(inspect, junk), events, junk, (text, ev, log) => {
        const r = parseInspect(text);
        const unit = containerServiceStatus(r, 'c');
        assert.equal(unit.manager, 'docker');
        if (r.kind === 'found') endedFromEvents(r.container, ev);
        const entry = logLineEntry(log);
        if (entry) assert.ok(Number.isFinite(entry.at));
      }),
    );
  });

  it('docker inspect of valid JSON nested 100k levels deep in every field it reads: found, and a well-formed status', function () {
    this.timeout(60_000);
    for (const text of DEEP_INSPECT) {
      const r = timed(`parseInspect of ${text.length} chars nested 100k deep`, () => parseInspect(text));
      assert.equal(r.kind, 'found', JSON.stringify(r).slice(0, 300));
      const unit = containerServiceStatus(r, 'c');
      assert.equal(unit.manager, 'docker');
      wellFormedUnit(unit);
      if (r.kind === 'found') endedFromEvents(r.container, text);
    }
  });

  it('compose files: random YAML, deep nesting and alias bombs give a plan or a reason, not an exception', function () {
    this.timeout(60_000);
    const yamlish = wordSoup([
      'services:\n',
      '  s:\n',
      '    command: ',
      '[',
      ']',
      '"',
      "'",
      'python -m sglang.launch_server --model-path /m',
      ', ',
      '\n      - ',
      '&a ',
      '*a',
      '<<: ',
      '{',
      '}',
      ': ',
      '# c',
      '\t',
      '---\n',
      '!!binary ',
      '|\n',
      '>-\n',
    ]);
    check(
      1739,
      fc.property(fc.oneof(yamlish, junk), (text) => {
        const plan = planComposeChange(text, 'compose.yaml', 's', parserPlanner(CHOICE));
        if (plan.kind === 'change') assert.ok(plan.newArgv.includes('--tool-call-parser'));
      }),
    );
    const bomb =
      'a: &a ["x","x","x","x","x","x","x","x","x"]\n' +
      Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(',')}]`,
      ).join('\n') +
      '\nservices:\n  s:\n    command: *j\n';
    for (const [what, text] of [
      ['nested 100k levels', `services:\n  s:\n    command: ${deepArray(100_000)}\n`],
      ['an alias bomb (9^10 nodes)', bomb],
    ] as const) {
      const plan = timed(`planComposeChange: ${what}`, () =>
        planComposeChange(text, 'compose.yaml', 's', parserPlanner(CHOICE)),
      );
      assert.equal(plan.kind, 'unsupported');
    }
  });
});
