/**
 * Every published log of test/fixtures/real-logs, played through the real pipeline
 * (JournalReader -> reduce) as the watcher feeds it: the verdict its header expects, the phases
 * in order, and for a failure the cause a user must be shown, before the lines that only echo
 * the end (test/util/realLogJudge). New fixtures in the folder are picked up as they come.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashHoldsOut, heldOutIds, splitOf } from '../util/heldOut';
import { judgeFixture } from '../util/realLogJudge';
import { loadFixtures, REAL_LOGS_DIR } from '../util/replayLog';

const fixtures = loadFixtures();

describe('real logs: every published log, through the reader and the reducer', () => {
  it('the corpus is there: every log with its header and every header with its log, each failure cause a line of its log, every added log listed in SOURCES.md', () => {
    const files = fs.readdirSync(REAL_LOGS_DIR);
    const ids = (ext: string) =>
      files
        .filter((f) => f.endsWith(ext))
        .map((f) => f.slice(0, -ext.length))
        .sort();
    assert.deepEqual(ids('.json'), ids('.log'));
    assert.deepEqual(
      fixtures.map((f) => f.header.id),
      ids('.log'),
    );
    for (const { header, lines } of fixtures) {
      assert.ok(['ready', 'failed', 'hang'].includes(header.outcome), `${header.id}: outcome ${header.outcome}`);
      const raw = JSON.parse(fs.readFileSync(path.join(REAL_LOGS_DIR, `${header.id}.json`), 'utf8')) as { id?: string };
      assert.equal(raw.id, header.id, 'the header names its own log');
      if (header.outcome === 'failed')
        assert.ok(
          header.cause !== '' && lines.some((l) => l.includes(header.cause)),
          `${header.id}: cause "${header.cause}" in no line`,
        );
    }
    // SOURCES.md lists each log added on top of the 22 of the shared corpus.
    const listed = [
      ...fs
        .readFileSync(path.join(REAL_LOGS_DIR, 'SOURCES.md'), 'utf8')
        .matchAll(/^\| ([a-z0-9][\w.-]*) \| (?:sglang|vllm) \|/gm),
    ].map((m) => m[1]!);
    assert.equal(new Set(listed).size, listed.length, 'a log listed twice');
    for (const id of listed) assert.ok(ids('.log').includes(id), `SOURCES.md lists ${id}, which has no log`);
    assert.equal(fixtures.length, listed.length + 22, `${fixtures.length} logs, ${listed.length} listed + 22 shared`);
  });

  it('the held-out part (test/fixtures/real-logs/HELD-OUT.txt) is exactly what the fixed hash picks', () => {
    const held = heldOutIds();
    assert.deepEqual([...held].sort(), fixtures.map((f) => f.header.id).filter(hashHoldsOut));
    assert.ok(
      held.size >= fixtures.length / 6 && held.size <= fixtures.length / 3,
      `${held.size} of ${fixtures.length}`,
    );
  });

  for (const fixture of fixtures) {
    const { header } = fixture;
    describe(`${header.id} (${header.engine}, ${header.class}, ${header.outcome}; ${splitOf(header.id)})`, () => {
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
