/**
 * A check's findings (./verifyFindings) in the user's language: the evidence of the table, the
 * dashboard, the CLI and the agents' tools. What the server sent (excerpts, JSON, field names such
 * as reasoning_content, finish_reason, tool_calls) is quoted verbatim inside the sentence.
 */
import * as l10n from '@vscode/l10n';
import type { ArgumentFault, Fact, NoFollowUp, Streamed } from './verifyFindings';

/** The evidence shown for a check is at most this long (the table shows its first 120 characters). */
export const EVIDENCE_MAX = 200;
/** Out of time with the model at work says more: what it streamed and how fast. */
const SLOW_EVIDENCE_MAX = 260;

/** In place of a body nested too deeply for JSON.stringify to show. */
export function nestedTooDeeply(): string {
  return l10n.t('(nested too deeply to show)');
}

function oneLine(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function argumentWords(f: ArgumentFault): string {
  switch (f.kind) {
    case 'argsNotString':
      return l10n.t('arguments is {0}, expected a JSON string', f.args);
    case 'argsNotJson':
      return l10n.t('arguments are not JSON: {0}', f.args);
    case 'argsSchema':
      return l10n.t('arguments do not match the schema: {0}', f.errors);
  }
}

function noFollowUpWords(why: NoFollowUp): string {
  switch (why) {
    case 'noAnswer':
      return l10n.t('no answer');
    case 'noToolCall':
      return l10n.t('the first turn has no tool call to answer');
    case 'noReasoning':
      return l10n.t('the first turn has no reasoning to carry back');
  }
}

function streamedWords(s: Streamed): string {
  const of = s.budget !== undefined ? l10n.t(' of the {0} budget', count(s.budget)) : '';
  const where =
    s.answerTokens === 0
      ? l10n.t('still reasoning, {0} tokens{1}, no answer yet', count(s.reasoningTokens), of)
      : l10n.t(
          'still answering, {0} tokens of reasoning and {1} of the answer{2}',
          count(s.reasoningTokens),
          count(s.answerTokens),
          of,
        );
  if (s.rate === undefined) return where;
  const rate = s.rate < 10 ? s.rate.toFixed(1) : String(Math.round(s.rate));
  return s.budget !== undefined
    ? l10n.t('{0}; at {1} token/s the budget takes {2} s', where, rate, Math.ceil(s.budget / s.rate))
    : l10n.t('{0}; {1} token/s', where, rate);
}

/** One finding in words. */
export function factWords(f: Fact): string {
  switch (f.kind) {
    case 'errorBody':
      return f.code !== undefined ? l10n.t('error {0}: {1}', f.code, f.message) : l10n.t('error: {0}', f.message);
    case 'noMessage':
      return l10n.t('no choices[0].message in {0}', f.body);
    case 'http':
      return `HTTP ${f.status}: ${f.body}`;
    case 'raw':
      return f.text;
    case 'excerpt':
      return `${f.field} ${f.quote}`;
    case 'notJsonObject':
      return l10n.t('not a JSON object: {0}', f.body);
    case 'serverArgs':
      return `reasoning_parser=${f.reasoning} tool_call_parser=${f.tool}`;
    case 'runningFlags': {
      const none = l10n.t('(none)');
      const switches = f.switches.map((s) => ` ${s.name} ${s.set ? l10n.t('set') : l10n.t('missing')}`).join('');
      return l10n.t(
        'running process: --reasoning-parser {0} --tool-call-parser {1}{2}',
        f.reasoning ?? none,
        f.tool ?? none,
        switches,
      );
    }
    case 'flagShould':
      return l10n.t('{0} should be "{1}"', f.flag, f.expected);
    case 'switchNeeded':
      return l10n.t('{0} is needed for tool calls', f.name);
    case 'noRunningProcess':
      return l10n.t('no running server process to read the flags of');
    case 'renamedCommandLine':
      return l10n.t('the process renamed its command line: {0}', f.argv);
    case 'noServerInfo':
      return l10n.t('{0} has no /server_info and the process is not readable here', f.engine);
    case 'serverInfoNotAsked':
      return l10n.t('GET /server_info was not asked');
    case 'markersInContent':
      return f.hasReasoning
        ? l10n.t('markers left in content; content has {0}: {1}', f.marker, f.excerpt)
        : l10n.t(
            'reasoning_content null: reasoning parser off or its markers differ; content has {0}: {1}',
            f.marker,
            f.excerpt,
          );
    case 'reasoningAndContent':
      return l10n.t('reasoning_content {0}; content: {1}', f.reasoning, f.content);
    case 'endInReasoning':
      return l10n.t(
        'reasoning_content has {0}: the parser did not stop at the end of the reasoning, the answer stayed in it: reasoning_content {1}',
        f.marker,
        f.excerpt,
      );
    case 'noAnswerAfterReasoning':
      return l10n.t(
        'no answer after the reasoning: content empty, finish_reason {0}; reasoning_content ({1} chars): {2}',
        f.finishReason,
        f.chars,
        f.excerpt,
      );
    case 'reasoningSeparated':
      return l10n.t('reasoning_content ({0} chars): {1}; content: {2}', f.chars, f.reasoning, f.content);
    case 'reasoningStillSet':
      return l10n.t('reasoning_content still set ({0} chars): {1}', f.chars, f.excerpt);
    case 'thinkingStillOn':
      return l10n.t('thinking still on: content has {0}: {1}', f.marker, f.excerpt);
    case 'noAnswer':
      return l10n.t('no answer: content empty, reasoning_content {0}, finish_reason {1}', f.reasoning, f.finishReason);
    case 'callBeforeThinkEnd':
      return l10n.t('</think> missing before the tool-call section (the call stayed in reasoning_content)');
    case 'callInReasoning':
      return l10n.t('tool call inside the reasoning (emitted before </think>) and lost');
    case 'rawToolTokens':
      return f.detail === 'noThinkEnd'
        ? l10n.t(
            'raw tool-call tokens in content (tool-call parser off or wrong, no </think> before the section either)',
          )
        : f.detail === 'sectionBeforeEnd'
          ? l10n.t(
              'raw tool-call tokens in content (tool-call parser off or wrong, the tool section comes before </think>)',
            )
          : l10n.t('raw tool-call tokens in content (tool-call parser off or wrong)');
    case 'noToolCalls':
      return l10n.t('no tool_calls, finish_reason {0}', f.finishReason);
    case 'finishReasonNot':
      return l10n.t('finish_reason {0}, expected "{1}"', f.finishReason, f.expected);
    case 'callTypeNot':
      return l10n.t('tool_calls[0].type {0}, expected "function"', f.type);
    case 'callsOther':
      return l10n.t('tool_calls[{0}] calls {1}, expected "{2}"', f.index, f.name, f.expected);
    case 'badArguments':
      return f.index !== undefined ? `tool_calls[${f.index}]: ${argumentWords(f.fault)}` : argumentWords(f.fault);
    case 'call':
      return l10n.t('call: {0}', f.text);
    case 'calls':
      return l10n.t('calls: {0}', f.text);
    case 'leakedAfterResult':
      return l10n.t(
        'reasoning leaked into content after the tool result ({0} in content); reasoning_content {1}',
        f.marker,
        typeof f.reasoning === 'number' ? l10n.t('{0} chars', f.reasoning) : f.reasoning,
      );
    case 'calledAgain':
      return l10n.t('called a tool again instead of answering: {0}, finish_reason {1}', f.calls, f.finishReason);
    case 'emptyFollowUp':
      return l10n.t(
        'the follow-up turn came back empty: finish_reason {0}, no content, no tool calls; reasoning_content {1}',
        f.finishReason,
        f.reasoning,
      );
    case 'resultUnused':
      return l10n.t("the answer does not use the tool's result (none of {0}): content {1}", f.words, f.excerpt);
    case 'answerUsesResult':
      return f.reasoningChars !== undefined
        ? l10n.t('reasoning_content ({0} chars) separated; content: {1}', f.reasoningChars, f.excerpt)
        : l10n.t('no reasoning on this turn; content: {0}', f.excerpt);
    case 'historyAccepted':
      return l10n.t('history with the reasoning accepted');
    case 'needsFirstTurn':
      return l10n.t(
        'needs the call of "{0}" ({1}): {2}',
        f.after,
        f.status ?? l10n.t('not run'),
        noFollowUpWords(f.why),
      );
    case 'tooFewCalls':
      return f.calls === 1
        ? l10n.t(
            '1 tool call for {0} cities ({1}), finish_reason {2}',
            f.cities.length,
            f.cities.join(', '),
            f.finishReason,
          )
        : l10n.t(
            '{0} tool calls for {1} cities ({2}), finish_reason {3}',
            f.calls,
            f.cities.length,
            f.cities.join(', '),
            f.finishReason,
          );
    case 'idSwallowed':
      return l10n.t('a call swallowed into the id of another: id {0}', f.id);
    case 'callWithoutId':
      return l10n.t('a call without an id');
    case 'idShared':
      return l10n.t('two calls share an id: {0}', f.ids);
    case 'noCallFor':
      return l10n.t('no call for {0}', f.cities.join(', '));
    case 'noCallsForIds':
      return l10n.t('no answer had a tool call to read the ids of');
    case 'idsRepeat':
      return l10n.t('{0}: ids repeat {1}', f.from, f.ids);
    case 'idMissing':
      return l10n.t('{0}: tool_calls[{1}] has no id', f.from, f.index);
    case 'idNotFormat':
      return l10n.t('{0}: id {1} is not {2}', f.from, f.id, f.format);
    case 'idOtherFunction':
      return l10n.t('{0}: id {1} names another function than {2}', f.from, f.id, f.name);
    case 'idsSeen': {
      const seen = f.seen.map((s) => `${s.from}: ${s.ids.map((id) => id || l10n.t('(none)')).join(', ')}`).join('; ');
      return f.format !== undefined ? `${f.format}: ${seen}` : seen;
    }
    case 'sseUnparsable':
      return l10n.t('unparsable SSE data: {0}', f.data);
    case 'noSseChunks':
      return l10n.t('no SSE chunks: {0}', f.body);
    case 'streamFlaws': {
      const notes = [
        ...(f.error !== undefined ? [factWords(f.error)] : []),
        ...(f.noDone ? [l10n.t('no data: [DONE]')] : []),
      ];
      return `(${notes.join('; ')})`;
    }
    case 'noModel':
      return l10n.t(
        'no model name: {0}',
        f.reason !== undefined ? evidenceWords(f.reason, Infinity) : l10n.t('GET /v1/models gave none'),
      );
    case 'noModelId':
      return l10n.t('GET /v1/models: HTTP {0} without a model id: {1}', f.status, f.body);
    case 'requestFailed':
      return l10n.t('{0}: request failed: {1}', f.what ?? l10n.t('reading the running command line'), f.message);
    case 'requestTimedOut':
      return l10n.t('{0}: no answer within {1} s', f.what ?? l10n.t('reading the running command line'), f.seconds);
    case 'tooLong':
      return l10n.t('inconclusive: the answer is longer than the client reads ({0} bytes read)', f.bytes);
    case 'cut': {
      const cut = f.reasoningOnly
        ? l10n.t('the reasoning used the whole budget of {0} tokens', f.budget)
        : l10n.t('the answer was cut at the budget of {0} tokens', f.budget);
      const inner = evidenceWords(f.inner, Infinity).replace(/^inconclusive: /, '');
      switch (f.then.kind) {
        case 'noRoom':
          return l10n.t(
            'inconclusive: {0} (finish_reason "length"; the context leaves no room for more) | {1}',
            cut,
            inner,
          );
        case 'cutAgain':
          return l10n.t(
            'inconclusive: {0} (finish_reason "length", first {1}, then {2}) | {3}',
            cut,
            f.then.first,
            f.then.retry,
            inner,
          );
        case 'retryOutOfTime':
          return l10n.t('inconclusive: {0}; then at {1}, {2}', cut, f.then.retry, inner);
        case 'retryUnanswered':
          return l10n.t('inconclusive: {0}; the retry at {1} got no answer: {2}', cut, f.then.retry, inner);
      }
      break;
    }
    case 'retried':
      return l10n.t('at {0} tokens ({1} cut the answer): {2}', f.retry, f.first, evidenceWords(f.inner, Infinity));
    case 'outOfTime':
      return f.twin
        ? l10n.t(
            'inconclusive: no answer within {0} s, a slow server, not the parsers: the same request streamed was {1}',
            f.limitSeconds,
            streamedWords(f.seen),
          )
        : l10n.t(
            'inconclusive: out of time ({0} s), a slow server, not the parsers: {1}',
            f.limitSeconds,
            streamedWords(f.seen),
          );
  }
}

/** Facts set apart from the ones before them: the excerpts and calls that show them, a stream's flaws. */
function separatorBefore(f: Fact): string {
  if (f.kind === 'excerpt' || f.kind === 'call' || f.kind === 'calls') return ' | ';
  if (f.kind === 'streamFlaws') return ' ';
  return '; ';
}

function evidenceWords(facts: readonly Fact[], max: number): string {
  const text = facts.map((f, i) => (i === 0 ? '' : separatorBefore(f)) + factWords(f)).join('');
  return Number.isFinite(max) ? oneLine(text, max) : text;
}

/** A check's evidence on one line: its findings in words, at most EVIDENCE_MAX characters (more when out of time). */
export function evidenceText(facts: readonly Fact[]): string {
  return evidenceWords(facts, facts.some((f) => f.kind === 'outOfTime') ? SLOW_EVIDENCE_MAX : EVIDENCE_MAX);
}
