'use strict';
// vLLM's command line: `vllm serve MODEL [flags]` (vllm/entrypoints/cli/serve.py) and
// `python -m vllm.entrypoints.openai.api_server --model MODEL [flags]`, with the checks vLLM makes
// before the engine starts (vllm/entrypoints/openai/cli_args.py validate_parsed_serve_args,
// api_server.py: unknown parser names). See docs/vllm-server.md §1 and §7.

// vllm/reasoning/__init__.py, vllm/tool_parsers/__init__.py (the names the tests use, and a few more)
const REASONING_PARSERS = [
  'deepseek_r1',
  'deepseek_v3',
  'glm45',
  'kimi_k2',
  'kimi_k3',
  'minimax_m2',
  'mistral',
  'openai_gptoss',
  'qwen3',
  'step3',
];
const TOOL_CALL_PARSERS = [
  'deepseek_v3',
  'deepseek_v31',
  'glm45',
  'hermes',
  'kimi_k2',
  'kimi_k3',
  'llama3_json',
  'mistral',
  'openai',
  'pythonic',
  'qwen3_coder',
  'qwen3_xml',
  'step3',
];

const BOOLEAN_FLAGS = new Set([
  'enable-auto-tool-choice',
  'trust-remote-code',
  'enforce-eager',
  'disable-log-requests',
  'enable-log-requests',
  'enable-prefix-caching',
  'no-enable-prefix-caching',
  'enable-expert-parallel',
  'disable-custom-all-reduce',
  'enable-chunked-prefill',
  'disable-uvicorn-access-log',
  'headless',
  'help',
]);
const INT_FLAGS = new Set([
  'port',
  'tensor-parallel-size',
  'pipeline-parallel-size',
  'data-parallel-size',
  'max-model-len',
  'max-num-seqs',
  'max-num-batched-tokens',
  'seed',
]);
const ALIASES = { tp: 'tensor-parallel-size', pp: 'pipeline-parallel-size', dp: 'data-parallel-size' };

class ArgError extends Error {
  constructor(message, exitCode, kind) {
    super(message);
    this.exitCode = exitCode;
    this.kind = kind;
  }
}

/**
 * @param {string[]} argv after the executable: `serve MODEL ...` or `-m vllm.entrypoints.openai.api_server ...`
 * @returns {{ok:true,args:object}|{ok:false,error:string,exitCode:number,kind:'usage'|'traceback'}}
 */
function parseVllmArgs(argv) {
  const a = argv.slice();
  let prog = 'vllm serve';
  if (a[0] === '-m') {
    prog = 'api_server.py';
    a.splice(0, 2);
    if (a[0] === 'serve') a.shift();
  } else if (a[0] === 'serve') a.shift();
  const args = {
    model: null,
    served_model_name: null,
    host: null,
    port: 8000,
    tensor_parallel_size: 1,
    reasoning_parser: null,
    tool_call_parser: null,
    enable_auto_tool_choice: false,
    api_key: null,
    max_model_len: null,
    enforce_eager: false,
    gpu_memory_utilization: 0.9,
    trust_remote_code: false,
  };
  const extra = {};
  try {
    for (let i = 0; i < a.length; i++) {
      let tok = a[i];
      if (!tok.startsWith('-')) {
        if (prog === 'vllm serve' && args.model === null) {
          args.model = tok;
          continue;
        }
        throw new ArgError(`unrecognized arguments: ${tok}`, 2, 'usage');
      }
      let value;
      const eq = tok.indexOf('=');
      if (eq >= 0) {
        value = tok.slice(eq + 1);
        tok = tok.slice(0, eq);
      }
      let name = tok.replace(/^--?/, '');
      name = ALIASES[name] || name;
      const key = name.replace(/-/g, '_');
      if (name === 'help' || name === 'h') throw new ArgError(`usage: ${prog} [model_tag] [options]`, 0, 'usage');
      if (BOOLEAN_FLAGS.has(name)) {
        args[key] = value === undefined ? true : !/^(0|false|no)$/i.test(value);
        continue;
      }
      const v = value !== undefined ? value : i + 1 < a.length && !a[i + 1].startsWith('--') ? a[++i] : undefined;
      if (v === undefined) throw new ArgError(`argument --${name}: expected one argument`, 2, 'usage');
      if (INT_FLAGS.has(name)) {
        if (!/^-?\d+$/.test(v)) throw new ArgError(`argument --${name}: invalid int value: '${v}'`, 2, 'usage');
        args[key] = parseInt(v, 10);
        continue;
      }
      if (Object.prototype.hasOwnProperty.call(args, key)) args[key] = v;
      else extra[key] = v;
    }
  } catch (e) {
    if (!(e instanceof ArgError)) throw e;
    return {
      ok: false,
      error: e.exitCode === 0 ? e.message : `usage: ${prog} [model_tag] [options]\n${prog}: error: ${e.message}`,
      exitCode: e.exitCode,
      kind: 'usage',
    };
  }
  if (!args.model) args.model = 'Qwen/Qwen3-0.6B'; // vLLM's default model_tag
  if (args.enable_auto_tool_choice && !args.tool_call_parser)
    return refused(
      'cli_args.py',
      'validate_parsed_serve_args',
      'TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser',
    );
  for (const [what, name, known] of [
    ['tool call parser', args.tool_call_parser, TOOL_CALL_PARSERS],
    ['reasoning parser', args.reasoning_parser, REASONING_PARSERS],
  ]) {
    if (name && !known.includes(name))
      return refused(
        'api_server.py',
        'validate_api_server_args',
        `KeyError: 'invalid ${what}: ${name} (chose from { ${known.join(',')} })'`,
      );
  }
  if (!args.served_model_name) args.served_model_name = args.model;
  return { ok: true, args, extra };
}

/** A command line vLLM refuses after parsing it: the traceback of the check that failed, exit 1. */
function refused(file, fn, last) {
  return { ok: false, kind: 'traceback', exitCode: 1, error: traceback(file, fn, last) };
}

function traceback(file, fn, last) {
  return [
    'Traceback (most recent call last):',
    '  File "/usr/local/bin/vllm", line 10, in <module>',
    '    sys.exit(main())',
    `  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/${file}", line 1, in ${fn}`,
    `    raise ${last.split(':')[0]}(`,
    last,
  ].join('\n');
}

module.exports = { parseVllmArgs, REASONING_PARSERS, TOOL_CALL_PARSERS };
