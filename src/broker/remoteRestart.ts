/**
 * A client's restart, run by the owner's fleet (its one door, the restart rule): the questions
 * the owner asks back (the confirmation, follow-or-restart) are answered here by this window's
 * own dialogs; the answer is rebuilt as the fleet's RestartAnswer.
 */
import type { RestartAnswer, RestartOptions, ServerSnapshot } from '../fleet/fleetTypes';
import type { RestartQuestions } from '../fleet/restart/restartVerb';
import type { BrokerClient, Call } from './client';
import type { ReplyOf } from './verbs';

export async function restartThroughOwner(
  client: BrokerClient,
  name: string,
  options: RestartOptions & RestartQuestions,
  replyOf: (call: Call<'restart'>) => Promise<ReplyOf<'restart'>>,
  snapshot: () => ServerSnapshot,
): Promise<RestartAnswer | undefined> {
  // The confirmation is the owner's to put (its own confirmRestart); the choice is asked when this caller has one.
  const asks: 'choose'[] = options.choose ? ['choose'] : [];
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
          ? // No question of its own: its caller asked already (the rolling restart, the agent's tool, a confirmed change).
            options.confirm === undefined || (await options.confirm())
          : ((await options.choose?.(reason ?? '')) ?? 'cancel'),
    },
  );
  const value = await replyOf(call);
  if (value === null) return undefined;
  const outcome = call.outcome;
  return value.kind === 'restarted'
    ? { kind: 'restarted', outcome, issued: value.issued, snapshot: snapshot() }
    : { kind: 'watched', reason: value.reason, outcome };
}
