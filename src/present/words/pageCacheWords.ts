/**
 * The page cache in words: the load time a restart can expect with the share of the weights
 * cached, the warning of a server that empties the cache, and why warming it does not go ahead.
 */

/** "~9 min: 41% of the weights are cached" (for the restart confirmation). */
export function predictionText(
  predictedMs: number,
  residentBytes: number | undefined,
  totalBytes: number | undefined,
): string {
  const min = predictedMs / 60_000;
  const time = min >= 1.5 ? `~${Math.round(min)} min` : `~${Math.max(1, Math.round(predictedMs / 1000))} s`;
  if (residentBytes === undefined || !totalBytes) return `${time} (page cache unknown)`;
  const pct = Math.floor((residentBytes / totalBytes) * 100);
  return `${time}: ${pct}% of the weights are cached`;
}

/** The server's command line has `flag`, which empties the page cache after every load. */
export function dropCacheWarningText(flag: string): string {
  return `ExecStart has ${flag}: SGLang empties the page cache after each load, so every restart reads the weights cold (and warming the cache first does not help).`;
}

function gb(n: number): string {
  return (n / 1e9).toFixed(1);
}

/** Why warming the page cache does not go ahead. */
export const warmRefusalText = {
  unmeasured: 'the page-cache residency of the model could not be measured (no fincore, no python3)',
  cached: 'the weights are already in the page cache',
  noMemInfo: 'MemAvailable could not be read from /proc/meminfo',
  lowMemory: (needBytes: number, memAvailable: number): string =>
    `not enough free memory: ${gb(needBytes)} GB still to cache (+10 % margin) but MemAvailable is ${gb(memAvailable)} GB; warming would evict memory in use`,
};
