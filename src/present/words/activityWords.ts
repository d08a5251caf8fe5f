/** The long, quiet steps of a load in the extension's words (not the engine's), by step kind. */
export const ACTIVITY_WORDS = {
  deepgemm: 'compiling DeepGEMM kernels (first start; 10-20 min without a persistent cache)',
  'torch-compile': "torch.compile (compiling the model's graphs: minutes on a first start, cached after)",
  'piecewise-graphs': 'capturing piecewise CUDA graphs (torch.compile, then a graph per token count)',
  'flashinfer-jit': 'compiling flashinfer kernels (JIT: a first start only)',
  autotune: 'autotuning kernels (flashinfer)',
  'post-shards': 'processing weights after the last shard',
} as const;
