/**
 * The kernel caches a model server's start may need, read on the GPU host in one command: the
 * server's own environment (its process's, so a unit's Environment= and a container's env
 * decide), the cache folders as that process sees them (through /proc/PID/root, so a
 * container's mounts decide), whether each holds files, the model's quantization and the GPUs'
 * names. The parser is pure; what the facts mean for the next load is monitor/eta/compileForecast.ts.
 *
 * Where the engines keep them (read in their source, 2026-12):
 * - SGLang's DeepGEMM JIT kernels (sglang/srt/layers/deep_gemm_wrapper/compile_utils.py): SGLang
 *   sets DG_JIT_CACHE_DIR itself, to $SGLANG_DG_CACHE_DIR or ~/.cache/deep_gemm (so a
 *   DG_JIT_CACHE_DIR of the unit's is overridden); builds with the unified root use
 *   $SGLANG_JIT_CACHE_ROOT/deep_gemm (default ${XDG_CACHE_HOME:-~/.cache}/sglang/deep_gemm).
 *   SGLANG_ENABLE_JIT_DEEPGEMM=0 turns it off.
 * - torch.compile / Inductor (torch/_inductor/runtime/cache_dir_utils.py): $TORCHINDUCTOR_CACHE_DIR,
 *   else $TMPDIR (or /tmp)/torchinductor_<user>: a /tmp that is cleared at boot, or a container's
 *   own, loses it.
 * - vLLM's torch.compile cache (vllm/envs.py, compilation/backends.py):
 *   $VLLM_CACHE_ROOT (default ${XDG_CACHE_HOME:-~/.cache}/vllm)/torch_compile_cache.
 */
import { quote } from '../transport/shell';

/** The variables of the server's environment that decide where (and whether) its caches are. */
export const CACHE_ENV = [
  'HOME',
  'TMPDIR',
  'XDG_CACHE_HOME',
  'SGLANG_DG_CACHE_DIR',
  'SGLANG_JIT_CACHE_ROOT',
  'SGLANG_ENABLE_JIT_DEEPGEMM',
  'SGL_ENABLE_JIT_DEEPGEMM',
  'TORCHINDUCTOR_CACHE_DIR',
  'VLLM_CACHE_ROOT',
  'VLLM_DISABLE_COMPILE_CACHE',
] as const;
export type CacheEnvName = (typeof CACHE_ENV)[number];

/** The cache folders looked at, by what decides each (an env variable, or a default). */
export type CacheDirKey =
  | 'deepgemm-env'
  | 'deepgemm-root'
  | 'deepgemm-home'
  | 'deepgemm-xdg'
  | 'inductor-env'
  | 'inductor-tmp'
  | 'vllm-env'
  | 'vllm-xdg';

export interface CacheDir {
  readonly key: CacheDirKey;
  /** The folder as the server's process sees it. */
  readonly path: string;
  readonly exists: boolean;
  /** Files in it, counted up to FILES_COUNTED. */
  readonly files: number;
}

export interface KernelCacheFacts {
  /** False when the server's process could not be read (not running, another user's without sudo). */
  readonly readable: boolean;
  readonly user?: string;
  readonly env: Readonly<Partial<Record<CacheEnvName, string>>>;
  readonly dirs: readonly CacheDir[];
  /** The model's config.json `quantization_config` (quant_method, weight_block_size), when read. */
  readonly quantization?: { readonly method: string; readonly blockSize: boolean };
  /** nvidia-smi's GPU names. */
  readonly gpus: readonly string[];
}

export const FILES_COUNTED = 100;

/**
 * One POSIX sh command that prints the facts for the server process `pid` and the model folder
 * `modelPath` (its path inside the process's root): `readable 0|1`, `user NAME`, `env NAME=VALUE`
 * per variable set, `dir KEY EXISTS FILES PATH` per folder, `quant METHOD BLOCK`, `gpu NAME`.
 * Values of the environment are only printed and used as quoted paths, never evaluated.
 */
