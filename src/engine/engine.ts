/**
 * What differs between the model servers the extension watches, behind one interface: how to
 * tell one from its command line (`detect`), how its log reads (`grammar`), the phases its load
 * goes through, its parser flags, and its HTTP quirks. `engineFor(argv)` picks the engine.
 * SGLang: ./sglang/sglangEngine.ts; vLLM: ./vllm/vllmEngine.ts. Only this file's names are for
 * target/ (and its types for the layers above); the engines' modules are internal.
 */
import type { LoadPhase } from './events';
import type { LogGrammar } from './logRules';
import { sglangEngine } from './sglang/sglangEngine';
import { vllmEngine } from './vllm/vllmEngine';

/** The engines the extension knows. */
export type EngineId = 'sglang' | 'vllm';

export interface ParserFlags {
  readonly reasoning: readonly string[];
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
  /** True when the command line runs this engine's server. */
  detect(argv: readonly string[]): boolean;
  readonly grammar: LogGrammar;
  /** The load phases its log announces, in order. */
  readonly phases: readonly LoadPhase[];
  readonly parsers: ParserFlags;
  readonly http: HttpQuirks;
  /** The port the server listens on without --port. */
  readonly defaultPort: number;
}

export const ENGINES: readonly Engine[] = [sglangEngine, vllmEngine];

/** The engine a command line runs; undefined when it runs neither. */
export function engineFor(argv: readonly string[]): Engine | undefined {
  return ENGINES.find((engine) => engine.detect(argv));
}

export function engineById(id: EngineId): Engine {
  return id === 'vllm' ? vllmEngine : sglangEngine;
}

// What target/ reads of a command line: through this file only.
export {
  engineOf,
  findServerCommand,
  getFlag,
  modelPathOf,
  setFlag,
  VLLM_AUTO_TOOL_CHOICE,
  type ServerCommandLocation,
} from './execStart';
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
