/**
 * The held-out part of the real-logs corpus (test/fixtures/real-logs): fixtures chosen by a fixed
 * hash of their id (sha256, first byte under 77 of 256: 20 of the 91 when it was set, 2026-12-02),
 * not to be looked at while tuning the log rules, and scored on their own in docs/real-logs.md.
 * It was drawn after the rules had been written against the whole corpus: it holds out from then
 * on. The list is kept in test/fixtures/real-logs/HELD-OUT.txt so a diff shows when it changes;
 * the unit suite checks that it is exactly what the hash picks (a new fixture falls on its side
 * by its id alone).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const HELD_OUT_FILE = join(__dirname, '..', 'fixtures', 'real-logs', 'HELD-OUT.txt');

/** Whether the hash puts fixture `id` in the held-out part. */
export function hashHoldsOut(id: string): boolean {
  return createHash('sha256').update(id).digest()[0]! < 77;
}

/** The ids HELD-OUT.txt names (comments and blank lines skipped). */
export function heldOutIds(): Set<string> {
  return new Set(
    readFileSync(HELD_OUT_FILE, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#')),
  );
}

export type Split = 'tuning' | 'held out';

export function splitOf(id: string, held: ReadonlySet<string> = heldOutIds()): Split {
  return held.has(id) ? 'held out' : 'tuning';
}
