/** SGLang as an Engine (../engine.ts): `python -m sglang.launch_server` or `sglang serve`. */
import type { Engine } from '../engine';
import { LOAD_PHASES } from '../events';
import { findServerCommand } from '../execStart';
import { REASONING_PARSERS, TOOL_CALL_PARSERS } from '../parserNames';
import { sglangGrammar } from './sglangLog';

/** SGLang's server-info paths, newest first (`/get_server_info` before v0.4.x). */
const SERVER_INFO_PATHS: readonly string[] = ['/server_info', '/get_server_info'];

export const sglangEngine: Engine = {
  id: 'sglang',
  label: 'SGLang',
  detect: (argv) => findServerCommand(argv)?.engine === 'sglang',
  grammar: sglangGrammar,
  phases: LOAD_PHASES,
  parsers: { reasoning: REASONING_PARSERS, toolCall: TOOL_CALL_PARSERS, switches: [] },
  http: { serverInfoPaths: SERVER_INFO_PATHS, healthRunsGeneration: true },
  defaultPort: 30000,
};
