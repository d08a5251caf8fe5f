/**
 * What "right" means for one published log (test/fixtures/real-logs): the verdict its header
 * expects, phases in order, and for a failure the cause shown first on every front. Used by
 * test/unit/realLogs.unit.test.ts and scripts/realLogsTable.ts (the table of the corpus). Pure.
 */
import type { ServerProfile } from '../../src/config/config';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import { serverReport } from '../../src/present/report';
import { phaseRank } from '../../src/engine/events';
import { engineById } from '../../src/engine/engine';
import { failureCause, failureMessage } from '../../src/present/messages';
import { replayLog, type Fixture, type Replay } from './replayLog';

export const server = {
  name: 'gpu1',
  host: 'gpu1.lan',
  port: 22,
  unit: 'sglang-replay.service',
  url: 'http://127.0.0.1:30000',
  sudo: false,
} as unknown as ServerProfile;
export const STALL_MS = 120_000;

/** Lines that say that something ended, not why: never shown instead of the cause, nor before it. */
export const GENERIC = [
  'Scheduler hit an exception',
  'Received sigquit',
  'Main process exited',
  'Rank 0 scheduler died',
  'EngineCore failed to start',
  'Traceback (most recent call last)',
] as const;

export interface Judgement {
  /** Problems with the verdict and the phases; empty when right. */
  readonly verdict: readonly string[];
  /** Problems with the cause shown (failures only); empty when right. */
  readonly cause: readonly string[];
  /** The notification of a failure; the phases of a ready or hung load. */
  readonly shown: string;
}

/**
 * Whether a log has shard progress lines, decided from the fixture's text, not by the engine's
 * own pattern (src/engine/logRules.ts SHARD_PROGRESS): the bars of SGLang's and vLLM's shard
 * loaders as the corpus prints them ("Loading safetensors checkpoint shards:  50% Completed | 1/2",
 * "Multi-thread loading shards:  25% Completed | 1/4"; also "Loading pt checkpoint shards").
 */
export const SHARD_LINE = /(?:checkpoint|loading) shards:\s*\d{1,3}% Completed \| \d+\/\d+/i;

/** The cause comes first: every generic line shown in `text` (that is not itself the expected cause) comes after it. */
export function causeFirst(text: string, cause: string, what: string): string[] {
  const at = text.indexOf(cause);
  if (at < 0) return [`${what} does not show "${cause}": ${text}`];
  return GENERIC.filter((g) => !cause.includes(g) && text.includes(g) && text.indexOf(g) < at).map(
    (g) => `${what} shows "${g}" before "${cause}": ${text}`,
  );
}

function phasesInOrder(replay: Replay, hasShards: boolean): string[] {
  const problems: string[] = [];
  const ranks = replay.phases.map(phaseRank);
  if (ranks.some((r, i) => i > 0 && r < ranks[i - 1]!))
    problems.push(`phases out of order: ${replay.phases.join(' -> ')}`);
  if (hasShards && !replay.phases.includes('loading weights'))
    problems.push(`shard lines but no 'loading weights': ${replay.phases.join(' -> ')}`);
  return problems;
}

export function judgeFixture({ header, lines }: Fixture): Judgement {
  // Each log through its own engine's grammar, as the watcher reads it once the command line is known.
  const grammar = engineById(header.engine).grammar;
  const hasShards = lines.some((l) => SHARD_LINE.test(l));
  const verdicts = (r: Replay) => r.verdicts.join(' -> ');
  switch (header.outcome) {
    case 'ready': {
      const replay = replayLog(lines, {
        grammar,
        probeReady: true,
        stallMs: STALL_MS,
      });
      const problems = phasesInOrder(replay, hasShards);
      if (replay.verdicts.includes('failed')) problems.push(`failed on the way: ${verdicts(replay)}`);
      const reached = replay.afterLog.readyLogSeen || replay.afterLog.phase === 'warming up';
      // An excerpt of a start that was ready, cut before its verdict line (the header's notes say
      // so): loading all along, from its first line to its last (never stalled, warming up or failed).
      if (!reached && /excerpt/i.test(header.notes ?? '')) {
        const excerpt = replayLog(lines, { grammar, stallMs: STALL_MS });
        if (excerpt.verdicts.join(' -> ') !== 'restarting -> loading')
          problems.push(`an excerpt without its verdict line is not loading all along: ${verdicts(excerpt)}`);
      } else {
        if (!reached) problems.push(`the log does not reach its ready line or HTTP: phase ${replay.afterLog.phase}`);
        if (replay.final.verdict !== 'ready')
          problems.push(`not ready after a passing completion: ${verdicts(replay)}`);
      }
      return { verdict: problems, cause: [], shown: replay.phases.join(' > ') };
    }
    case 'failed': {
      const replay = replayLog(lines, {
        grammar,
        end: { exitCode: header.exitCode ?? null, exitSignal: header.exitSignal ?? null },
        stallMs: STALL_MS,
      });
      const problems = phasesInOrder(replay, hasShards);
      if (replay.afterLog.verdict === 'failed' || replay.afterLog.verdict === 'ready')
        problems.push(`${replay.afterLog.verdict} before the process exited`);
      if (replay.final.verdict !== 'failed') problems.push(`not failed once the process exited: ${verdicts(replay)}`);
      const state = replay.final;
      const message = failureMessage(server, { end: 'failed', state, message: state.failure?.summary ?? '' });
      const snapshot: ServerSnapshot = {
        server,
        state,
        watching: true,
        loading: false,
        refusal: undefined,
        verification: undefined,
      };
      const report = serverReport(snapshot, replay.lastLineAt + 60_000);
      const cause = [
        ...causeFirst(message, header.cause, 'the notification'),
        ...causeFirst(`Cause: ${failureCause(state) ?? ''}`, header.cause, 'the tooltip'),
        ...causeFirst(report.lastError ?? '', header.cause, 'the report (servers view, CLI, MCP, LM tools)'),
        ...causeFirst(report.summary, header.cause, "the report's summary"),
      ];
      return { verdict: problems, cause, shown: message };
    }
    case 'hang': {
      const before = replayLog(lines, {
        grammar,
        stallTickMs: STALL_MS - 5_000,
        stallMs: STALL_MS,
      });
      const replay = replayLog(lines, {
        grammar,
        stallTickMs: STALL_MS + 1_000,
        stallMs: STALL_MS,
      });
      const problems = phasesInOrder(replay, hasShards);
      if (before.final.verdict === 'stalled') problems.push('stalled before kimiService.stallSeconds without progress');
      if (replay.verdicts.includes('ready') || replay.verdicts.includes('failed'))
        problems.push(`ready or failed: ${verdicts(replay)}`);
      if (replay.final.verdict !== 'stalled')
        problems.push(`not stalled after kimiService.stallSeconds without progress: ${verdicts(replay)}`);
      return { verdict: problems, cause: [], shown: replay.phases.join(' > ') };
    }
  }
}
