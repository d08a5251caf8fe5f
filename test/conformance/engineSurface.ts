/**
 * Everything of src/ the engine conformance suite touches, in one place: the engine list and
 * each engine's interface (src/engine/engine.ts), the pipeline a log goes through as the watcher
 * feeds it (the engine's grammar read by JournalReader, folded by the monitor's reducer), the
 * gate that lets the watcher ask for the completion, the HTTP client and the judges of its
 * answers, and the words a user is shown of a failure. When those move (sealing the
 * engine's folder), this file follows them and the suite stays as it is.
 */
export {
  ENGINES,
  engineFor,
  findServerCommand,
  getFlag,
  modelPathOf,
  parserChoiceProblem,
  parserPlanner,
  planParserChange,
  serverCommandNames,
  validateParserName,
  type Engine,
} from '../../src/engine/engine';
export { JournalReader } from '../../src/engine/logReader';
export type { ServiceStatus } from '../../src/target/target';
export { initialState, reduce } from '../../src/monitor/state/loadState';
export { wantsCompletionProbe } from '../../src/monitor/state/loadVerdict';
export type { HttpVerdict, LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
export { ServerHttpClient, describeResult, type HttpResult } from '../../src/engine/serverHttp';
export { failureCause, failureMessage } from '../../src/present/messages';
import { judgeCompletion, judgeHealth } from '../../src/engine/httpAnswers';
import { locateLaunch } from '../../src/engine/launch';
import type { Engine } from '../../src/engine/engine';
import type { HttpResult } from '../../src/engine/serverHttp';
import type { HttpVerdict } from '../../src/monitor/state/loadStateTypes';

/** What the watcher's HTTP witness makes of a /health answer (src/monitor/watch/httpWitness.ts). */
export function healthVerdict(result: HttpResult): HttpVerdict {
  if (result.kind === 'refused') return 'refused';
  if (result.kind !== 'http') return 'error';
  const judged = judgeHealth(result.status);
  return judged === 'ok' ? 'healthy' : judged === 'warming' ? 'warming' : 'error';
}

/** The judge of a 1-token completion's answer: ready only on a real one. */
export function completionVerdict(result: HttpResult): { ok: true; text: string } | { ok: false; reason: string } {
  if (result.kind !== 'http') return { ok: false, reason: result.kind };
  return judgeCompletion(result.status, result.contentType, result.body, result.truncated, result.apiKeySent === true);
}

/** True when the command line has a server command of this engine's launch forms (wherever another engine's is). */
export function launches(engine: Engine, argv: readonly string[]): boolean {
  return locateLaunch(argv, [engine]) !== null;
}
