'use strict';
// Command-line parsing, argparse-like, for `python -m sglang.launch_server ARGS` and `sglang serve ARGS`.
// Unknown flags are kept (snake_cased) and otherwise ignored.

const REASONING_PARSERS = [
  'deepseek-r1',
  'deepseek-v3',
  'glm45',
  'gpt-oss',
  'kimi',
  'kimi_k2',
  'minimax',
  'minimax-append-think',
  'qwen3',
  'qwen3-thinking',
  'step3',
];
const TOOL_CALL_PARSERS = [
  'deepseekv3',
  'deepseekv31',
  'glm',
  'glm45',
  'gpt-oss',
  'kimi_k2',
  'llama3',
  'mistral',
  'pythonic',
  'qwen',
  'qwen25',
  'qwen3_coder',
  'step3',
];

// flags that take no value
const BOOLEAN_FLAGS = new Set([
  'trust-remote-code',
  'weight-loader-drop-cache-after-load',
  'weight-loader-disable-mmap',
  'skip-server-warmup',
  'enable-metrics',
  'disable-cuda-graph',
  'disable-piecewise-cuda-graph',
  'disable-radix-cache',
  'enable-torch-compile',
  'log-requests',
  'enable-dp-attention',
  'skip-tokenizer-init',
  'is-embedding',
  'enable-cache-report',
  'disable-custom-all-reduce',
  'enable-mixed-chunk',
  'show-time-cost',
  'enable-p2p-check',
  'help',
]);

const INT_FLAGS = new Set([
  'tp',
  'tp-size',
  'dp',
  'dp-size',
  'port',
  'context-length',
  'max-running-requests',
  'chunked-prefill-size',
  'max-prefill-tokens',
  'random-seed',
  'cuda-graph-max-bs',
  'ep-size',
  'nnodes',
  'node-rank',
  'dist-timeout',
]);

function usage() {
  return 'usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH] [--host HOST] [--port PORT] ...';
}

/**
 * @param {string[]} argv arguments after the interpreter (may start with `-m sglang.launch_server` or `serve`)
 * @returns {{ok:true,args:object,unknown:string[]}|{ok:false,error:string,exitCode:number}}
 */
function parseArgs(argv) {
  const a = argv.slice();
  // strip the launcher prefix
  if (a[0] === '-m' && a.length > 1) a.splice(0, 2);
  else if (a[0] === 'serve') a.splice(0, 1);
  else if (a[0] === 'sglang' && a[1] === 'serve') a.splice(0, 2);
  else if (/launch_server(\.py)?$/.test(a[0] || '')) a.splice(0, 1);

  const args = {
    model_path: null,
    served_model_name: null,
    tokenizer_path: null,
    tp_size: 1,
    dp_size: 1,
    host: '127.0.0.1',
    port: 30000,
    trust_remote_code: false,
    reasoning_parser: null,
    tool_call_parser: null,
    weight_loader_drop_cache_after_load: false,
    weight_loader_disable_mmap: false,
    load_format: 'auto',
    context_length: null,
    mem_fraction_static: null,
    skip_server_warmup: false,
    chat_template: null,
    chunked_prefill_size: 8192,
    max_prefill_tokens: 16384,
    max_running_requests: null,
    random_seed: null,
    nnodes: 1,
    node_rank: 0,
    dist_init_addr: null,
    dist_timeout: null, // multi-node (dist.js)
    api_key: null, // --api-key KEY / --api-key=KEY: every path but /health* and /metrics* needs `Authorization: Bearer KEY`
  };
  const unknown = [];
  const extra = {};
  for (let i = 0; i < a.length; i++) {
    let tok = a[i];
    if (!tok.startsWith('--')) {
      if (tok === '-h') return { ok: false, error: usage(), exitCode: 0 };
      unknown.push(tok);
      continue;
    }
    let value;
    const eq = tok.indexOf('=');
    if (eq >= 0) {
      value = tok.slice(eq + 1);
      tok = tok.slice(0, eq);
    }
    const name = tok.slice(2);
    const key = name.replace(/-/g, '_');
    const takeValue = () => {
      if (value !== undefined) return value;
      if (i + 1 < a.length && !a[i + 1].startsWith('--')) return a[++i];
      return undefined;
    };
    if (name === 'help') return { ok: false, error: usage(), exitCode: 0 };
    if (BOOLEAN_FLAGS.has(name)) {
      args[key] = value === undefined ? true : !/^(0|false|no)$/i.test(value);
      continue;
    }
    const known =
      Object.prototype.hasOwnProperty.call(args, key) ||
      INT_FLAGS.has(name) ||
      ['model', 'served-model-name', 'tool-call-parser', 'reasoning-parser'].includes(name);
    const v = takeValue();
    if (v === undefined) {
      if (known) return argError(`argument --${name}: expected one argument`);
      extra[key] = true; // unknown flag without value: treat as boolean
      unknown.push(tok);
      continue;
    }
    if (INT_FLAGS.has(name)) {
      if (!/^-?\d+$/.test(v)) return argError(`argument --${name}: invalid int value: '${v}'`);
      const n = parseInt(v, 10);
      if (name === 'tp' || name === 'tp-size') args.tp_size = n;
      else if (name === 'dp' || name === 'dp-size') args.dp_size = n;
      else args[key] = n;
      continue;
    }
    if (name === 'model') {
      args.model_path = v;
      continue;
    }
    if (name === 'reasoning-parser' && !REASONING_PARSERS.includes(v)) {
      return argError(
        `argument --reasoning-parser: invalid choice: '${v}' (choose from ${REASONING_PARSERS.map((s) => `'${s}'`).join(', ')})`,
      );
    }
    if (name === 'tool-call-parser' && !TOOL_CALL_PARSERS.includes(v)) {
      return argError(
        `argument --tool-call-parser: invalid choice: '${v}' (choose from ${TOOL_CALL_PARSERS.map((s) => `'${s}'`).join(', ')})`,
      );
    }
    if (Object.prototype.hasOwnProperty.call(args, key)) args[key] = v;
    else {
      extra[key] = v;
      unknown.push(tok);
    }
  }
  if (!args.model_path) return argError('the following arguments are required: --model-path');
  if (!(args.tp_size >= 1)) return argError('argument --tp-size: must be >= 1');
  if (!(args.port > 0 && args.port < 65536)) return argError(`argument --port: invalid port ${args.port}`);
  if (!(args.nnodes >= 1)) return argError('argument --nnodes: must be >= 1');
  if (!(args.node_rank >= 0 && args.node_rank < args.nnodes))
    return argError(`argument --node-rank: must be in [0, ${args.nnodes})`);
  if (args.tp_size % args.nnodes !== 0)
    return argError(`argument --tp-size: ${args.tp_size} is not divisible by --nnodes ${args.nnodes}`);
  if (args.nnodes > 1 && !args.dist_init_addr)
    return argError('argument --dist-init-addr: required when --nnodes > 1 (HOST:PORT of node rank 0)');
  if (!args.served_model_name) args.served_model_name = args.model_path;
  if (!args.tokenizer_path) args.tokenizer_path = args.model_path;
  return { ok: true, args, extra, unknown };
}

function argError(msg) {
  return { ok: false, error: `${usage()}\nlaunch_server.py: error: ${msg}`, exitCode: 2 };
}

module.exports = { parseArgs, REASONING_PARSERS, TOOL_CALL_PARSERS };
