/**
 * Every published log of test/fixtures/real-logs (issue 17), played through the real pipeline
 * (JournalReader -> reduce) as the watcher feeds it: the verdict its header expects, the phases
 * in order, and for a failure the cause a user must be shown, before the lines that only echo
 * the end (test/util/realLogJudge). New fixtures in the folder are picked up as they come.
 */
import { strict as assert } from 'node:assert';
import { judgeFixture } from '../util/realLogJudge';
import { loadFixtures } from '../util/replayLog';

const fixtures = loadFixtures();

describe('real logs: every published log, through the reader and the reducer', () => {
  it('the corpus is there (22 logs at least, each with its header)', () => {
    assert.ok(fixtures.length >= 22, `${fixtures.length} fixtures`);
    for (const f of fixtures)
      assert.ok(['ready', 'failed', 'hang'].includes(f.header.outcome), `${f.header.id}: outcome ${f.header.outcome}`);
  });

  for (const fixture of fixtures) {
    const { header } = fixture;
    describe(`${header.id} (${header.engine}, ${header.class}, ${header.outcome})`, () => {
      const judgement = judgeFixture(fixture);
      const what =
        header.outcome === 'ready'
          ? 'is ready once the completion passes (an excerpt cut before it: loading), phases in order'
          : header.outcome === 'failed'
            ? 'is failed once the process exits (not before), phases in order'
            : 'is never ready nor failed, and stalled once nothing moved for kimiService.stallSeconds (from its last progress)';
      it(what, () => assert.deepEqual(judgement.verdict, []));
      if (header.outcome === 'failed') {
        it(`shows the cause "${header.cause}" first: notification, tooltip, report`, () =>
          assert.deepEqual(judgement.cause, []));
      }
    });
  }
});
