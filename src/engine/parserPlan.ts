/** The parser change a command line needs: the flags set, vLLM's switch added, the diff shown. Pure. */
import { diffArgv } from './argvDiff';
import { ensureSwitch, findServerCommand, setFlag, VLLM_AUTO_TOOL_CHOICE } from './execStart';

export interface ParserChoice {
  readonly toolCallParser: string;
  readonly reasoningParser: string;
}

export type ParserPlan =
  | { readonly kind: 'already-set' }
  | { readonly kind: 'change'; readonly newArgv: readonly string[]; readonly diff: string }
  | { readonly kind: 'unsupported'; readonly reason: string };

export function planParserChange(argv: readonly string[], choice: ParserChoice): ParserPlan {
  const loc = findServerCommand(argv);
  if (!loc) {
    return {
      kind: 'unsupported',
      reason: `no "python -m sglang.launch_server", "sglang serve" or "vllm serve" in ExecStart: ${argv.join(' ').slice(0, 200)}`,
    };
  }
  const withParsers = setFlag(
    setFlag(argv, '--tool-call-parser', choice.toolCallParser),
    '--reasoning-parser',
    choice.reasoningParser,
  );
  const newArgv = loc.engine === 'vllm' ? ensureSwitch(withParsers, VLLM_AUTO_TOOL_CHOICE) : withParsers;
  if (sameArgv(argv, newArgv)) return { kind: 'already-set' };
  return { kind: 'change', newArgv, diff: diffArgv(argv, newArgv) };
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
