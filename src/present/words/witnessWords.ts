/**
 * What the load's witnesses say in the status bar's tooltip and the dashboard: which one moved
 * last, that none moves (stalled), that two disagree, and a stand-in's answers on the server's
 * port. Pure functions of the facts the reducer (monitor/state) reads.
 */
import * as l10n from '@vscode/l10n';

// The witness that moved.

/** A phase began (`phase`: the engine's phase name, kept as it is). */
export function phaseBegan(phase: string): string {
  return l10n.t('"{0}" began', phase);
}

export function shardMoved(done: number, total: number): string {
  return l10n.t('shard {0}/{1}', done, total);
}

export function graphBatchMoved(done: number, total: number): string {
  return l10n.t('CUDA graph batch {0}/{1}', done, total);
}

export function readyLineMoved(): string {
  return l10n.t('the ready line');
}

export function httpOpened(): string {
  return l10n.t('HTTP opened');
}

/** A step the journal's lines announced (`label`: the step's name), or its end. */
export function journalStep(label: string, done: boolean): string {
  return done ? l10n.t('the journal: {0}, done', label) : l10n.t('the journal: {0}', label);
}

export function bytesReadMoved(): string {
  return l10n.t('bytes read');
}

export function gpuMemoryMoved(): string {
  return l10n.t('GPU memory moved');
}

/** `cores`: already formatted ("1.5"). */
export function cpuBusy(cores: string): string {
  return l10n.t('CPU busy ({0} cores)', cores);
}

export function gpuBusy(percent: number): string {
  return l10n.t('GPU busy ({0}%)', percent);
}

// None moves, or two disagree.

/** No witness moved for `seconds`; `last`: the one that moved last (undefined: none since the watch began), at `clock`. */
export function noWitnessMoved(seconds: number, last: string | undefined, clock: string): string {
  return l10n.t('no witness has moved for {0} s (last: {1} at {2})', seconds, last ?? l10n.t('the watch began'), clock);
}

/** Shard and byte percentages far apart; `fewerBytes`: fewer bytes read than shards done. */
export function witnessesDisagree(shardsPercent: number, bytesPercent: number, fewerBytes: boolean): string {
  return fewerBytes
    ? l10n.t(
        'Witnesses disagree: shards {0}% vs bytes read {1}% (fewer bytes read than shards done: the weights are probably in the page cache (cache hits of an mmap load are not counted), or another process tree reads them).',
        shardsPercent,
        bytesPercent,
      )
    : l10n.t(
        'Witnesses disagree: shards {0}% vs bytes read {1}% (more bytes read than shards done: something else in the service reads files, or the shard lines lag).',
        shardsPercent,
        bytesPercent,
      );
}

// A stand-in on the server's port.

/** `who`: the stand-in in words ("pid 77 (python3)"). */
export function standInGone(port: number, who: string): string {
  return l10n.t('port {0}: {1} no longer listens there', port, who);
}

/** An HTTP answer from a stand-in (`pid`, if known): said, not counted. */
export function standInAnswered(text: string, pid: number | undefined): string {
  const who = pid !== undefined ? l10n.t('pid {0}', pid) : l10n.t('the stand-in');
  return l10n.t('{0} (from {1}, not counted)', text, who);
}

/** "pid 4242 (python3)"; without a pid: a process of another user. */
export function standInWhoWords(pid: number | undefined, command: string | undefined): string {
  if (pid === undefined) return l10n.t('a process of another user (its pid cannot be read)');
  return command ? l10n.t('pid {0} ({1})', pid, command) : l10n.t('pid {0}', pid);
}

/** "port 30001 is answered by pid 4242 (python3), not by sglang-k26.service". */
export function standInWords(port: number, who: string, service: string): string {
  return l10n.t('port {0} is answered by {1}, not by {2}', port, who, service);
}

/** The weights' post-processing step, when some ranks said their weights are loaded. */
export function someRanksDone(): string {
  return l10n.t('some ranks are done');
}
