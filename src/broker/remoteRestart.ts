/**
 * A client's restart, run by the owner's fleet (its one door, the restart rule): the questions
 * the owner asks back (the confirmation, follow-or-restart) are answered here by this window's
 * own dialogs; the answer is rebuilt as the fleet's RestartAnswer.
 */
import type { RestartAnswer, RestartOptions, ServerSnapshot } from '../fleet/fleetTypes';
import type { RestartQuestions } from '../fleet/restart/restartVerb';
import type { WatchOutcome } from '../monitor/watchTypes';
import type { BrokerClient, Call } from './client';
import type { Question } from './protocol';
import type { ReplyOf } from './verbs';

export async function restartThroughOwner(
  client: BrokerClient,
  name: string,
  options: RestartOptions & RestartQuestions,
  replyOf: (call: Call<'restart'>) => Promise<ReplyOf<'restart'>>,
  snapshot: () => ServerSnapshot,
): Promise<RestartAnswer | undefined> {
  const asks: Question[] = [
    ...(options.confirm ? ['confirm' as const] : []),
    ...(options.choose ? ['choose' as const] : []),
  ];
  const call = client.call(
    'restart',
    {
      server: name,
      asks,
      ...(options.force !== undefined ? { force: options.force } : {}),
      ...(options.issueTimeoutMs !== undefined ? { issueTimeoutMs: options.issueTimeoutMs } : {}),
    },
    {
      ask: async (question, reason) =>
        question === 'confirm'
          ? ((await options.confirm?.()) ?? false)
          : ((await options.choose?.(reason ?? '')) ?? 'cancel'),
    },
  );
  const value = await replyOf(call);
  if (value === null) return undefined;
  const outcome = call.outcome.then((o) => o as WatchOutcome | undefined);
  return value.kind === 'restarted'
    ? { kind: 'restarted', outcome, issued: value.issued, snapshot: snapshot() }
    : { kind: 'attached', reason: value.reason, outcome };
}
