/**
 * Engine conformance (the checklist of docs/backends.md): the same behavioural tests
 * for every engine of ENGINES (src/engine/engines.ts), each against its own fixture
 * (./engineFixtures.ts: its command lines, parser names, HTTP answers) and against every
 * published log of its grammar (test/fixtures/real-logs, the headers that name it). An engine
 * added to the list is picked up here; without a fixture or logs it fails.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { causeFirst, server, SHARD_LINE } from '../util/realLogJudge';
import { loadFixtures, replayLog, type Fixture } from '../util/replayLog';
import { ENGINE_FIXTURES, type Answer, type EngineFixture } from './engineFixtures';
import { planOf, stepLog, type Stepped } from './engineReplay';
import {
  completionVerdict,
  engineFor,
  ENGINES,
  failureCause,
  failureMessage,
  findServerCommand,
  getFlag,
  healthVerdict,
  launches,
  modelPathOf,
  parserChoiceProblem,
  parserPlanner,
  planParserChange,
  serverCommandNames,
  ServerHttpClient,
  validateParserName,
  type Engine,
  type HttpVerdict,
  type LoadState,
} from './engineSurface';

const LOGS = loadFixtures();
const STALL_MS = 120_000;

/** The rank of a phase in the engine's own order; -1 when the engine does not name it. */
const rankIn = (engine: Engine, phase: string): number => (engine.phases as readonly string[]).indexOf(phase);

function phaseProblems(engine: Engine, states: readonly LoadState[]): string[] {
  const seen: string[] = [];
  for (const s of states) if (s.phase && !seen.includes(s.phase)) seen.push(s.phase);
  const unknown = seen.filter((p) => rankIn(engine, p) < 0);
  if (unknown.length)
    return [`phases ${unknown.join(', ')} are not among ${engine.label}'s: ${engine.phases.join(', ')}`];
  const ranks = seen.map((p) => rankIn(engine, p));
  return ranks.some((r, i) => i > 0 && r < ranks[i - 1]!) ? [`phases out of order: ${seen.join(' -> ')}`] : [];
}

function progressProblems(states: readonly LoadState[]): string[] {
  let last = 0;
  for (const [i, s] of states.entries()) {
    const p = s.progress ?? 0;
    if (p < last - 1e-9) return [`progress fell from ${last.toFixed(3)} to ${p.toFixed(3)} at signal ${i}`];
    last = Math.max(last, p);
  }
  return [];
}

const phasesSeen = (states: readonly LoadState[]): string[] => [
  ...new Set(states.map((s) => s.phase).filter((p) => p !== undefined)),
];

