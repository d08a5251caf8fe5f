/** A judgement's evidence as the table shows it: its findings in words (English unless a bundle is in use). */
import { evidenceText } from '../../src/present/words/findingWords';
import type { Judgement } from '../../src/verify/judges';

export function ev(j: Pick<Judgement, 'facts'>): string {
  return evidenceText(j.facts);
}
