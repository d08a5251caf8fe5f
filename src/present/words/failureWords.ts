/**
 * What the load's state says when a load fails, a server is lost, a node holds the group back or
 * the run nears its end: the summaries the notifications, the status bar's tooltip, the servers
 * view and the reports show, in the display language. Pure functions of the facts the reducer
 * (monitor/state) decides on; which sentence applies stays the reducer's call.
 */
import * as l10n from '@vscode/l10n';

// How a run ended ("exited with status 1"), as the other sentences embed it.

/** The kernel's OOM killer ended it (systemd's `oom-kill`, Docker's OOMKilled). */
export function killedOutOfMemory(signal: number): string {
  return l10n.t('killed by signal {0} (out of memory: the OOM killer)', signal);
}

/** `signal`: its number, '?' when unknown; `dumped`: it left a core. */
export function killedBySignal(signal: number | string, dumped: boolean): string {
  return dumped ? l10n.t('killed by signal {0} (core dumped)', signal) : l10n.t('killed by signal {0}', signal);
}

export function exitedWithStatus(status: number): string {
  return l10n.t('exited with status {0}', status);
}

/** No exit status known: the manager's result word ("timeout") or its state. */
export function endedAs(result: string): string {
  return l10n.t('ended ({0})', result);
}

// Why a load failed; `exit` is one of the above.

export function didNotStart(exit: string): string {
  return l10n.t('the service did not start: it {0}', exit);
}

export function serviceEnded(exit: string): string {
  return l10n.t('the service {0}', exit);
}

/** A run crashed and its manager (systemd, Docker, ...) waits to restart it; `docker`: by its restart policy. */
export function crashLoopRestarting(manager: string, exit: string, docker: boolean): string {
  return docker
    ? l10n.t(
        'the service crashed and {0} is restarting it ({1}; its restart policy restarts it: crash loop)',
        manager,
        exit,
      )
    : l10n.t(
        'the service crashed and {0} is restarting it ({1}; the unit restarts on failure: crash loop)',
        manager,
        exit,
      );
}

/** A run crashed and its manager restarted it: `counter` is its restart count's name (NRestarts, RestartCount). */
export function crashLoopRestarted(manager: string, exit: string, counter: string, restarts: number): string {
  return l10n.t(
    'the service crashed and {0} restarted it ({1}; {2}={3}: crash loop)',
    manager,
    exit,
    counter,
    restarts,
  );
}

/** As crashLoopRestarted, when how the crashed run ended was not seen (the unit already runs its next run). */
export function crashLoopRestartedExitUnseen(manager: string, counter: string, restarts: number): string {
  return l10n.t('the service crashed and {0} restarted it ({1}={2}: crash loop)', manager, counter, restarts);
}

export function processReplaced(before: number, after: number): string {
  return l10n.t('the service process was replaced (PID {0} -> {1}) before it became ready', before, after);
}

/** A ready server's run ended; `restarter`: the manager restarting it, if one is. */
export function lostAfterReady(exit: string, restarter?: string): string {
  return restarter === undefined
    ? l10n.t('the service {0} after it was ready', exit)
    : l10n.t('the service {0} after it was ready, and {1} is restarting it', exit, restarter);
}

/** The container is not there; `container`: its name, if known; `after`: it was there before. */
export function containerMissing(container: string | undefined, after: boolean): string {
  const name = container ?? l10n.t('the container');
  return after
    ? l10n.t('{0} does not exist any more (docker inspect: no such container)', name)
    : l10n.t('{0} does not exist (docker inspect: no such container)', name);
}

/** systemd does not know the unit; `after`: it knew it before. */
export function unitNotFound(after: boolean): string {
  return after
    ? l10n.t('the unit is no longer known to systemd (LoadState=not-found)')
    : l10n.t('the unit is not known to systemd (LoadState=not-found)');
}

// A multi-node server's nodes; `node` is "node 1 (gpu-b)".

/** A failed node's summary when it names none. */
export function failedWord(): string {
  return l10n.t('failed');
}

/** A node's failure and what its error lines mean (a distributed cause); `behind`: the nodes it waited for. */
export function failureMeaning(summary: string, meaning: string, behind: readonly string[]): string {
  return behind.length > 0
    ? l10n.t('{0} — {1}; behind: {2}', summary, meaning, behind.join(', '))
    : l10n.t('{0} — {1}', summary, meaning);
}

/** A node the group waited for, with its state ("loading, loading weights"); undefined: not watched yet. */
export function nodeBehind(node: string, state: string | undefined): string {
  return l10n.t('{0} ({1})', node, state ?? l10n.t('not watched'));
}

export function nodeUnreachable(node: string, error: string | undefined): string {
  return l10n.t('{0} is unreachable: {1}', node, error ?? connectionLostWord());
}

export function nodeStopped(node: string): string {
  return l10n.t('{0} is stopped (its unit does not run) while the other nodes run: the group cannot serve', node);
}

/** `last`: the node's last signal, if any. */
export function nodeNoProgress(node: string, last: string | undefined): string {
  return l10n.t('{0} makes no progress ({1})', node, last ?? l10n.t('stalled'));
}

// The connection and the run's set end.

export function connectionLostWord(): string {
  return l10n.t('connection lost');
}

export function connectionRestored(): string {
  return l10n.t('connection restored');
}

export function connectionLostBecause(error: string | undefined): string {
  return l10n.t('connection lost: {0}', error ?? l10n.t('unknown error'));
}

/** "Slurm job kimi-k26 reaches its time limit at 18:40, in 14m 59s: Slurm ends it then, and the server stops." */
export function timeLimitNear(label: string, clock: string, left: string, manager: string | undefined): string {
  return l10n.t(
    '{0} reaches its time limit at {1}, in {2}: {3} ends it then, and the server stops.',
    label,
    clock,
    left,
    manager ?? l10n.t('its manager'),
  );
}

// The last signal of a load, as the tooltip shows it.

export function restartSignal(external: boolean): string {
  return external ? l10n.t('the unit was stopped or restarted by someone else') : l10n.t('restart requested');
}

/** The unit's state as systemd (or Docker) names it, and its main PID once the watch is tied to it. */
export function unitSignal(activeState: string, subState: string, pid?: number): string {
  return pid === undefined
    ? l10n.t('unit {0}/{1}', activeState, subState)
    : l10n.t('unit {0}/{1}, PID {2}', activeState, subState, pid);
}
