/**
 * A verification report read in Chinese: every finding a judge can make, every check's words and the
 * table and summary around them, rendered with the zh-cn bundle, carry no English sentence; only
 * what the server sent (quoted), field names, flags and paths stay as they are.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { useBundle, type L10nBundle } from '../../src/util/l10n';
import { formatTable, summarize } from '../../src/present/verifyReport';
import { checkWords } from '../../src/present/words/checkWords';
import { evidenceText, factWords } from '../../src/present/words/findingWords';
import type { Fact } from '../../src/present/words/verifyFindings';
import { CHECK_NAMES, CHECK_PROMPTS } from '../../src/verify/checks';
import type { VerifyResult } from '../../src/verify/verifier';

const ZH = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'),
) as L10nBundle;

const Q = '"…the weather in Paris…"';
/** Ajv's own message on arguments that miss the schema: a library's words, quoted as they come. */
const AJV = 'data/city must be string';
const seen = { reasoningTokens: 1830, answerTokens: 0, budget: 2048, rate: 31 };

/** One finding of every kind (a kind added without a sample here does not compile). */
const SAMPLES: { readonly [K in Fact['kind']]: readonly Extract<Fact, { kind: K }>[] } = {
  errorBody: [
    { kind: 'errorBody', code: '400', message: 'bad tools' },
    { kind: 'errorBody', message: 'bad' },
  ],
  noMessage: [{ kind: 'noMessage', body: '{"x":1}' }],
  http: [{ kind: 'http', status: 503, body: 'Service Unavailable' }],
  raw: [{ kind: 'raw', text: 'get_weather({"city":"Paris"}) id=functions.get_weather:0' }],
  excerpt: [{ kind: 'excerpt', field: 'content', quote: Q }],
  notJsonObject: [{ kind: 'notJsonObject', body: '"x"' }],
  serverArgs: [{ kind: 'serverArgs', reasoning: '"kimi_k2"', tool: 'null' }],
  runningFlags: [
    { kind: 'runningFlags', switches: [{ name: '--enable-auto-tool-choice', set: false }] },
    { kind: 'runningFlags', reasoning: 'kimi_k2', tool: 'kimi_k2', switches: [{ name: '--x', set: true }] },
  ],
  flagShould: [{ kind: 'flagShould', flag: '--tool-call-parser', expected: 'kimi_k2' }],
  switchNeeded: [{ kind: 'switchNeeded', name: '--enable-auto-tool-choice' }],
  noRunningProcess: [{ kind: 'noRunningProcess' }],
  renamedCommandLine: [{ kind: 'renamedCommandLine', argv: '"vllm-worker"' }],
  noServerInfo: [{ kind: 'noServerInfo', engine: 'vLLM' }],
  serverInfoNotAsked: [{ kind: 'serverInfoNotAsked' }],
  markersInContent: [
    { kind: 'markersInContent', hasReasoning: true, marker: '</think>', excerpt: Q },
    { kind: 'markersInContent', hasReasoning: false, marker: '</think>', excerpt: Q },
  ],
  reasoningAndContent: [{ kind: 'reasoningAndContent', reasoning: 'null', content: Q }],
  endInReasoning: [{ kind: 'endInReasoning', marker: '</think>', excerpt: Q }],
  noAnswerAfterReasoning: [{ kind: 'noAnswerAfterReasoning', finishReason: '"length"', chars: 9000, excerpt: Q }],
  reasoningSeparated: [{ kind: 'reasoningSeparated', chars: 26, reasoning: Q, content: Q }],
  reasoningStillSet: [{ kind: 'reasoningStillSet', chars: 26, excerpt: Q }],
  thinkingStillOn: [{ kind: 'thinkingStillOn', marker: '<think>', excerpt: Q }],
  noAnswer: [{ kind: 'noAnswer', reasoning: 'null', finishReason: '"stop"' }],
  callBeforeThinkEnd: [{ kind: 'callBeforeThinkEnd' }],
  callInReasoning: [{ kind: 'callInReasoning' }],
  rawToolTokens: [
    { kind: 'rawToolTokens' },
    { kind: 'rawToolTokens', detail: 'noThinkEnd' },
    { kind: 'rawToolTokens', detail: 'sectionBeforeEnd' },
  ],
  noToolCalls: [{ kind: 'noToolCalls', finishReason: '"stop"' }],
  finishReasonNot: [{ kind: 'finishReasonNot', finishReason: '"stop"', expected: 'tool_calls' }],
  callTypeNot: [{ kind: 'callTypeNot', type: 'absent' }],
  callsOther: [{ kind: 'callsOther', index: 0, name: '"get_time"', expected: 'get_weather' }],
  badArguments: [
    { kind: 'badArguments', fault: { kind: 'argsNotString', args: '3' } },
    { kind: 'badArguments', index: 1, fault: { kind: 'argsNotJson', args: '"{"' } },
    { kind: 'badArguments', fault: { kind: 'argsSchema', errors: AJV } },
  ],
  call: [{ kind: 'call', text: 'get_time({})' }],
  calls: [{ kind: 'calls', text: 'get_weather({"city":"Paris"})' }],
  leakedAfterResult: [
    { kind: 'leakedAfterResult', marker: '</think>', reasoning: 12 },
    { kind: 'leakedAfterResult', marker: '</think>', reasoning: 'null' },
  ],
  calledAgain: [{ kind: 'calledAgain', calls: 'get_weather({})', finishReason: '"tool_calls"' }],
  emptyFollowUp: [{ kind: 'emptyFollowUp', finishReason: '"stop"', reasoning: 'null' }],
  resultUnused: [{ kind: 'resultUnused', words: '"18", "rain"', excerpt: Q }],
  answerUsesResult: [
    { kind: 'answerUsesResult', reasoningChars: 26, excerpt: Q },
    { kind: 'answerUsesResult', excerpt: Q },
  ],
  historyAccepted: [{ kind: 'historyAccepted' }],
  needsFirstTurn: [
    { kind: 'needsFirstTurn', after: 'tool calling', status: 'skipped', why: 'noToolCall' },
    { kind: 'needsFirstTurn', after: 'tool calling (stream)', why: 'noAnswer' },
    { kind: 'needsFirstTurn', after: 'tool calling (stream)', status: 'pass', why: 'noReasoning' },
  ],
  tooFewCalls: [
    { kind: 'tooFewCalls', calls: 1, cities: ['Paris', 'Tokyo'], finishReason: '"tool_calls"' },
    { kind: 'tooFewCalls', calls: 0, cities: ['Paris', 'Tokyo'], finishReason: '"stop"' },
  ],
  idSwallowed: [{ kind: 'idSwallowed', id: '"functions.get_weather:0<|tool_call_begin|>"' }],
  callWithoutId: [{ kind: 'callWithoutId' }],
  idShared: [{ kind: 'idShared', ids: '["c","c"]' }],
  noCallFor: [{ kind: 'noCallFor', cities: ['Tokyo'] }],
  noCallsForIds: [{ kind: 'noCallsForIds' }],
  idsRepeat: [{ kind: 'idsRepeat', from: 'tool calling', ids: '["c","c"]' }],
  idMissing: [{ kind: 'idMissing', from: 'tool calling', index: 0 }],
  idNotFormat: [{ kind: 'idNotFormat', from: 'tool calling', id: '"call_0"', format: 'functions.NAME:IDX' }],
  idOtherFunction: [
    { kind: 'idOtherFunction', from: 'tool calling', id: '"functions.get_time:0"', name: 'get_weather' },
  ],
  idsSeen: [{ kind: 'idsSeen', format: 'functions.NAME:IDX', seen: [{ from: 'tool calling', ids: ['', 'x'] }] }],
  sseUnparsable: [{ kind: 'sseUnparsable', data: '{oops' }],
  noSseChunks: [{ kind: 'noSseChunks', body: '""' }],
  streamFlaws: [{ kind: 'streamFlaws', error: { kind: 'sseUnparsable', data: '{' }, noDone: true }],
  noModel: [
    { kind: 'noModel' },
    { kind: 'noModel', reason: [{ kind: 'requestFailed', what: 'GET /v1/models', message: 'ECONNREFUSED' }] },
  ],
  noModelId: [{ kind: 'noModelId', status: 200, body: '{}' }],
  requestFailed: [
    { kind: 'requestFailed', what: 'POST /v1/chat/completions', message: 'socket hang up' },
    { kind: 'requestFailed', message: 'EPIPE' },
  ],
  requestTimedOut: [{ kind: 'requestTimedOut', what: 'GET /v1/models', seconds: 60 }],
  tooLong: [{ kind: 'tooLong', bytes: 40 }],
  cut: [
    {
      kind: 'cut',
      budget: 2048,
      reasoningOnly: true,
      then: { kind: 'noRoom' },
      inner: [{ kind: 'noToolCalls', finishReason: '"length"' }],
    },
    {
      kind: 'cut',
      budget: 8192,
      reasoningOnly: false,
      then: { kind: 'cutAgain', first: 2048, retry: 8192 },
      inner: [],
    },
    {
      kind: 'cut',
      budget: 2048,
      reasoningOnly: true,
      then: { kind: 'retryOutOfTime', retry: 8192 },
      inner: [{ kind: 'outOfTime', limitSeconds: 60, twin: false, seen }],
    },
    {
      kind: 'cut',
      budget: 2048,
      reasoningOnly: true,
      then: { kind: 'retryUnanswered', retry: 8192 },
      inner: [{ kind: 'requestTimedOut', what: 'POST /v1/chat/completions', seconds: 82 }],
    },
  ],
  retried: [{ kind: 'retried', first: 2048, retry: 8192, inner: [{ kind: 'historyAccepted' }] }],
  outOfTime: [
    { kind: 'outOfTime', limitSeconds: 60, twin: false, seen },
    { kind: 'outOfTime', limitSeconds: 60, twin: true, seen: { reasoningTokens: 600, answerTokens: 40 } },
  ],
};

