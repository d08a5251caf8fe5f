/** SGLang as an Engine (../engine.ts): `python -m sglang.launch_server` or `sglang serve`. */
import type { Engine } from '../engine';
import { LOAD_PHASES } from '../events';
import { sglangGrammar } from './sglangLog';
import { SGLANG_REASONING_PARSERS, SGLANG_TOOL_CALL_PARSERS } from './sglangParsers';

/** SGLang's server-info paths, newest first (`/get_server_info` before v0.4.x). */
const SERVER_INFO_PATHS: readonly string[] = ['/server_info', '/get_server_info'];

export const sglangEngine: Engine = {
  id: 'sglang',
  label: 'SGLang',
  launch: [
    { form: 'launch_server', modules: ['sglang.launch_server'], shown: 'python -m sglang.launch_server' },
    {
      form: 'sglang serve',
      modules: ['sglang.cli', 'sglang'],
      executable: 'sglang',
      subcommand: 'serve',
      shown: 'sglang serve',
    },
  ],
  grammar: sglangGrammar,
  phases: LOAD_PHASES,
  parsers: { reasoning: SGLANG_REASONING_PARSERS, toolCall: SGLANG_TOOL_CALL_PARSERS, switches: [] },
  http: { serverInfoPaths: SERVER_INFO_PATHS, healthRunsGeneration: true },
  defaultPort: 30000,
};
