/**
 * A death in the first seconds after a restart is shown as fast as any later crash. A published
 * log whose process dies in its first seconds (an NCCL watchdog timeout) is replayed, its silences
 * cut so that it dies before the watch's first look at the unit, or (longer silences) just after
 * it; the time from systemd's journal line of the exit to `failed` on the watch is measured.
 * The unit is looked at only every 30 s, so a death seen by the next look rather than by the
 * journal would take seconds to show: the bound says which witness saw it, with room for a busy
 * machine (on an idle one it is shown in about 0.2-0.6 s, printed below).
 */
import { strict as assert } from 'node:assert';
import { headers, ReplayHosts } from './realLogReplay';

const EARLY = 'sg-3368-nccl-watchdog';
const POLL_INTERVAL_MS = 30_000;
const BOUND_MS = 5_000;
const CASES = [
  { when: 'before the first look at the unit', maxGapMs: 100 },
  { when: 'just after the watch was tied to it', maxGapMs: 1_600 },
];

describe('a death in the first seconds after a restart, replayed through the real sshd', function () {
  this.timeout(90_000);
  const hosts = new ReplayHosts();
  const header = headers().find((h) => h.id === EARLY)!;

  before(async function () {
    this.timeout(120_000);
    await hosts.start([header.engine]);
  });
  after(() => hosts.stop());

  for (const c of CASES) {
    it(`a process dead ${c.when} is shown failed within ${BOUND_MS} ms of its exit`, async () => {
      const j = await hosts.judge(header, {
        watch: { pollIntervalMs: POLL_INTERVAL_MS },
        replay: { maxGapMs: c.maxGapMs },
      });
      const log = () => hosts.session?.logLines.slice(-30).join('\n') ?? '';
      assert.deepEqual(j.verdict, [], `${j.verdict.join('\n')}\n${log()}`);
      assert.ok(j.failedAfterExitMs !== undefined, 'the exit is in the journal and failed was shown');
      console.log(`      failed shown ${Math.round(j.failedAfterExitMs)} ms after the exit`);
      assert.ok(
        j.failedAfterExitMs < BOUND_MS,
        `failed shown ${Math.round(j.failedAfterExitMs)} ms after the exit\n${log()}`,
      );
    });
  }
});
