/**
 * The published figures behind each advice, where they were published, and from which engine
 * release the flag exists. A minimum is the first release known to carry the change (merged
 * pull request -> the next release), rounded up when the exact release was not confirmed: an
 * advice is held back from an older engine, never offered to one that would refuse the flag.
 */
import type { LogFacts } from './logFacts';
import {
  benchmarksSource,
  deepGemmFigure,
  deepGemmManual,
  graphMaxBsFigure,
  multiThreadFigure,
  prefetchFigure,
  warmCacheFigure,
  warmCacheManual,
} from '../../present/words/adviceWords';

export type AdviceId =
  | 'sglang-multithread-load'
  | 'vllm-prefetch'
  | 'deepgemm-precompile'
  | 'cuda-graph-max-bs'
  | 'warm-page-cache';

export interface CatalogueEntry {
  /** The published figure in the display language, its measured numbers written here. */
  readonly figure: () => string;
  readonly sources: readonly string[];
  /** The first engine release that accepts the change; undefined: no flag, or every release. */
  readonly minVersion?: string;
  /** The log itself proves the engine knows the flag (it names it). */
  readonly provenByLog?: (log: LogFacts) => boolean;
  /** Why it is not a command-line change that can be applied from here. */
  readonly manual?: () => string;
}

export const CATALOGUE: Readonly<Record<AdviceId, CatalogueEntry>> = {
  'sglang-multithread-load': {
    figure: () => multiThreadFigure('DeepSeek-R1', [217, 65], [60, 32]),
    sources: ['https://github.com/sgl-project/sglang/pull/7277', 'https://github.com/sgl-project/sglang/pull/7943'],
    // #7277 merged in June 2025 (after v0.4.7); v0.4.9 is the first release counted on.
    minVersion: '0.4.9',
  },
  'vllm-prefetch': {
    figure: () => prefetchFigure('DeepSeek-V3-0324', '8xB200', [1500, 435], [3660, 215], ['NFS', 'Lustre']),
    sources: ['https://github.com/vllm-project/vllm/pull/36012', 'https://github.com/vllm-project/vllm/pull/51339'],
    // #36012 opened 2026-03-04 (the flag itself came with #24469, v0.11.0); v0.18.0 is the first counted on.
    minVersion: '0.18.0',
    // "Auto-prefetch is disabled ... start vLLM with --safetensors-load-strategy=prefetch": vLLM names the value itself.
    provenByLog: (log) => log.autoPrefetchDisabledOn !== undefined,
  },
  'deepgemm-precompile': {
    figure: () => deepGemmFigure('"typically 10-20 mins if you have not run sglang.compile_deep_gemm"'),
    sources: [
      'https://github.com/sgl-project/sglang/issues/15891',
      'https://github.com/sgl-project/sglang/issues/24453',
      'https://github.com/sgl-project/sglang/issues/29170',
    ],
    manual: deepGemmManual,
  },
  'cuda-graph-max-bs': {
    figure: () => graphMaxBsFigure('--cuda-graph-max-bs', 2025, 52, 'H200'),
    sources: [
      'https://github.com/sgl-project/sglang/pull/10590',
      'https://github.com/sgl-project/sglang/pull/10372',
      'https://github.com/sgl-project/sglang/pull/2360',
    ],
    // #1809 (October 2024) added the bound; the name --cuda-graph-max-bs is v0.4.0's (#2360, December 2024).
    minVersion: '0.4.0',
  },
  'warm-page-cache': {
    figure: () => warmCacheFigure(0.33),
    sources: [benchmarksSource('BENCHMARKS.md', 'page-cache pre-warm')],
    manual: warmCacheManual,
  },
};
