import type { LogFacts } from '../../src/engine/advice/logFacts';

const S = 1000;

/** What a load's log says, for the advice rules: a 275 s SGLang load with the single-thread loader, changed by `over`. */
export function logFactsOf(over: Partial<LogFacts> = {}): LogFacts {
  return {
    phaseMs: {
      starting: 20 * S,
      'loading weights': 217 * S,
      'allocating KV cache': 5 * S,
      'capturing CUDA graphs': 30 * S,
      'warming up': 3 * S,
    },
    totalMs: 275 * S,
    ready: true,
    activityMs: {},
    shardLoader: 'single-thread',
    graphBatchSizes: undefined,
    autoPrefetchDisabledOn: undefined,
    version: undefined,
    ...over,
  };
}
