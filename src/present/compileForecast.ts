/**
 * The compiles an empty kernel cache adds to the next start, in words: what the restart
 * confirmation says of each, and how to keep the cache. Pure; monitor/eta/compileForecast.ts
 * foresees the steps.
 */
import type { ActivityKind } from '../engine/events';
import type { CompileForecast, ForeseenStep, Launch } from '../monitor/eta/compileForecast';
import { formatEta } from './etaText';

/** "the DeepGEMM kernel cache (/root/.cache/deep_gemm) is empty: ..." for the confirmation; undefined when none. */
export function compileForecastText(forecast: CompileForecast): string | undefined {
  return forecast.steps.length ? forecast.steps.map(stepText).join('; ') : undefined;
}

/** How to keep the caches found empty, or fill them ahead; undefined when none. */
export function compileForecastAdvice(forecast: CompileForecast): string | undefined {
  return forecast.steps.length && forecast.engine ? adviceOf(forecast.steps, forecast.engine) : undefined;
}

const NAMES: Readonly<Partial<Record<ActivityKind, string>>> = {
  deepgemm: 'the DeepGEMM kernel cache',
  'piecewise-graphs': "torch.compile's cache (Inductor, for the piecewise CUDA graphs)",
  'torch-compile': "torch.compile's cache",
};

function stepText(s: ForeseenStep): string {
  const length = formatEta(s.lowMs, s.highMs).replace(/ left$/, '');
  const from = s.from === 'history' ? "as in this server's previous loads" : 'from the published logs';
  return `${NAMES[s.kind] ?? s.kind} (${s.dir}) is empty: this start compiles its kernels first, about ${formatEta(s.ms).replace(/ left$/, '')} (${length}, ${from})`;
}

function adviceOf(steps: readonly ForeseenStep[], engine: Launch['engine']): string {
  const parts: string[] = [];
  for (const s of steps) {
    if (s.kind === 'deepgemm')
      parts.push(
        "keep the DeepGEMM kernels: set SGLANG_DG_CACHE_DIR to a persistent folder (the unit's Environment=, or a Docker volume: -v deepgemm:/cache/deep_gemm -e SGLANG_DG_CACHE_DIR=/cache/deep_gemm), or fill it ahead while the old server serves with `python3 -m sglang.compile_deep_gemm` and the server's own arguments",
      );
    else if (engine === 'sglang')
      parts.push(
        "keep torch.compile's cache: set TORCHINDUCTOR_CACHE_DIR to a persistent folder (the default under /tmp is lost when /tmp is cleared or the container is recreated)",
      );
    else
      parts.push(
        "keep vLLM's compile cache: set VLLM_CACHE_ROOT to a persistent folder or mount one (-v vllm-cache:/root/.cache/vllm); vLLM has no separate precompile command, the first start fills it",
      );
  }
  return `To skip this next time, ${parts.join('; ')}.`;
}
