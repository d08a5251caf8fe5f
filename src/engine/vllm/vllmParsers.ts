/**
 * Parser names vLLM accepts, read from vllm-project/vllm (commit 0064cc9c):
 * vllm/reasoning/__init__.py (_REASONING_PARSERS_TO_REGISTER) and
 * vllm/tool_parsers/__init__.py (_TOOL_PARSERS_TO_REGISTER). Note the spellings that differ
 * from SGLang's (deepseek_r1, deepseek_v3, minimax_m2, ...). Older releases accept a subset.
 */
export const VLLM_REASONING_PARSERS: readonly string[] = [
  'kimi_k2', 'kimi_k3', 'deepseek_r1', 'deepseek_v3', 'deepseek_v4', 'poolside_v1', 'cohere_command3', 'cohere_command4',
  'ernie45', 'gemma4', 'glm45', 'glm47', 'openai_gptoss', 'granite', 'holo2', 'hunyuan_a13b', 'hy_v3', 'mimo',
  'minimax_m2', 'minimax_m2_append_think', 'minimax_m3', 'mistral', 'nemotron_v3', 'olmo3', 'qwen3', 'seed_oss',
  'step3', 'step3p5', 'inkling', 'solar_open2',
];

export const VLLM_TOOL_CALL_PARSERS: readonly string[] = [
  'kimi_k2', 'kimi_k3', 'deepseek_v3', 'deepseek_v31', 'deepseek_v32', 'deepseek_v4', 'cohere_command3', 'cohere_command4',
  'ernie45', 'glm45', 'glm47', 'granite-20b-fc', 'granite', 'granite4', 'hermes', 'poolside_v1', 'hunyuan_a13b', 'hy_v3',
  'internlm', 'jamba', 'lfm2', 'llama3_json', 'llama4_json', 'llama4_pythonic', 'longcat', 'mimo', 'minimax_m2',
  'minimax_m3', 'minicpm5', 'mistral', 'olmo3', 'openai', 'phi4_mini_json', 'pythonic', 'qwen3_coder', 'qwen3_xml',
  'seed_oss', 'step3', 'step3p5', 'inkling', 'xlam', 'gigachat3', 'functiongemma', 'gemma4', 'apertus', 'solar_open2',
];
