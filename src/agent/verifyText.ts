/** kimi_verify_parsers' text: the summary, what it means for an agent, the table. Pure. */
import type { ParserVerification } from '../fleet/fleetTypes';
import { hintMark } from '../util/hintMark';

const VERDICT_WORDS: Record<ParserVerification['verdict'], string> = {
  verified: 'all checks passed',
  failed: 'NOT all checks passed',
  inconclusive: 'NOT all checks passed: inconclusive, the answers were cut by max_tokens',
  incomplete: 'NOT all checks passed: some requests got no answer',
};

const HINTS: Partial<Record<ParserVerification['verdict'], string>> = {
  failed: `Each check that failed says what an agent would suffer ("for agents:"). When the server flags lack the kimi_k2 parsers, the user can add them with ${hintMark('enable-parsers')} (a systemd drop-in or the container's arguments, then a restart).`,
  inconclusive:
    'Inconclusive is not a parser failure: the answers were cut by max_tokens (the budgets are in the table).',
};

export function verifyText(serverName: string, result: ParserVerification): string {
  const hint = HINTS[result.verdict];
  return `${serverName}: ${result.summary} (${VERDICT_WORDS[result.verdict]}).${hint ? `\n${hint}` : ''}\n${result.table}`;
}