/** A local HTTP server that answers each path as the engine's server would at one moment. */
class AnswerServer {
  private readonly server = http.createServer((req, res) => {
    const answer = this.answers[new URL(req.url ?? '/', 'http://x').pathname];
    req.resume();
    if (!answer) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    res.writeHead(answer.status, answer.contentType ? { 'content-type': answer.contentType } : {}).end(answer.body);
  });
  answers: Record<string, Answer> = {};
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A port nothing listens on (a server whose HTTP is not up yet). */
async function closedPort(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** What the watcher's /health witness says of the engine's server before HTTP, while warming, once ready. */
interface HealthVerdicts {
  readonly closed: HttpVerdict;
  readonly warming: HttpVerdict | undefined;
  readonly ready: HttpVerdict;
}

function readyLogChecks(engine: Engine, fixture: EngineFixture, log: Fixture, verdicts: () => HealthVerdicts): void {
  const { header, lines } = log;
  const plan = planOf(lines, header);
  // A "ready" log without its HTTP line opens its port after the last line (replay-plan.js).
  const httpAt = plan.httpAt >= 0 ? plan.httpAt : lines.length - 1;
  const readyAt = plan.readyAt >= 0 ? plan.readyAt : fixture.readyEvidence === 'http' ? lines.length - 1 : -1;
  let run: Stepped | undefined;
  const stepped = (): Stepped =>
    (run ??= stepLog(engine, lines, (i) => {
      const v = verdicts();
      if (readyAt >= 0 && i >= readyAt) return v.ready;
      return i >= httpAt && plan.httpAt >= 0 ? (v.warming ?? v.ready) : v.closed;
    }));

  it('phases recognised in the engine\'s order; a log with shard lines shows "loading weights"', () => {
    const problems = phaseProblems(engine, stepped().states);
    if (lines.some((l) => SHARD_LINE.test(l)) && !phasesSeen(stepped().states).includes('loading weights'))
      problems.push(`shard lines but no 'loading weights': ${phasesSeen(stepped().states).join(' -> ')}`);
    assert.deepEqual(problems, []);
  });
  it('progress never goes back', () => assert.deepEqual(progressProblems(stepped().states), []));
  it('never failed; the completion is asked for only once the engine says ready (its ready line or HTTP), not before', () => {
    const { steps } = stepped();
    const early = steps.find((s) => s.index < (readyAt < 0 ? steps.length : readyAt) && s.gateOpen);
    assert.equal(
      early && `line ${early.index + 1} of ${lines.length} (${lines[early.index]!.slice(0, 160)})`,
      undefined,
      'the completion would be asked before the ready evidence',
    );
    assert.equal(
      steps.find((s) => s.state.verdict === 'failed' || s.state.verdict === 'ready')?.state.verdict,
      undefined,
    );
    if (readyAt >= 0) assert.ok(steps[readyAt]!.gateOpen, `not asked after the ready evidence (line ${readyAt + 1})`);
    else assert.deepEqual([...new Set(steps.map((s) => s.state.verdict))], ['loading'], 'an excerpt cut before ready');
  });
  if (readyAt >= 0) {
    it("ready on the engine's real completion answer, and never on its error answers", () => {
      const run = stepped();
      for (const { answer } of fixture.completionErrors) {
        const judged = completionVerdict({ kind: 'http', truncated: false, ...answer });
        const state = run.apply({ kind: 'completion', ok: judged.ok, detail: judged.ok ? judged.text : judged.reason });
        assert.notEqual(state.verdict, 'ready', answer.body);
      }
      const judged = completionVerdict({ kind: 'http', truncated: false, ...fixture.completion });
      const state = run.apply({ kind: 'completion', ok: judged.ok, detail: judged.ok ? judged.text : judged.reason });
      assert.equal(state.verdict, 'ready');
      assert.equal(state.phase, engine.phases[engine.phases.length - 1]);
      assert.deepEqual(progressProblems(run.states), []);
    });
  }
}

function failedLogChecks(engine: Engine, log: Fixture): void {
  const { header, lines } = log;
  let run: Stepped | undefined;
  let end: LoadState | undefined;
  const stepped = (): { run: Stepped; end: LoadState } => {
    run ??= stepLog(engine, lines);
    end ??= run.exit(header);
    return { run, end };
  };
  it('phases recognised in order; progress never goes back', () => {
    const { run } = stepped();
    assert.deepEqual([...phaseProblems(engine, run.states), ...progressProblems(run.states)], []);
  });
  it('failed once the process exits, not before (and never ready)', () => {
    const { run, end } = stepped();
    assert.equal(
      run.steps.find((s) => s.state.verdict === 'failed' || s.state.verdict === 'ready')?.index,
      undefined,
      `${run.afterLog.verdict} before the exit`,
    );
    assert.equal(end.verdict, 'failed');
  });
  it(`the cause "${header.cause}" is named, and shown before the lines that only say it ended`, () => {
    const { end } = stepped();
    const named = failureCause(end);
    const message = failureMessage(server, { end: 'failed', state: end, message: end.failure?.summary ?? '' });
    assert.deepEqual(
      [
        ...(named?.includes(header.cause) ? [] : [`the cause named is ${JSON.stringify(named)}`]),
        ...causeFirst(message, header.cause, 'the notification'),
      ],
      [],
    );
  });
}

function hangLogChecks(engine: Engine, log: Fixture): void {
  it('never ready nor failed; stalled once nothing moved for the stall time, not before', () => {
    const grammar = engine.grammar;
    const before = replayLog(log.lines, { grammar, stallTickMs: STALL_MS - 5_000, stallMs: STALL_MS });
    const after = replayLog(log.lines, { grammar, stallTickMs: STALL_MS + 1_000, stallMs: STALL_MS });
    assert.notEqual(before.final.verdict, 'stalled');
    assert.ok(!after.verdicts.includes('ready') && !after.verdicts.includes('failed'), after.verdicts.join(' -> '));
    assert.equal(after.final.verdict, 'stalled');
  });
}

describe('engine conformance: every engine of ENGINES, the same tests', () => {
  it('the engines are distinct: ids, labels, and each command line detected by one engine only', () => {
    assert.equal(new Set(ENGINES.map((e) => e.id)).size, ENGINES.length);
    assert.equal(new Set(ENGINES.map((e) => e.label)).size, ENGINES.length);
    for (const fixture of Object.values(ENGINE_FIXTURES))
      for (const argv of fixture.commandLines)
        assert.equal(ENGINES.filter((e) => launches(e, argv)).length, 1, argv.join(' '));
  });

  for (const engine of ENGINES) {
    describe(`${engine.label} (${engine.id})`, () => {
      const fixture = ENGINE_FIXTURES[engine.id];
      const logs = LOGS.filter((l) => l.header.engine === engine.id);

      it('has its conformance fixture (test/conformance/engineFixtures.ts) and published logs: ready, failed', () => {
        assert.ok(fixture, `no entry for ${engine.id} in ENGINE_FIXTURES: a new engine brings its answers`);
        for (const outcome of ['ready', 'failed'] as const)
          assert.ok(
            logs.some((l) => l.header.outcome === outcome),
            `no ${outcome} log of ${engine.id} in test/fixtures/real-logs (header "engine": "${engine.id}")`,
          );
      });
      if (!fixture) return;

      it('detects its command lines (engineFor picks it), listens on its default port, names its phases up to ready', () => {
        for (const argv of fixture.commandLines) {
          assert.ok(launches(engine, argv), argv.join(' '));
          assert.equal(engineFor(argv)?.id, engine.id, argv.join(' '));
        }
        assert.ok(!launches(engine, ['/usr/bin/python3', '-m', 'http.server']));
        assert.equal(engine.defaultPort, fixture.defaultPort);
        assert.ok(engine.label.length > 0);
        assert.equal(new Set(engine.phases).size, engine.phases.length, 'each phase once');
        assert.equal(engine.phases[engine.phases.length - 1], 'ready');
      });

      it('launch forms: each one found, also behind wrappers; its arguments and model read after it; look-alikes are no server', () => {
        const missing = engine.launch.filter((f) => !fixture.launches.some((l) => l.form === f.form));
        assert.deepEqual(
          missing.map((f) => f.form),
          [],
          'each launch form has a command line in the fixture',
        );
        for (const { argv, form, argsStart, modelPath } of fixture.launches) {
          const shown = argv.join(' ');
          const found = findServerCommand(argv);
          assert.deepEqual(found && [found.engine, found.form, found.argsStart], [engine.id, form, argsStart], shown);
          assert.equal(modelPathOf(argv), modelPath, shown);
          assert.equal(getFlag([...argv, '--port', '12345'], '--port'), '12345', shown);
          // A flag's word before the server command is the wrapper's, not the server's.
          const wrapped = ['/usr/bin/env', '--port=1', 'numactl', '--interleave=all', ...argv];
          const behind = findServerCommand(wrapped);
          assert.deepEqual(behind && [behind.engine, behind.form, behind.argsStart], [engine.id, form, argsStart + 4]);
          assert.equal(
            getFlag(wrapped, '--port'),
            getFlag(argv, '--port'),
            `${wrapped.join(' ')}: --port read from the wrapper`,
          );
          assert.equal(modelPathOf(wrapped), modelPath);
        }
        for (const argv of fixture.notServers) assert.equal(findServerCommand(argv), null, argv.join(' '));
        const names = serverCommandNames();
        for (const f of engine.launch) if (f.shown) assert.ok(names.includes(`"${f.shown}"`), `${f.shown} in ${names}`);
      });

      it("parser names: accepts the server's own, refuses the spellings it does not know", () => {
        for (const [kind, names, listed] of [
          ['reasoning', fixture.parsers.reasoning, engine.parsers.reasoning],
          ['tool-call', fixture.parsers.toolCall, engine.parsers.toolCall],
        ] as const) {
          for (const name of names) assert.ok(listed.includes(name), `${kind} ${name} not in the engine's list`);
          for (const name of listed) assert.equal(validateParserName(kind, name, engine.id), null, `${kind} ${name}`);
        }
        for (const name of fixture.parsers.refused.reasoning)
          assert.notEqual(validateParserName('reasoning', name, engine.id), null, `reasoning ${name}`);
        for (const name of fixture.parsers.refused.toolCall)
          assert.notEqual(validateParserName('tool-call', name, engine.id), null, `tool-call ${name}`);
        for (const name of fixture.parsers.refused.reasoning)
          assert.match(
            validateParserName('reasoning', name, engine.id) ?? '',
            new RegExp(`parser of ${engine.label}$`),
          );
        // Its names pass the check made before anything is read; a name no engine knows does not.
        assert.equal(
          parserChoiceProblem({
            reasoningParser: fixture.parsers.reasoning[0]!,
            toolCallParser: fixture.parsers.toolCall[0]!,
          }),
          null,
        );
        assert.notEqual(
          parserChoiceProblem({ reasoningParser: 'no_such_parser', toolCallParser: fixture.parsers.toolCall[0]! }),
          null,
        );
      });

      it('parser planner: refuses a name this engine does not know before planning; its label names the switches', () => {
        const argv = fixture.commandLines[0]!;
        const location = findServerCommand(argv)!;
        const refused = {
          reasoningParser: fixture.parsers.refused.reasoning[0]!,
          toolCallParser: fixture.parsers.toolCall[0]!,
        };
        assert.throws(() => parserPlanner(refused).plan(argv, location), { name: 'ArgvPlanError' });
        const choice = { reasoningParser: fixture.parsers.reasoning[0]!, toolCallParser: fixture.parsers.toolCall[0]! };
        assert.equal(parserPlanner(choice).plan(argv, location).kind, 'change');
        assert.equal(
          parserPlanner(choice).label(location),
          [
            `--tool-call-parser ${choice.toolCallParser} --reasoning-parser ${choice.reasoningParser}`,
            ...fixture.parsers.switches,
          ].join(' '),
        );
      });

      it('parser flags: a change sets both flags and its switches, keeps the engine, and is idempotent', () => {
        assert.deepEqual(engine.parsers.switches, fixture.parsers.switches);
        const choice = { toolCallParser: fixture.parsers.toolCall[0]!, reasoningParser: fixture.parsers.reasoning[0]! };
        for (const argv of fixture.commandLines) {
          const plan = planParserChange(argv, choice);
          assert.equal(plan.kind, 'change', argv.join(' '));
          if (plan.kind !== 'change') continue;
          const after = plan.newArgv;
          const flag = (f: string) => after[after.indexOf(f) + 1];
          assert.equal(flag('--tool-call-parser'), choice.toolCallParser);
          assert.equal(flag('--reasoning-parser'), choice.reasoningParser);
          for (const sw of fixture.parsers.switches) assert.ok(after.includes(sw), `${sw} in ${after.join(' ')}`);
          let at = 0;
          for (const word of after) if (word === argv[at]) at++;
          assert.equal(at, argv.length, `every word of ${argv.join(' ')} kept, in order: ${after.join(' ')}`);
          assert.equal(engineFor(after)?.id, engine.id);
          assert.match(plan.diff, new RegExp(`--tool-call-parser.*${choice.toolCallParser}`));
          assert.equal(planParserChange(after, choice).kind, 'already-set');
        }
      });

      describe("its HTTP answers through the client and the watcher's judges, and its published logs", () => {
        const answers = new AnswerServer();
        let base = '';
        let closed = '';
        before(async () => {
          base = await answers.start();
          closed = await closedPort();
        });
        after(() => answers.stop());
        const client = () => new ServerHttpClient(base, undefined);

        it(`/health: the port closed is "refused"; ${fixture.healthWhileWarming ? `${fixture.healthWhileWarming.status} while warming is "warming"; ` : ''}${fixture.healthReady.status} once ready is "healthy"`, async () => {
          assert.equal(healthVerdict(await new ServerHttpClient(closed, undefined).health()), 'refused');
          if (fixture.healthWhileWarming) {
            answers.answers = { '/health': fixture.healthWhileWarming };
            assert.equal(healthVerdict(await client().health()), 'warming');
          }
          answers.answers = { '/health': fixture.healthReady };
          assert.equal(healthVerdict(await client().health()), 'healthy');
          assert.equal(engine.http.healthRunsGeneration, fixture.healthRunsGeneration);
          assert.deepEqual(engine.http.serverInfoPaths, fixture.serverInfoPaths);
        });

        it('the model list and a real 1-token completion: ready, with its text', async () => {
          answers.answers = { '/v1/models': fixture.models, '/v1/completions': fixture.completion };
          assert.deepEqual(await client().models(), { ok: true, ids: [fixture.modelId] });
          assert.deepEqual(completionVerdict(await client().completion(fixture.modelId)), {
            ok: true,
            text: fixture.completionText,
          });
        });

        it("the engine's error answers are never ready, and say why", async () => {
          for (const { answer, shows } of fixture.completionErrors) {
            answers.answers = { '/v1/completions': answer };
            const judged = completionVerdict(await client().completion(fixture.modelId));
            assert.equal(judged.ok, false, answer.body);
            if (!judged.ok) assert.match(judged.reason, shows);
          }
        });

        let verdicts: HealthVerdicts | undefined;
        before(async () => {
          const closedVerdict = healthVerdict(await new ServerHttpClient(closed, undefined).health());
          answers.answers = fixture.healthWhileWarming ? { '/health': fixture.healthWhileWarming } : {};
          const warming = fixture.healthWhileWarming ? healthVerdict(await client().health()) : undefined;
          answers.answers = { '/health': fixture.healthReady };
          verdicts = { closed: closedVerdict, warming, ready: healthVerdict(await client().health()) };
        });

        for (const log of logs) {
          const { header } = log;
          describe(`log ${header.id} (${header.class}, ${header.outcome})`, () => {
            if (header.outcome === 'ready') readyLogChecks(engine, fixture, log, () => verdicts!);
            else if (header.outcome === 'failed') failedLogChecks(engine, log);
            else hangLogChecks(engine, log);
          });
        }
      });
    });
  }
});
