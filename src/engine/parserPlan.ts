/** The parser change a command line needs: the flags set, the engine's switches added (vLLM's), the diff shown. Pure. */
import { diffArgv } from './argvDiff';
import { ENGINES, engineById } from './engines';
import { ensureSwitch, findServerCommand, serverCommandNames, setFlag, type ServerCommandLocation } from './execStart';
import { validateParserName } from './parserNames';
import { noServerCommandIn } from '../present/words/argsEditWords';

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
      reason: noServerCommandIn(serverCommandNames(), argv.join(' ').slice(0, 200)),
    };
  }
  const withParsers = setFlag(
    setFlag(argv, '--tool-call-parser', choice.toolCallParser),
    '--reasoning-parser',
    choice.reasoningParser,
  );
  const newArgv = engineById(loc.engine).parsers.switches.reduce(ensureSwitch, withParsers);
  if (sameArgv(argv, newArgv)) return { kind: 'already-set' };
  return { kind: 'change', newArgv, diff: diffArgv(argv, newArgv) };
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * A change of the server's arguments, whatever edits them (a target's drop-in, compose file, or
 * the user by hand): the new command line for the current one, and the flags in words.
 */
export interface ArgvPlanner {
  /** The change for this command line (may throw ArgvPlanError: a name this engine refuses). */
  plan(argv: readonly string[], location: ServerCommandLocation): ParserPlan;
  /** The flags in words, for the log and the drop-in's comment: `--cuda-graph-max-bs 128`; without a location, the engine is unknown. */
  label(location?: ServerCommandLocation): string;
}

/** A planned change the engine refuses (a parser name it does not know). */
export class ArgvPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArgvPlanError';
  }
}

const PARSER_KINDS = [
  ['tool-call', 'toolCallParser'],
  ['reasoning', 'reasoningParser'],
] as const;

/**
 * Why a choice is refused by every engine (checked before anything is read): the first engine's
 * reason; null when each name is known to some engine.
 */
export function parserChoiceProblem(choice: ParserChoice): string | null {
  for (const [kind, key] of PARSER_KINDS) {
    const errors = ENGINES.map((engine) => validateParserName(kind, choice[key], engine.id));
    if (errors.every((error) => error !== null)) return errors[0]!;
  }
  return null;
}

/** The parser flags as an ArgvPlanner: the names checked against the engine the command line runs. */
export function parserPlanner(choice: ParserChoice): ArgvPlanner {
  return {
    plan: (argv, location) => {
      for (const [kind, key] of PARSER_KINDS) {
        const error = validateParserName(kind, choice[key], location.engine);
        if (error) throw new ArgvPlanError(error);
      }
      return planParserChange(argv, choice);
    },
    label: (location) =>
      [
        `--tool-call-parser ${choice.toolCallParser} --reasoning-parser ${choice.reasoningParser}`,
        ...(location ? engineById(location.engine).parsers.switches : []),
      ].join(' '),
  };
}
