/**
 * What differs between the model servers the extension watches, behind one interface: how its
 * server command appears in a command line (`launch`), how its log reads (`grammar`), the phases
 * its load goes through, its parser names and flags, and its HTTP quirks. `engineFor(argv)` picks
 * the engine. SGLang: ./sglang/sglangEngine.ts; vLLM: ./vllm/vllmEngine.ts, listed in
 * ./engines.ts. Only this file's names are for target/ (and its types for the layers above); the
 * engines' modules are internal.
 */
import type { LoadPhase } from './events';
import { findServerCommand } from './execStart';
import type { LaunchForm } from './launch';
import type { LogGrammar } from './logRules';
import { ENGINES, engineById } from './engines';

/** The engines the extension knows. */
export type EngineId = 'sglang' | 'vllm';

export interface ParserFlags {
  /** The names its `--reasoning-parser` accepts (validateParserName reads them). */
  readonly reasoning: readonly string[];
  /** The names its `--tool-call-parser` accepts. */
  readonly toolCall: readonly string[];
  /** Switches a parser change adds besides the two parser flags (vLLM's `--enable-auto-tool-choice`). */
  readonly switches: readonly string[];
}

export interface HttpQuirks {
  /** Where the server describes itself (its flags among them), newest path first; empty: nowhere. */
  readonly serverInfoPaths: readonly string[];
  /** `/health` answers 200 only once a generation passed (SGLang) rather than once the engine is up (vLLM). */
  readonly healthRunsGeneration: boolean;
}

export interface Engine {
  readonly id: EngineId;
  /** "SGLang", "vLLM". */
  readonly label: string;
  /** How its server command appears in a command line (findServerCommand searches every engine's). */
  readonly launch: readonly LaunchForm[];
  readonly grammar: LogGrammar;
  /** The load phases its log announces, in order. */
  readonly phases: readonly LoadPhase[];
  readonly parsers: ParserFlags;
  readonly http: HttpQuirks;
  /** The port the server listens on without --port. */
  readonly defaultPort: number;
}

export { ENGINES, engineById };

/** The engine a command line runs (its first server command); undefined when it runs none. */
export function engineFor(argv: readonly string[]): Engine | undefined {
  const location = findServerCommand(argv);
  return location ? engineById(location.engine) : undefined;
}

// What target/ reads of a command line: through this file only.
export {
  engineOf,
  findServerCommand,
  getFlag,
  modelPathOf,
  engineLabels,
  serverCommandForms,
  serverCommandNames,
  setFlag,
  type ServerCommandLocation,
} from './execStart';
export type { LaunchForm } from './launch';
export {
  ArgvPlanError,
  parserChoiceProblem,
  parserPlanner,
  planParserChange,
  type ArgvPlanner,
  type ParserChoice,
  type ParserPlan,
} from './parserPlan';
export { groupArgs } from './argvDiff';
export { validateParserName } from './parserNames';
export type { JournalEvent, LoadPhase } from './events';
export type { LogGrammar } from './logRules';
