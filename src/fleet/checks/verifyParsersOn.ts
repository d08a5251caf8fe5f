/** A parser verification of one server over its session (the checks live in src/verify). */
import type { ServerProfile } from '../../config/config';
import { targetFor } from '../../target/target';
import type { VerifyProgress, VerifyResult } from '../../verify/verifier';
import { firstRoundDone } from '../restart/observe';
import type { FleetSession, ParserVerification, ServerSnapshot } from '../fleetTypes';

/**
 * Whether the checks would say anything about the parsers: a server that is loading, warming up,
 * failed, stopped or unhealthy answers every check with the same connection error or 503, which
 * reads as broken parsers. Only a look that went all the way round counts (before that a ready
 * server still reads `loading`); without one the checks run and speak for themselves.
 */
export function notReadyForChecks(snapshot: ServerSnapshot): 'loading' | 'down' | undefined {
  const state = snapshot.state;
  if (!state || !snapshot.watching || !firstRoundDone(state) || state.verdict === 'ready') return undefined;
  const stillLoading = state.verdict === 'loading' || state.verdict === 'warming up' || state.verdict === 'stalled';
  return stillLoading ? 'loading' : 'down';
}

export async function verifyParsersOn(
  session: FleetSession,
  server: ServerProfile,
  log: (line: string) => void,
  onProgress?: (progress: VerifyProgress) => void,
): Promise<{ result: VerifyResult; summary: string; table: string; verdict: ParserVerification['verdict'] }> {
  const { verifyServer } = await import('../../verify/serverVerification');
  const { verificationVerdictOf } = await import('../../verify/verifier');
  const { formatTable, summarize } = await import('../../present/verifyReport');
  const result = await verifyServer(session.transport, session.client, targetFor(server), log, onProgress);
  return { result, summary: summarize(result), table: formatTable(result), verdict: verificationVerdictOf(result) };
}
