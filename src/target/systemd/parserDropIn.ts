/**
 * The "enable parsers" flow on the GPU host: the parser flags, checked against the engine the
 * unit runs, through the shared change of the server's arguments (./argvChange.ts).
 */
import { planParserChange, validateParserName, VLLM_AUTO_TOOL_CHOICE, type ParserChoice } from '../../engine/engine';
import { changeServerArgv, ParserChangeError, type EnableResult, type ParserChangeDeps } from './argvChange';

export { DROP_IN_NAME } from './sudoers';
export {
  findRollbackPlan,
  ParserChangeError,
  rollback,
  WRITTEN_BY,
  type EnableResult,
  type ParserChangeDeps,
  type RollbackPlan,
} from './argvChange';

export async function enableParsers(
  deps: ParserChangeDeps,
  unitName: string,
  choice: ParserChoice,
): Promise<EnableResult> {
  const names = [
    ['tool-call', choice.toolCallParser],
    ['reasoning', choice.reasoningParser],
  ] as const;
  // Before anything is read: a name neither server knows (the unit tells which one it is, below).
  for (const [kind, name] of names) {
    const error = validateParserName(kind, name);
    if (error && validateParserName(kind, name, 'vllm')) throw new ParserChangeError(error);
  }
  return changeServerArgv(deps, unitName, {
    plan: (argv, location) => {
      for (const [kind, name] of names) {
        const error = validateParserName(kind, name, location.engine);
        if (error) throw new ParserChangeError(error);
      }
      return planParserChange(argv, choice);
    },
    label: (location) =>
      `--tool-call-parser ${choice.toolCallParser} --reasoning-parser ${choice.reasoningParser}${location.engine === 'vllm' ? ` ${VLLM_AUTO_TOOL_CHOICE}` : ''}`,
  });
}
