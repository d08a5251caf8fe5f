/**
 * How many CUDA graphs SGLang captures for a `--cuda-graph-max-bs`: one per batch size of its
 * default list (cuda_graph_runner.py: 1, 2, 4, 8, 12, then steps of 8) up to the bound. Versions
 * differ in the list; a count is only compared with another count of the same list. Only SGLang
 * takes the flag, so only its loads record a bound that this counts.
 */
const HEAD = [1, 2, 4, 8, 12] as const;

export function captureSizesUpTo(maxBs: number): number {
  if (!Number.isFinite(maxBs) || maxBs < 1) return 0;
  const head = HEAD.filter((b) => b <= maxBs).length;
  return head + (maxBs >= 16 ? Math.floor((maxBs - 16) / 8) + 1 : 0);
}
