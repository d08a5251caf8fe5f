/**
 * What torch distributed and SGLang print when the ranks of a multi-node server do not meet
 * or do not keep up (../shared/reference/multi-node-sglang.md), with what it means. Pure.
 * The texts are torch's (c10d TCPStore.cpp, socket.cpp, ProcessGroupNCCL.cpp) and SGLang's
 * (model_runner.py, the barrier after the load); what they mean is worded in
 * present/words/distributedWords.ts.
 */
import * as words from '../present/words/distributedWords';

export type DistributedProblemKind =
  | 'rendezvous-timeout'
  | 'rendezvous-unreachable'
  | 'ranks-did-not-finish-loading'
  | 'nccl-timeout';

export interface DistributedProblem {
  readonly kind: DistributedProblemKind;
  /** What the line means for the operator, in one sentence. */
  readonly meaning: string;
}

interface Rule {
  readonly pattern: RegExp;
  readonly kind: DistributedProblemKind;
  /** What the line means, its figures taken from the match. */
  readonly meaning: (m: RegExpExecArray) => string;
}

const RULES: readonly Rule[] = [
  {
    pattern: /Timed out after (\d+) seconds waiting for clients\. (\d+)\/(\d+) clients joined/,
    kind: 'rendezvous-timeout',
    meaning: (m) => words.rendezvousTimeout(m[2]!, m[3]!, m[1]!),
  },
  {
    // Bounded: an unbounded `[^,]+` scans to the line's end at each repetition of the phrase.
    pattern: /The client socket has timed out after (\S+) while trying to connect to \(([^,]{1,256}), (\d+)\)/,
    kind: 'rendezvous-unreachable',
    meaning: (m) => words.rendezvousUnreachable(m[2]!, m[3]!, m[1]!),
  },
  {
    pattern: /could finish the model loading, but there are other ranks that didn't finish loading/,
    kind: 'ranks-did-not-finish-loading',
    meaning: words.ranksDidNotFinishLoading,
  },
  {
    pattern: /Watchdog caught collective operation timeout|Some NCCL operations have failed or timed out/,
    kind: 'nccl-timeout',
    meaning: words.ncclTimeout,
  },
];

export function distributedProblem(line: string): DistributedProblem | undefined {
  for (const { pattern, kind, meaning } of RULES) {
    const m = pattern.exec(line);
    if (m) return { kind, meaning: meaning(m) };
  }
  return undefined;
}

/** The most telling distributed problem among a failure's lines (the last one), if any. */
export function distributedCause(
  lines: readonly string[],
): (DistributedProblem & { readonly line: string }) | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    const problem = distributedProblem(line);
    if (problem) return { ...problem, line: line.trim().slice(0, 300) };
  }
  return undefined;
}
