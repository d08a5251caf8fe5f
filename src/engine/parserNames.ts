/**
 * Parser names: their shape, the default the extension proposes (Kimi K2's), and the check of a
 * name against an engine's own lists (each engine's folder has them: sglang/sglangParsers.ts,
 * vllm/vllmParsers.ts).
 */
import type { EngineId } from './engine';
import { ENGINES, engineById } from './engines';

export const DEFAULT_PARSER = 'kimi_k2';

export type ParserKind = 'reasoning' | 'tool-call';

const NAME_SHAPE = /^[a-z0-9_\-.]+$/;

/**
 * Returns null when `name` is a valid parser of that kind for that engine (its `parsers` lists,
 * in its own folder), else the reason it is not. Without an engine: the first of ENGINES.
 */
export function validateParserName(kind: ParserKind, name: string, engine: EngineId = ENGINES[0]!.id): string | null {
  if (!NAME_SHAPE.test(name)) return `"${name}" is not a parser name (allowed: a-z 0-9 _ - .)`;
  const { parsers, label } = engineById(engine);
  const list = kind === 'reasoning' ? parsers.reasoning : parsers.toolCall;
  if (!list.includes(name)) return `"${name}" is not a known ${kind} parser of ${label}`;
  return null;
}
