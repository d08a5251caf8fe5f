'use strict';
// SGLang's DeepGEMM kernel cache, as the real server keeps it (sglang/srt/layers/deep_gemm_wrapper/
// compile_utils.py): DG_JIT_CACHE_DIR is set to $SGLANG_DG_CACHE_DIR, else ~/.cache/deep_gemm, of the
// server's own environment (the unit's Environment=). sim.json `deepGemm: { seconds, bar, keep }` says the
// model uses DeepGEMM (block-FP8 on Hopper): with that folder empty at start, the first CUDA-graph capture
// compiles for `seconds` (the jit shape's busySilence: SGLang's pre-compile banner, its "Try DeepGEMM JIT
// Compiling" line, the "DeepGEMM warmup" bar when `bar`), then writes its kernels there, unless
// `keep: false` (a cache that is not kept: a container without a volume for it, a read-only folder), so
// every start compiles and every forecast finds it empty. With kernels there, no compile.
// SGLANG_ENABLE_JIT_DEEPGEMM=0 turns it off, as in SGLang.
const fs = require('fs');
const os = require('os');
const path = require('path');

function deepGemmDir(env) {
  return env.SGLANG_DG_CACHE_DIR || path.join(env.HOME || os.homedir(), '.cache', 'deep_gemm');
}

function hasKernels(dir) {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** The busySilence of a cold DeepGEMM compile for this start, or null (no DeepGEMM, off, or kernels cached). */
function deepGemmCompile(cfg, env) {
  const dg = cfg.deepGemm;
  if (!dg) return null;
  const flag = env.SGLANG_ENABLE_JIT_DEEPGEMM ?? env.SGL_ENABLE_JIT_DEEPGEMM;
  if (flag != null && /^(0|false|no|off)$/i.test(String(flag).trim())) return null;
  const dir = deepGemmDir(env);
  if (hasKernels(dir)) return null;
  return {
    at: 'cudaGraph',
    atBatch: 0,
    seconds: Number(dg.seconds) > 0 ? Number(dg.seconds) : 150,
    deepGemm: true,
    deepGemmBar: dg.bar !== false,
    gpuUtil: 100,
    cpuShare: 0.4,
    kernelDir: dg.keep === false ? null : dir,
  };
}

/** After the compile: the kernels SGLang's DeepGEMM writes (one folder per kernel, as deep_gemm's JIT cache). */
function keepKernels(dir) {
  if (!dir) return;
  for (const name of ['kernel.gemm_fp8_fp8_bf16_nt.7168x2048', 'kernel.gemm_fp8_fp8_bf16_nt.6144x2560']) {
    const d = path.join(dir, 'cache', name);
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'kernel.cubin'), 'simulated cubin\n');
  }
}

module.exports = { deepGemmCompile, deepGemmDir, keepKernels };