const ALL: readonly Fact[] = Object.values(SAMPLES).flat();

/** Three English words in a row, once quotations, field names, flags, paths and ids are taken out. */
function englishRun(text: string): string | undefined {
  const bare = text
    .replace(AJV, ' ')
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .split(/\s+/)
    .map((w) => (/[_./:[\]<>|=\d-]/.test(w) ? '|' : w.replace(/[(),;：，（）]/g, '')))
    .join(' ');
  return bare.match(/\b[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}\b/)?.[0];
}

function report(): { evidence: string[]; words: string[]; table: string; summary: string } {
  const evidence = ALL.map((f) => evidenceText([f]));
  const words = CHECK_NAMES.flatMap((name) => Object.values(checkWords(name, CHECK_PROMPTS)));
  const result: VerifyResult = {
    allPassed: false,
    model: 'Kimi-K2.6',
    budgets: { first: 2048, retry: 8192, thinkingOff: 256, contextLength: undefined, source: undefined },
    checks: CHECK_NAMES.map((name, i) => ({
      name,
      status: (['fail', 'inconclusive', 'skipped', 'pass'] as const)[i % 4],
      evidence: evidence[i % evidence.length]!,
      consequence: checkWords(name, CHECK_PROMPTS).consequence,
      request: 'POST /v1/chat/completions: user "What is 17 * 23?"; max_tokens 2048, stream',
    })),
  };
  return { evidence, words, table: formatTable(result, 1000), summary: summarize(result) };
}

describe('verification report in Chinese', () => {
  afterEach(() => useBundle(undefined));

  it("every finding, every check's words, the table and the summary: no English sentence under zh-cn", () => {
    useBundle(ZH);
    const r = report();
    for (const [i, text] of r.evidence.entries()) assert.equal(englishRun(text), undefined, `${ALL[i]!.kind}: ${text}`);
    for (const text of r.words) assert.equal(englishRun(text), undefined, text);
    for (const line of r.table.split('\n')) assert.equal(englishRun(line), undefined, line);
    assert.equal(englishRun(r.summary), undefined, r.summary);
    assert.match(r.table, /对智能体：/);
    assert.match(factWords({ kind: 'noToolCalls', finishReason: '"stop"' }), /^没有 tool_calls，finish_reason "stop"$/);
  });

  it('the check can fail: in English the same report is full of sentences', () => {
    const r = report();
    const english = [...r.evidence, ...r.words, ...r.table.split('\n')].filter((t) => englishRun(t) !== undefined);
    assert.ok(english.length > ALL.length, `only ${english.length} English lines`);
    assert.equal(
      englishRun('markers left in content; content has </think>: "…"'),
      'markers left in content content has',
    );
  });
});
