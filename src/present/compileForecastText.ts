/**
 * The compiles an empty kernel cache adds to the next start, in words: what the restart
 * confirmation says of each, and how to keep the cache. Pure; monitor/eta/compileForecast.ts
 * foresees the steps.
 */
import * as l10n from '@vscode/l10n';
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

function cacheName(kind: ActivityKind): string {
  switch (kind) {
    case 'deepgemm':
      return l10n.t('the DeepGEMM kernel cache');
    case 'piecewise-graphs':
      return l10n.t("torch.compile's cache (Inductor, for the piecewise CUDA graphs)");
    case 'torch-compile':
      return l10n.t("torch.compile's cache");
    default:
      return kind;
  }
}

function stepText(s: ForeseenStep): string {
  const length = formatEta(s.lowMs, s.highMs).replace(/ left$/, '');
  const about = formatEta(s.ms).replace(/ left$/, '');
  return s.from === 'history'
    ? l10n.t(
        "{0} ({1}) is empty: this start compiles its kernels first, about {2} ({3}, as in this server's previous loads)",
        cacheName(s.kind),
        s.dir,
        about,
        length,
      )
    : l10n.t(
        '{0} ({1}) is empty: this start compiles its kernels first, about {2} ({3}, from the published logs)',
        cacheName(s.kind),
        s.dir,
        about,
        length,
      );
}

function adviceOf(steps: readonly ForeseenStep[], engine: Launch['engine']): string {
  const parts: string[] = [];
  for (const s of steps) {
    if (s.kind === 'deepgemm')
      parts.push(
        l10n.t(
          "keep the DeepGEMM kernels: set SGLANG_DG_CACHE_DIR to a persistent folder (the unit's Environment=, or a Docker volume: {0}), or fill it ahead while the old server serves with {1} and the server's own arguments",
          '-v deepgemm:/cache/deep_gemm -e SGLANG_DG_CACHE_DIR=/cache/deep_gemm',
          '`python3 -m sglang.compile_deep_gemm`',
        ),
      );
    else if (engine === 'sglang')
      parts.push(
        l10n.t(
          "keep torch.compile's cache: set TORCHINDUCTOR_CACHE_DIR to a persistent folder (the default under /tmp is lost when /tmp is cleared or the container is recreated)",
        ),
      );
    else
      parts.push(
        l10n.t(
          "keep vLLM's compile cache: set VLLM_CACHE_ROOT to a persistent folder or mount one ({0}); vLLM has no separate precompile command, the first start fills it",
          '-v vllm-cache:/root/.cache/vllm',
        ),
      );
  }
  return l10n.t('To skip this next time, {0}.', parts.join('; '));
}
