/** vLLM as an Engine (../engine.ts): `vllm serve` or `python -m vllm.entrypoints.openai.api_server`. */
import type { Engine } from '../engine';
import { LOAD_PHASES } from '../events';
import { vllmGrammar } from './vllmLog';
import { VLLM_AUTO_TOOL_CHOICE, VLLM_REASONING_PARSERS, VLLM_TOOL_CALL_PARSERS } from './vllmParsers';

export const vllmEngine: Engine = {
  id: 'vllm',
  label: 'vLLM',
  launch: [
    // The older entry point; not named in messages.
    { form: 'vllm api_server', modules: ['vllm.entrypoints.openai.api_server'] },
    {
      form: 'vllm serve',
      modules: ['vllm.entrypoints.cli.main', 'vllm'],
      executable: 'vllm',
      subcommand: 'serve',
      positionalModel: true,
      shown: 'vllm serve',
    },
  ],
  grammar: vllmGrammar,
  // vLLM names no warm-up of its own: its API server comes up, then the first completion is the proof.
  phases: LOAD_PHASES,
  parsers: {
    reasoning: VLLM_REASONING_PARSERS,
    toolCall: VLLM_TOOL_CALL_PARSERS,
    switches: [VLLM_AUTO_TOOL_CHOICE],
  },
  // No /server_info (only with VLLM_SERVER_DEV_MODE=1, as text): the flags come from the command line.
  http: { serverInfoPaths: [], healthRunsGeneration: false },
  defaultPort: 8000,
};
