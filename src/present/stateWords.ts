/**
 * The state, phase and step words as a user reads them, in the display language. The monitor and
 * the engines keep their English words as values (compared in code, written in JSON for scripts);
 * only what is shown goes through here. Pure.
 */
import * as l10n from '@vscode/l10n';
import type { Verdict } from '../monitor/state/loadStateTypes';
import type { LoadPhase } from '../engine/events';
import type { Activity } from '../engine/activity';
import type { ActivityKind } from '../engine/events';

/** "ready", "loading", ... in the display language; "queued" and "not watched" too. */
export function verdictWord(verdict: Verdict | 'queued' | 'not watched'): string {
  switch (verdict) {
    case 'stopped':
      return l10n.t('stopped');
    case 'stopping':
      return l10n.t('stopping');
    case 'restarting':
      return l10n.t('restarting');
    case 'loading':
      return l10n.t('loading');
    case 'warming up':
      return l10n.t('warming up');
    case 'ready':
      return l10n.t('ready');
    case 'unhealthy':
      return l10n.t('unhealthy');
    case 'failed':
      return l10n.t('failed');
    case 'unreachable':
      return l10n.t('unreachable');
    case 'stalled':
      return l10n.t('stalled');
    case 'queued':
      return l10n.t('queued');
    case 'not watched':
      return l10n.t('not watched');
  }
}

/** A load phase in the display language. */
export function phaseWord(phase: LoadPhase): string {
  switch (phase) {
    case 'starting':
      return l10n.t('starting');
    case 'loading weights':
      return l10n.t('loading weights');
    case 'allocating KV cache':
      return l10n.t('allocating KV cache');
    case 'capturing CUDA graphs':
      return l10n.t('capturing CUDA graphs');
    case 'warming up':
      return l10n.t('warming up');
    case 'ready':
      return l10n.t('ready');
  }
}

function activityWord(kind: ActivityKind): string {
  switch (kind) {
    case 'deepgemm':
      return l10n.t('compiling DeepGEMM kernels (first start; 10-20 min without a persistent cache)');
    case 'torch-compile':
      return l10n.t("torch.compile (compiling the model's graphs: minutes on a first start, cached after)");
    case 'piecewise-graphs':
      return l10n.t('capturing piecewise CUDA graphs (torch.compile, then a graph per token count)');
    case 'flashinfer-jit':
      return l10n.t('compiling flashinfer kernels (JIT: a first start only)');
    case 'autotune':
      return l10n.t('autotuning kernels (flashinfer)');
    case 'post-shards':
      return l10n.t('processing weights after the last shard');
  }
}

/** The step under way in the display language: engine/activity's activityLabel, translated. */
export function activityText(activity: Activity): string {
  const count =
    activity.done !== undefined && activity.total !== undefined ? ` ${activity.done}/${activity.total}` : '';
  return `${activityWord(activity.kind)}${count}${activity.note ? ` (${activity.note})` : ''}`;
}
