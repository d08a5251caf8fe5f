/**
 * What a check found, as facts: the kind of finding and the values it rests on (field values,
 * counts, excerpts quoted from the server's answer). ./findingWords.ts words them, so
 * the judges stay pure and a user reads the finding in their own language. Excerpts are quoted as
 * the server sent them (already JSON-quoted by `around`), never translated.
 */

/** A quoted part of an answer: `content "…"` or `reasoning_content "…"`. */
export interface Excerpt {
  readonly field: 'content' | 'reasoning_content';
  readonly quote: string;
}

/** Why a first turn gives its follow-up nothing to send. */
export type NoFollowUp = 'noAnswer' | 'noToolCall' | 'noReasoning';

/** Why `arguments` of a call is wrong. */
export type ArgumentFault =
  | { readonly kind: 'argsNotString'; readonly args: string }
  | { readonly kind: 'argsNotJson'; readonly args: string }
  | { readonly kind: 'argsSchema'; readonly errors: string };

export type Fact =
  // The answer itself.
  | { readonly kind: 'errorBody'; readonly code?: string; readonly message: string }
  | { readonly kind: 'noMessage'; readonly body: string }
  | { readonly kind: 'http'; readonly status: number; readonly body: string }
  | { readonly kind: 'raw'; readonly text: string }
  | ({ readonly kind: 'excerpt' } & Excerpt)
  // The server's flags.
  | { readonly kind: 'notJsonObject'; readonly body: string }
  | { readonly kind: 'serverArgs'; readonly reasoning: string; readonly tool: string }
  | {
      readonly kind: 'runningFlags';
      readonly reasoning?: string;
      readonly tool?: string;
      readonly switches: readonly { readonly name: string; readonly set: boolean }[];
    }
  | { readonly kind: 'flagShould'; readonly flag: string; readonly expected: string }
  | { readonly kind: 'switchNeeded'; readonly name: string }
  | { readonly kind: 'noRunningProcess' }
  | { readonly kind: 'renamedCommandLine'; readonly argv: string }
  | { readonly kind: 'noServerInfo'; readonly engine: string }
  | { readonly kind: 'serverInfoNotAsked' }
  // Reasoning.
  | {
      readonly kind: 'markersInContent';
      readonly hasReasoning: boolean;
      readonly marker: string;
      readonly excerpt: string;
    }
  | { readonly kind: 'reasoningAndContent'; readonly reasoning: string; readonly content: string }
  | { readonly kind: 'endInReasoning'; readonly marker: string; readonly excerpt: string }
  | {
      readonly kind: 'noAnswerAfterReasoning';
      readonly finishReason: string;
      readonly chars: number;
      readonly excerpt: string;
    }
  | {
      readonly kind: 'reasoningSeparated';
      readonly chars: number;
      readonly reasoning: string;
      readonly content: string;
    }
  | { readonly kind: 'reasoningStillSet'; readonly chars: number; readonly excerpt: string }
  | { readonly kind: 'thinkingStillOn'; readonly marker: string; readonly excerpt: string }
  | { readonly kind: 'noAnswer'; readonly reasoning: string; readonly finishReason: string }
  // Raw tool-call tokens where tool_calls should be.
  | { readonly kind: 'callBeforeThinkEnd' }
  | { readonly kind: 'callInReasoning' }
  | { readonly kind: 'rawToolTokens'; readonly detail?: 'noThinkEnd' | 'sectionBeforeEnd' }
  // Tool calls.
  | { readonly kind: 'noToolCalls'; readonly finishReason: string }
  | { readonly kind: 'finishReasonNot'; readonly finishReason: string; readonly expected: string }
  | { readonly kind: 'callTypeNot'; readonly type: string }
  | { readonly kind: 'callsOther'; readonly index: number; readonly name: string; readonly expected: string }
  | { readonly kind: 'badArguments'; readonly index?: number; readonly fault: ArgumentFault }
  | { readonly kind: 'call'; readonly text: string }
  | { readonly kind: 'calls'; readonly text: string }
  // The turn after a tool result.
  | {
      readonly kind: 'leakedAfterResult';
      readonly marker: string;
      /** The reasoning's length, or its raw value when there is none ("null", "absent"). */
      readonly reasoning: number | string;
    }
  | { readonly kind: 'calledAgain'; readonly calls: string; readonly finishReason: string }
  | { readonly kind: 'emptyFollowUp'; readonly finishReason: string; readonly reasoning: string }
  | { readonly kind: 'resultUnused'; readonly words: string; readonly excerpt: string }
  | { readonly kind: 'answerUsesResult'; readonly reasoningChars?: number; readonly excerpt: string }
  | { readonly kind: 'historyAccepted' }
  | { readonly kind: 'needsFirstTurn'; readonly after: string; readonly status?: string; readonly why: NoFollowUp }
  // Several calls in one answer.
  | {
      readonly kind: 'tooFewCalls';
      readonly calls: number;
      readonly cities: readonly string[];
      readonly finishReason: string;
    }
  | { readonly kind: 'idSwallowed'; readonly id: string }
  | { readonly kind: 'callWithoutId' }
  | { readonly kind: 'idShared'; readonly ids: string }
  | { readonly kind: 'noCallFor'; readonly cities: readonly string[] }
  // Tool-call ids.
  | { readonly kind: 'noCallsForIds' }
  | { readonly kind: 'idsRepeat'; readonly from: string; readonly ids: string }
  | { readonly kind: 'idMissing'; readonly from: string; readonly index: number }
  | { readonly kind: 'idNotFormat'; readonly from: string; readonly id: string; readonly format: string }
  | { readonly kind: 'idOtherFunction'; readonly from: string; readonly id: string; readonly name: string }
  | {
      readonly kind: 'idsSeen';
      readonly format?: string;
      readonly seen: readonly { readonly from: string; readonly ids: readonly string[] }[];
    }
  // A stream.
  | { readonly kind: 'sseUnparsable'; readonly data: string }
  | { readonly kind: 'noSseChunks'; readonly body: string }
  | { readonly kind: 'streamFlaws'; readonly error?: Fact; readonly noDone: boolean }
  // The request.
  | { readonly kind: 'noModel'; readonly reason?: readonly Fact[] }
  | { readonly kind: 'noModelId'; readonly status: number; readonly body: string }
  /** `what`: the request ("GET /v1/models"); undefined when it was reading the running command line. */
  | { readonly kind: 'requestFailed'; readonly what?: string; readonly message: string }
  | { readonly kind: 'requestTimedOut'; readonly what?: string; readonly seconds: number }
  | { readonly kind: 'tooLong'; readonly bytes: number }
  // The budget.
  | {
      readonly kind: 'cut';
      readonly budget: number;
      /** The reasoning used it all (no answer in content). */
      readonly reasoningOnly: boolean;
      readonly then:
        | { readonly kind: 'noRoom' }
        | { readonly kind: 'cutAgain'; readonly first: number; readonly retry: number }
        | { readonly kind: 'retryOutOfTime'; readonly retry: number }
        | { readonly kind: 'retryUnanswered'; readonly retry: number };
      readonly inner: readonly Fact[];
    }
  | { readonly kind: 'retried'; readonly first: number; readonly retry: number; readonly inner: readonly Fact[] }
  // Out of time with the model at work.
  | { readonly kind: 'outOfTime'; readonly limitSeconds: number; readonly twin: boolean; readonly seen: Streamed };

/** What a stream carried before its time ran out. */
export interface Streamed {
  readonly reasoningTokens: number;
  readonly answerTokens: number;
  readonly budget?: number;
  /** Tokens a second, when any came. */
  readonly rate?: number;
}
