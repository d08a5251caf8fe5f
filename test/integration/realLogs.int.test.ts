/**
 * Published SGLang and vLLM logs (test/fixtures/real-logs) replayed as live servers on
 * the simulated GPU host (sim.json `replay`, docs/replay.md) and watched by the extension's own
 * session through the real sshd, as a user would: one fixture per `class` of the headers (the
 * smallest log of each, so a new class is covered as soon as its first fixture lands). What the
 * user sees is asserted (./realLogReplay.ts): the verdict the load ends on (ready / failed /
 * stalled that holds, for a hang), for a failure that the summary and the lines shown carry the
 * header's `cause` and how the process ended, and for a ready or failed log that `stalled` was
 * never shown on the way (a false stall). KIMI_REPLAY_ALL=1 replays every fixture instead and
 * prints the false stalls found; scripts/realLogsSurvey.ts makes the table of docs/real-logs.md.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import {
  byClass,
  FIXTURES,
  headers,
  onePerClass,
  ReplayHosts,
  type Header,
  type ReplayJudgement,
} from './realLogReplay';

const all = headers();
// KIMI_REPLAY_ALL=1: every fixture, not one per class (a few minutes; for a survey of the corpus)
const picked = process.env.KIMI_REPLAY_ALL ? [...all].sort(byClass) : onePerClass(all);

describe('published SGLang and vLLM logs replayed through the real sshd, one per class', function () {
  this.timeout(90_000);
  const hosts = new ReplayHosts();
  const judged = new Map<string, ReplayJudgement>();

  before(async function () {
    this.timeout(120_000);
    await hosts.start(picked.map((h) => h.engine));
  });
  after(async () => {
    if (process.env.KIMI_REPLAY_ALL) {
      const moving = [...judged.values()].filter((j) => j.header.outcome !== 'hang');
      const stalls = moving.filter((j) => j.falseStalls.length);
      console.log(
        `false stalls: ${stalls.length} of ${moving.length} ready or failed logs${stalls.map((j) => `\n  ${j.header.id}: ${j.falseStalls.join('; ')}`).join('')}`,
      );
    }
    await hosts.stop();
  });

  it('covers every class of the fixtures', () => {
    const classes = new Set(all.map((h) => h.class));
    // Every header read, each with its log: none left out of the classes.
    const logs = fs.readdirSync(FIXTURES).filter((n) => n.endsWith('.log'));
    assert.deepEqual(all.map((h) => `${h.id}.log`).sort(), logs.sort());
    assert.deepEqual(new Set(picked.map((h) => h.class)), classes);
  });

  /** The replay of `h`, judged by the first case of its fixture and read by the next ones. */
  const judgement = (h: Header): ReplayJudgement => {
    const j = judged.get(h.id);
    assert.ok(j, 'the replay ran (first case of this fixture)');
    return j;
  };
  const log = () => hosts.session?.logLines.slice(-30).join('\n') ?? '';

  for (const h of picked) {
    const title = `${h.class}: ${h.id} (${h.engine})`;
    const what = {
      ready: 'ends ready, not before the log says so (its ready line, or its last), and stays up',
      failed: 'ends failed, with how the process ended',
      hang: 'is stalled within 30 s and stays stalled while the process hangs',
    }[h.outcome];
    it(`${title} ${what}`, async () => {
      const j = await hosts.judge(h);
      judged.set(h.id, j);
      assert.deepEqual(j.verdict, [], `${j.verdict.join('\n')}\n${j.shown}\n${log()}`);
    });
    if (h.outcome === 'failed') {
      it(`${title} shows the cause: ${JSON.stringify(h.cause)}`, () => {
        const j = judgement(h);
        assert.deepEqual(j.cause, [], j.cause.join('\n'));
      });
    }
    if (h.outcome !== 'hang') {
      it(`${title} is never stalled while the log goes on`, () => {
        const j = judgement(h);
        assert.deepEqual(j.falseStalls, [], `false stall: ${j.falseStalls.join('; ')}`);
      });
    }
  }
});
