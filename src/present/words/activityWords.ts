/**
 * The long, quiet steps of a load in the extension's words (not the engine's), by step kind, in the
 * display language of the moment each is read.
 */
import * as l10n from '@vscode/l10n';

export const ACTIVITY_WORDS = {
  get deepgemm(): string {
    return l10n.t('compiling DeepGEMM kernels (first start; 10-20 min without a persistent cache)');
  },
  get 'torch-compile'(): string {
    return l10n.t("torch.compile (compiling the model's graphs: minutes on a first start, cached after)");
  },
  get 'piecewise-graphs'(): string {
    return l10n.t('capturing piecewise CUDA graphs (torch.compile, then a graph per token count)');
  },
  get 'flashinfer-jit'(): string {
    return l10n.t('compiling flashinfer kernels (JIT: a first start only)');
  },
  get autotune(): string {
    return l10n.t('autotuning kernels (flashinfer)');
  },
  get 'post-shards'(): string {
    return l10n.t('processing weights after the last shard');
  },
};
