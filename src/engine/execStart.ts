/**
 * The server's command line (ExecStart, a container's Path and Args, a pod's command and args):
 * which engine it runs, its flags, and the parser change it needs. Pure: no I/O. systemd's
 * ExecStart syntax is target/systemd/execStartSyntax.ts; the parser change ./parserPlan.
 */
import type { EngineId } from './engine';
import { ENGINES, engineById } from './engines';
import { locateLaunch, type ServerCommandLocation } from './launch';

export { validateParserName } from './parserNames';
export type { ServerCommandLocation } from './launch';

/**
 * Finds the first server command of any engine (each engine's `launch` forms, in ENGINES order):
 * `python[3] [opts] -m sglang.launch_server`, `sglang serve`, `vllm serve`,
 * `python -m vllm.entrypoints.openai.api_server`, ..., also behind wrappers (env, numactl) and
 * with the console script run by its interpreter (`python3 /usr/bin/vllm serve`).
 */
export function findServerCommand(argv: readonly string[]): ServerCommandLocation | null {
  return locateLaunch(argv, ENGINES);
}

/** The server commands as messages name them: `python -m sglang.launch_server`, `sglang serve`, `vllm serve`. */
export function serverCommandForms(): string[] {
  return ENGINES.flatMap((engine) => engine.launch.flatMap((form) => (form.shown ? [form.shown] : [])));
}

/** "A, B or C". */
export function orList(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}` : (words[0] ?? '');
}

/** How messages name the server commands: `"python -m sglang.launch_server", "sglang serve" or "vllm serve"`. */
export function serverCommandNames(): string {
  return orList(serverCommandForms().map((form) => `"${form}"`));
}

/** How messages name the engines: "SGLang or vLLM". */
export function engineLabels(): string {
  return orList(ENGINES.map((engine) => engine.label));
}

/** Which engine's server the command line runs; undefined when it runs none. */
export function engineOf(argv: readonly string[]): EngineId | undefined {
  return findServerCommand(argv)?.engine;
}

interface FlagHit {
  readonly index: number;
  /** `--flag=value` (one element) or `--flag value` (two elements, or one when value is missing). */
  readonly inline: boolean;
  readonly value: string | undefined;
}

function flagHits(argv: readonly string[], flag: string, from: number): FlagHit[] {
  const hits: FlagHit[] = [];
  for (let i = from; i < argv.length; i++) {
    const a = argv[i];
    if (a === flag) {
      const next = argv[i + 1];
      const hasValue = next !== undefined && !next.startsWith('--');
      hits.push({ index: i, inline: false, value: hasValue ? next : undefined });
      if (hasValue) i++;
    } else if (a.startsWith(flag + '=')) {
      hits.push({ index: i, inline: true, value: a.slice(flag.length + 1) });
    }
  }
  return hits;
}

function searchStart(argv: readonly string[]): number {
  return findServerCommand(argv)?.argsStart ?? 0;
}

/** Value of the last occurrence of `flag` (argparse keeps the last one). */
export function getFlag(argv: readonly string[], flag: string): string | undefined {
  const hits = flagHits(argv, flag, searchStart(argv));
  return hits.length > 0 ? hits[hits.length - 1].value : undefined;
}

/**
 * Sets `flag` to `value`: replaces the first occurrence in its own form (`--f v` or `--f=v`),
 * drops later duplicates, appends `--f v` when absent. Returns a new array.
 */
export function setFlag(argv: readonly string[], flag: string, value: string): string[] {
  const hits = flagHits(argv, flag, searchStart(argv));
  if (hits.length === 0) return [...argv, flag, value];
  const out: string[] = [];
  const byIndex = new Map(hits.map((h, n) => [h.index, { hit: h, first: n === 0 }]));
  for (let i = 0; i < argv.length; i++) {
    const entry = byIndex.get(i);
    if (!entry) {
      out.push(argv[i]);
      continue;
    }
    const { hit, first } = entry;
    if (!hit.inline && hit.value !== undefined) i++;
    if (!first) continue;
    if (hit.inline) out.push(`${flag}=${value}`);
    else out.push(flag, value);
  }
  return out;
}

/** Value of --model-path (or its alias --model); for `vllm serve`, its positional model (`vllm serve MODEL`). */
export function modelPathOf(argv: readonly string[]): string | undefined {
  const flag = getFlag(argv, '--model-path') ?? getFlag(argv, '--model');
  if (flag !== undefined) return flag;
  const loc = findServerCommand(argv);
  const positional = loc && engineById(loc.engine).launch.find((f) => f.form === loc.form)?.positionalModel;
  const first = positional ? argv[loc.argsStart] : undefined;
  return first !== undefined && !first.startsWith('-') ? first : undefined;
}

/** Adds a flag without a value (`--enable-auto-tool-choice`) unless it is there already. */
export function ensureSwitch(argv: readonly string[], flag: string): string[] {
  const from = searchStart(argv);
  const present = argv.some((a, i) => i >= from && (a === flag || a.startsWith(flag + '=')));
  return present ? [...argv] : [...argv, flag];
}

/** SGLang's `--api-key K` / `--api-key=K` (the last one wins); undefined when absent or empty. */
export function apiKeyFromArgv(argv: readonly string[]): string | undefined {
  return getFlag(argv, '--api-key') || undefined;
}
