/**
 * Parser names SGLang accepts, read from sgl-project/sglang:
 * python/sglang/srt/parser/reasoning_parser.py (ReasoningParser.DetectorMap) and
 * python/sglang/srt/function_call/function_call_parser.py (FunctionCallParser.ToolCallParserEnum).
 * Older releases accept a subset; a name the running version lacks makes the server exit at start,
 * which the monitor reports and Roll back undoes.
 */
import type { EngineId } from './engine';
import { VLLM_REASONING_PARSERS, VLLM_TOOL_CALL_PARSERS } from './vllm/vllmParsers';

export const REASONING_PARSERS: readonly string[] = [
  'kimi_k2',
  'kimi',
  'kimi_k3',
  'deepseek-r1',
  'deepseek-v3',
  'deepseek-v4',
  'glm45',
  'gpt-oss',
  'qwen3',
  'qwen3-thinking',
  'minimax',
  'minimax-append-think',
  'minimax-m3',
  'step3',
  'step3p5',
  'mistral',
  'nemotron_3',
  'interns1',
  'gemma4',
  'hunyuan',
  'mimo',
  'apertus2509',
  'poolside_v1',
  'inkling',
  'cohere_command4',
  'telechat4',
];

export const TOOL_CALL_PARSERS: readonly string[] = [
  'kimi_k2',
  'kimi_k3',
  'k2_horizon',
  'deepseekv3',
  'deepseekv31',
  'deepseekv32',
  'deepseekv4',
  'glm',
  'glm45',
  'glm47',
  'gpt-oss',
  'llama3',
  'mistral',
  'pythonic',
  'qwen',
  'qwen25',
  'qwen3_coder',
  'step3',
  'step3p5',
  'minimax-m2',
  'minimax-m3',
  'hermes',
  'hunyuan',
  'interns1',
  'gemma4',
  'gigachat3',
  'gigachat35',
  'lfm2',
  'ling3',
  'mimo',
  'minicpm5',
  'muse',
  'poolside_v1',
  'spark25',
  'trinity',
  'dots',
  'apertus2509',
  'cohere_command4',
  'inkling',
];

export const DEFAULT_PARSER = 'kimi_k2';

export type ParserKind = 'reasoning' | 'tool-call';

const NAME_SHAPE = /^[a-z0-9_\-.]+$/;

/** Returns null when `name` is a valid parser of that kind for that server, else the reason it is not. */
export function validateParserName(kind: ParserKind, name: string, engine: EngineId = 'sglang'): string | null {
  if (!NAME_SHAPE.test(name)) return `"${name}" is not a parser name (allowed: a-z 0-9 _ - .)`;
  const list =
    engine === 'vllm'
      ? kind === 'reasoning'
        ? VLLM_REASONING_PARSERS
        : VLLM_TOOL_CALL_PARSERS
      : kind === 'reasoning'
        ? REASONING_PARSERS
        : TOOL_CALL_PARSERS;
  if (!list.includes(name))
    return `"${name}" is not a known ${kind} parser of ${engine === 'vllm' ? 'vLLM' : 'SGLang'}`;
  return null;
}
