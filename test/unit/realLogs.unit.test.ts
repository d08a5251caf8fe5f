/**
 * Every published log of test/fixtures/real-logs (issue 17), played through the real pipeline
 * (JournalReader -> reduce) as the watcher feeds it: the verdict its header expects, the phases
 * in order, and for a failure the cause a user must be shown, before the lines that only echo
 * the end. New fixtures in the folder are picked up as they come.
 */
import { strict as assert } from 'node:assert';
import type { ServerProfile } from '../../src/config';
import type { ServerSnapshot } from '../../src/fleet/fleet';
import { serverReport } from '../../src/fleet/report';
import { phaseRank } from '../../src/server/events';
import { SHARD_PROGRESS } from '../../src/server/journal';
import { failureCause, failureMessage } from '../../src/ui/messages';
import { loadFixtures, replayLog } from '../util/replayLog';

const server = { name: 'gpu1', host: 'gpu1.lan', port: 22, unit: 'sglang-replay.service', url: 'http://127.0.0.1:30000', sudo: false } as unknown as ServerProfile;
const STALL_MS = 120_000;

/** Lines that say that something ended, not why: never shown instead of the cause, nor before it. */
const GENERIC = [
  'Scheduler hit an exception',
  'Received sigquit',
  'Main process exited',
  'Rank 0 scheduler died',
  'EngineCore failed to start',
  'Traceback (most recent call last)',
];

/** The cause comes first: every generic line shown in `text` (that is not itself the expected cause) comes after it. */
function assertCauseFirst(text: string, cause: string, what: string): void {
  const at = text.indexOf(cause);
  assert.ok(at >= 0, `${what} does not show "${cause}": ${text}`);
  for (const generic of GENERIC) {
    if (cause.includes(generic)) continue;
    const g = text.indexOf(generic);
    assert.ok(g < 0 || g > at, `${what} shows "${generic}" before "${cause}": ${text}`);
  }
}

const fixtures = loadFixtures();

describe('real logs: every published log, through the reader and the reducer', () => {
  it('the corpus is there (22 logs at least, each with its header)', () => {
    assert.ok(fixtures.length >= 22, `${fixtures.length} fixtures`);
    for (const f of fixtures) assert.ok(['ready', 'failed', 'hang'].includes(f.header.outcome), `${f.header.id}: outcome ${f.header.outcome}`);
  });

  for (const { header, lines } of fixtures) {
    describe(`${header.id} (${header.engine}, ${header.class}, ${header.outcome})`, () => {
      const hasShards = lines.some((l) => SHARD_PROGRESS.test(l));

      if (header.outcome === 'ready') {
        // An excerpt of a start that was ready, cut before its verdict line (the header's notes say so): loading, never failed.
        const excerpt = /excerpt/i.test(header.notes ?? '');
        it('is ready once the completion passes, through loading weights when the log has shard lines', () => {
          const replay = replayLog(lines, { probeReady: true, stallMs: STALL_MS });
          assert.ok(!replay.verdicts.includes('failed'), `verdicts ${replay.verdicts.join(' -> ')}`);
          const ranks = replay.phases.map(phaseRank);
          assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), `phases in order: ${replay.phases.join(' -> ')}`);
          if (hasShards) assert.ok(replay.phases.includes('loading weights'), `phases ${replay.phases.join(' -> ')}`);
          const reached = replay.afterLog.readyLogSeen || replay.afterLog.phase === 'warming up';
          if (!reached && excerpt) {
            assert.ok(['loading', 'warming up'].includes(replay.afterLog.verdict), `an excerpt without its verdict line is still loading: ${replay.afterLog.verdict}`);
            return;
          }
          assert.ok(reached, `the log reaches the ready line or HTTP: phase ${replay.afterLog.phase}`);
          assert.equal(replay.final.verdict, 'ready', `verdicts ${replay.verdicts.join(' -> ')}`);
          assert.equal(replay.phases[replay.phases.length - 1], 'ready');
        });
      }

      if (header.outcome === 'failed') {
        const replay = replayLog(lines, { end: { exitCode: header.exitCode ?? null, exitSignal: header.exitSignal ?? null }, stallMs: STALL_MS });

        it('is failed once the process exits (not before)', () => {
          assert.notEqual(replay.afterLog.verdict, 'failed', 'the journal alone does not fail a load');
          assert.notEqual(replay.afterLog.verdict, 'ready');
          assert.equal(replay.final.verdict, 'failed', `verdicts ${replay.verdicts.join(' -> ')}`);
          const ranks = replay.phases.map(phaseRank);
          assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), `phases in order: ${replay.phases.join(' -> ')}`);
          if (hasShards) assert.ok(replay.phases.includes('loading weights'), `phases ${replay.phases.join(' -> ')}`);
        });

        it(`shows the cause "${header.cause}" first: notification, tooltip, report`, () => {
          const state = replay.final;
          const message = failureMessage(server, { end: 'failed', state, message: state.failure?.summary ?? '' });
          assertCauseFirst(message, header.cause, 'the notification');
          assertCauseFirst(`Cause: ${failureCause(state) ?? ''}`, header.cause, 'the tooltip');
          const snapshot: ServerSnapshot = { server, state, watching: true, loading: false, refusal: undefined, verification: undefined };
          const report = serverReport(snapshot, replay.lastLineAt + 60_000);
          assertCauseFirst(report.lastError ?? '', header.cause, 'the report (servers view, CLI, MCP, LM tools)');
          assertCauseFirst(report.summary, header.cause, "the report's summary");
        });
      }

      if (header.outcome === 'hang') {
        it('is never ready nor failed, and stalled once nothing moved for kimi.stallSeconds (from its last progress)', () => {
          const before = replayLog(lines, { stallTickMs: STALL_MS - 5_000, stallMs: STALL_MS });
          assert.notEqual(before.final.verdict, 'stalled', 'not stalled before kimi.stallSeconds');
          const replay = replayLog(lines, { stallTickMs: STALL_MS + 1_000, stallMs: STALL_MS });
          assert.ok(!replay.verdicts.includes('ready') && !replay.verdicts.includes('failed'), `verdicts ${replay.verdicts.join(' -> ')}`);
          assert.equal(replay.final.verdict, 'stalled', `verdicts ${replay.verdicts.join(' -> ')}`);
        });
      }
    });
  }
});
