/**
 * The "enable parsers" flow on a unit: the parser flags, checked against the engine the unit
 * runs, through the shared change of the server's arguments (./argvChange.ts).
 */
import { parserChoiceProblem, parserPlanner, type ParserChoice } from '../../engine/engine';
import { ParserChangeError, type ParserChangeDeps } from '../argsEdit';
import { changeServerArgv, type EnableResult } from './argvChange';

export { DROP_IN_NAME } from './sudoers';
export { ParserChangeError, type ParserChangeDeps } from '../argsEdit';
export { findRollbackPlan, rollback, WRITTEN_BY, type EnableResult, type RollbackPlan } from './argvChange';

export async function enableParsers(
  deps: ParserChangeDeps,
  unitName: string,
  choice: ParserChoice,
): Promise<EnableResult> {
  // Before anything is read: a name neither server knows (the unit tells which one it is).
  const problem = parserChoiceProblem(choice);
  if (problem) throw new ParserChangeError(problem);
  return changeServerArgv(deps, unitName, parserPlanner(choice));
}
