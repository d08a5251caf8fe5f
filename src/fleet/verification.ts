/** A parser verification of one server over its session (the checks live in src/verify). */
import type { ServerProfile } from '../config/config';
import { targetFor } from '../target/target';
import type { VerifyResult } from '../verify/verifier';
import type { FleetSession, ParserVerification } from './fleetTypes';

export async function verifyParsersOn(
  session: FleetSession,
  server: ServerProfile,
  log: (line: string) => void,
): Promise<{ result: VerifyResult; summary: string; table: string; verdict: ParserVerification['verdict'] }> {
  const { verifyServer } = await import('../verify/serverVerification');
  const { formatTable, summarize, verdictOf } = await import('../verify/verifier');
  const result = await verifyServer(
    session.transport,
    session.client,
    server.unit,
    log,
    server.docker ? targetFor(server) : undefined,
  );
  return { result, summary: summarize(result), table: formatTable(result), verdict: verdictOf(result) };
}
