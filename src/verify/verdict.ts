/** What a verification found, in one word: every check passed, one failed, or why it is not known. Pure. */
import type { VerifyResult } from './verifier';

export type VerificationVerdict = 'verified' | 'failed' | 'inconclusive' | 'incomplete';

export function verificationVerdictOf(result: Pick<VerifyResult, 'checks'>): VerificationVerdict {
  const statuses = result.checks.map((c) => c.status);
  if (statuses.length > 0 && statuses.every((s) => s === 'pass')) return 'verified';
  if (statuses.includes('fail')) return 'failed';
  if (statuses.includes('inconclusive')) return 'inconclusive';
  return 'incomplete';
}
