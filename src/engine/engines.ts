/**
 * The engines the extension knows, one entry each: a new engine is its folder (its Engine:
 * launch forms, grammar, parsers, HTTP quirks) and a line here (docs/backends.md). The order is
 * the order a command line is searched in and the first is the default (a name checked without an
 * engine). The layers above read this list through ./engine.ts.
 */
import type { Engine, EngineId } from './engine';
import { sglangEngine } from './sglang/sglangEngine';
import { vllmEngine } from './vllm/vllmEngine';

export const ENGINES: readonly Engine[] = [sglangEngine, vllmEngine];

/** The engine of that id (the first engine for an id no engine has: a value read from outside). */
export function engineById(id: EngineId): Engine {
  return ENGINES.find((engine) => engine.id === id) ?? ENGINES[0]!;
}
