/**
 * What a multi-node server's failure means when its ranks do not meet or do not keep up, in the
 * display language. Pure functions of the facts engine/distributed.ts reads from torch's and
 * SGLang's own log lines (which stay quoted as they are).
 */
import * as l10n from '@vscode/l10n';

export function rendezvousTimeout(joined: string, expected: string, seconds: string): string {
  return l10n.t(
    'only {0} of {1} ranks reached the rendezvous (--dist-init-addr) within {2} s: a node did not start, or cannot reach node rank 0',
    joined,
    expected,
    seconds,
  );
}

/** `within`: torch's own duration ("600000ms", "30s"). */
export function rendezvousUnreachable(host: string, port: string, within: string): string {
  return l10n.t(
    'this node could not reach the rendezvous at {0}:{1} (--dist-init-addr) within {2}: node rank 0 is down or unreachable from here',
    host,
    port,
    within,
  );
}

export function ranksDidNotFinishLoading(): string {
  return l10n.t('another node did not finish loading its weights in time (out of memory, a crash, or a slow node)');
}

export function ncclTimeout(): string {
  return l10n.t(
    'an NCCL collective timed out: another rank died or hangs (raise --dist-timeout only if the nodes are merely slow)',
  );
}
