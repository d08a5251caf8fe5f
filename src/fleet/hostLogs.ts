/** The last lines of a server's log on its host: the unit's journal, a container's log, every node's. */
import type { ServerProfile } from '../config/config';
import { targetFor } from '../target/target';
import { JOURNAL_ACCESS_FIX, journalProblem, journalTailCommand, parseJournalJsonLine } from '../engine/sglang/journal';
import { maskSecrets } from '../util/secrets';
import type { FleetSession } from './fleetTypes';
import { MultiNodeSession } from './multiNodeSession';

/** The last `n` lines, secrets masked; `journalError` says why when none could be read. */
export async function hostLogs(
  session: FleetSession,
  server: ServerProfile,
  n: number,
): Promise<{ journal: string[]; journalError?: string }> {
  // A multi-node server: every node's journal, merged by time, each line naming its node.
  // A single server: its target's log (the unit's journal, or the container's `docker logs`).
  const target = targetFor(server);
  const sources =
    session instanceof MultiNodeSession
      ? session.nodes.map(({ node, session: s }) => ({
          transport: s.transport,
          tail: journalTailCommand(node.unit, n),
          parse: parseJournalJsonLine,
          prefix: `${node.label}: `,
        }))
      : [
          {
            transport: session.transport,
            tail: target.logTailCommand(n),
            parse: (line: string) => target.parseLogLine(line),
            prefix: '',
          },
        ];
  const results = await Promise.all(sources.map((source) => source.transport.exec(source.tail, { timeoutMs: 20_000 })));
  const entries = results.flatMap((result, i) =>
    result.stdout
      .split('\n')
      .map((line) => sources[i]!.parse(line))
      .filter((e): e is NonNullable<typeof e> => e !== undefined)
      .map((e) => ({
        at: e.at,
        text: maskSecrets(
          `${new Date(e.at).toISOString()} ${sources[i]!.prefix}${e.message.replace(/\r/g, ' ').trimEnd()}`,
        ),
      })),
  );
  const journal = (sources.length > 1 ? entries.sort((a, b) => a.at - b.at).slice(-n) : entries).map((e) => e.text);
  const problem = results
    .map((result, i) => {
      const why = journalProblem(result.stderr.split('\n').filter(Boolean), result.code);
      return why && `${sources[i]!.prefix}${why}`;
    })
    .find(Boolean);
  return {
    journal,
    ...(problem && journal.length === 0 ? { journalError: `${problem}. Fix: ${JOURNAL_ACCESS_FIX}` } : {}),
  };
}
