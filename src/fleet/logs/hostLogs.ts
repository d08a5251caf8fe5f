/** The last lines of a server's log on its host: the unit's journal, a container's log, every node's. */
import type { ServerProfile } from '../../config/config';
import { LOG_ACCESS_FIX, targetFor, targetIo } from '../../target/target';
import { maskSecrets } from '../../util/secrets';
import type { FleetSession } from '../fleetTypes';
import { MultiNodeSession } from '../sessions/multiNodeSession';

/** The last `n` lines, secrets masked; `journalError` says why when none could be read. */
export async function hostLogs(
  session: FleetSession,
  server: ServerProfile,
  n: number,
): Promise<{ journal: string[]; journalError?: string }> {
  // A multi-node server: every node's journal, merged by time, each line naming its node.
  // A single server: its target's log (the unit's journal, or the container's `docker logs`).
  const sources =
    session instanceof MultiNodeSession
      ? session.nodes.map(({ node, session: s }) => ({ session: s, profile: s.profile, prefix: `${node.label}: ` }))
      : [{ session, profile: server, prefix: '' }];
  const results = await Promise.all(
    sources.map((source) => targetFor(source.profile).tailLog(targetIo(source.session.transport), n)),
  );
  const entries = results.flatMap((result, i) =>
    result.entries.map((e) => ({
      at: e.at,
      text: maskSecrets(
        `${new Date(e.at).toISOString()} ${sources[i]!.prefix}${e.message.replace(/\r/g, ' ').trimEnd()}`,
      ),
    })),
  );
  const journal = (sources.length > 1 ? entries.sort((a, b) => a.at - b.at).slice(-n) : entries).map((e) => e.text);
  const problem = results.map((result, i) => result.problem && `${sources[i]!.prefix}${result.problem}`).find(Boolean);
  return {
    journal,
    ...(problem && journal.length === 0 ? { journalError: `${problem}. Fix: ${LOG_ACCESS_FIX}` } : {}),
  };
}
