/**
 * The page cache in words, in the display language: the load time a restart can expect with the
 * share of the weights cached, the warning of a server that empties the cache, and why warming it
 * does not go ahead.
 */
import * as l10n from '@vscode/l10n';

/** "~9 min: 41% of the weights are cached" (for the restart confirmation). */
export function predictionText(
  predictedMs: number,
  residentBytes: number | undefined,
  totalBytes: number | undefined,
): string {
  const min = predictedMs / 60_000;
  const time =
    min >= 1.5 ? l10n.t('~{0} min', Math.round(min)) : l10n.t('~{0} s', Math.max(1, Math.round(predictedMs / 1000)));
  if (residentBytes === undefined || !totalBytes) return l10n.t('{0} (page cache unknown)', time);
  const pct = Math.floor((residentBytes / totalBytes) * 100);
  return l10n.t('{0}: {1}% of the weights are cached', time, pct);
}

/** The server's command line has `flag`, which empties the page cache after every load. */
export function dropCacheWarningText(flag: string): string {
  return l10n.t(
    'ExecStart has {0}: SGLang empties the page cache after each load, so every restart reads the weights cold (and warming the cache first does not help).',
    flag,
  );
}

function gb(n: number): string {
  return (n / 1e9).toFixed(1);
}

/** Why warming the page cache does not go ahead (read when said: in the display language of that moment). */
export const warmRefusalText = {
  get unmeasured(): string {
    return l10n.t('the page-cache residency of the model could not be measured (no fincore, no python3)');
  },
  get cached(): string {
    return l10n.t('the weights are already in the page cache');
  },
  get noMemInfo(): string {
    return l10n.t('MemAvailable could not be read from /proc/meminfo');
  },
  lowMemory: (needBytes: number, memAvailable: number): string =>
    l10n.t(
      'not enough free memory: {0} GB still to cache (+10 % margin) but MemAvailable is {1} GB; warming would evict memory in use',
      gb(needBytes),
      gb(memAvailable),
    ),
};