export function kernelCacheCommand(pid: number, modelPath: string | undefined): string {
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`not a process id: ${pid}`);
  const grepNames = CACHE_ENV.join('|');
  const script = [
    'p=$1; m=$2; r=/proc/$p/root',
    'if [ -r /proc/$p/environ ]; then echo readable 1; else echo readable 0; exit 0; fi',
    `E=$(tr '\\0' '\\n' < /proc/$p/environ | grep -E '^(${grepNames})=')`,
    'printf "%s\\n" "$E" | grep . | sed "s/^/env /"',
    'U=$(stat -c %U /proc/$p 2>/dev/null); echo "user $U"',
    'v() { printf "%s\\n" "$E" | sed -n "s/^$1=//p" | head -n 1; }',
    // (no HOME in the environment: Python's expanduser takes the user's passwd entry)
    'H=$(v HOME); [ -n "$H" ] || H=$(getent passwd "$U" | cut -d: -f6)',
    'X=$(v XDG_CACHE_HOME); [ -n "$X" ] || X="$H/.cache"; T=$(v TMPDIR); [ -n "$T" ] || T=/tmp',
    `c() { [ -n "$3" ] || [ "$2" = 0 ] || return 0; if [ -d "$r$4" ]; then e=1; else e=0; fi; n=$(find "$r$4" -type f 2>/dev/null | head -n ${FILES_COUNTED} | wc -l); echo "dir $1 $e $n $4"; }`,
    'D=$(v SGLANG_DG_CACHE_DIR); J=$(v SGLANG_JIT_CACHE_ROOT); I=$(v TORCHINDUCTOR_CACHE_DIR); V=$(v VLLM_CACHE_ROOT)',
    'c deepgemm-env 1 "$D" "$D"; c deepgemm-root 1 "$J" "$J/deep_gemm"',
    'c deepgemm-home 0 "" "$H/.cache/deep_gemm"; c deepgemm-xdg 0 "" "$X/sglang/deep_gemm"',
    'c inductor-env 1 "$I" "$I"; c inductor-tmp 0 "" "$T/torchinductor_$U"',
    'c vllm-env 1 "$V" "$V/torch_compile_cache"; c vllm-xdg 0 "" "$X/vllm/torch_compile_cache"',
    `if [ -n "$m" ] && [ -r "$r$m/config.json" ]; then head -c 200000 "$r$m/config.json" | tr -d '\\n' | sed -n 's/.*"quantization_config" *: *{\\([^}]*\\)}.*/\\1/p' | sed 's/^/quant /'; fi`,
    'nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed "s/^/gpu /"',
  ].join('\n');
  return `sh -c ${quote(script)} kimi-kernel-caches ${pid} ${quote(modelPath ?? '')}`;
}

const DIR_KEYS: readonly string[] = [
  'deepgemm-env',
  'deepgemm-root',
  'deepgemm-home',
  'deepgemm-xdg',
  'inductor-env',
  'inductor-tmp',
  'vllm-env',
  'vllm-xdg',
];

/** The facts of kernelCacheCommand's output. */
export function parseKernelCaches(stdout: string): KernelCacheFacts {
  let readable = false;
  let user: string | undefined;
  const env: Partial<Record<CacheEnvName, string>> = {};
  const dirs: CacheDir[] = [];
  const gpus: string[] = [];
  let quantization: KernelCacheFacts['quantization'];
  for (const line of stdout.split('\n')) {
    const [word = '', ...rest] = line.split(' ');
    const value = rest.join(' ');
    if (word === 'readable') readable = value.trim() === '1';
    else if (word === 'user' && value.trim()) user = value.trim();
    else if (word === 'env') {
      const i = value.indexOf('=');
      const name = value.slice(0, i) as CacheEnvName;
      if (i > 0 && (CACHE_ENV as readonly string[]).includes(name)) env[name] = value.slice(i + 1);
    } else if (word === 'dir') {
      const m = /^(\S+) ([01]) (\d+) (.*)$/.exec(value);
      if (m && DIR_KEYS.includes(m[1]!))
        dirs.push({ key: m[1] as CacheDirKey, exists: m[2] === '1', files: Number(m[3]), path: m[4]! });
    } else if (word === 'quant') {
      const method = /"quant_method" *: *"([^"]*)"/.exec(value)?.[1];
      if (method) quantization = { method, blockSize: /"weight_block_size"/.test(value) };
    } else if (word === 'gpu' && value.trim()) gpus.push(value.trim());
  }
  return { readable, ...(user ? { user } : {}), env, dirs, ...(quantization ? { quantization } : {}), gpus };
}
