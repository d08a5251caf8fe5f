/**
 * The sentences a user reads are written in present/ (present/words for the layers below it) and
 * the fronts, nowhere else: an error built in another folder from a sentence of its own fails here.
 * A programmer's assertion (a value no user input reaches: a PID, a quoting guard, the broker's wire
 * checks) is no sentence a user reads; those are listed below, by file and the start of their text.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { LOAD_PHASES } from '../../src/engine/events';
import { CHECK_NAMES } from '../../src/verify/checks';

const ROOT = path.join(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
/** Where sentences are written. */
const HOMES = [path.join(SRC, 'fronts'), path.join(SRC, 'present'), path.join(SRC, 'extension.ts')];

/** Errors that are assertions by kind: the quoting guards, and the broker's checks of a peer's message. */
const ASSERTION_ERRORS = new Set(['UnsafeArgumentError', 'ProtocolError']);

/** Assertions by file and the start of their text (substitutions shown as ${}). */
const ASSERTIONS: readonly (readonly [file: string, start: string])[] = [
  ['util/ringBuffer.ts', 'Invalid capacity'],
  ['config/userOnlySettings.ts', 'not a user-only setting'],
  ['config/names.ts', 'Invalid systemd unit name'],
  ['host/pageCache.ts', 'Invalid parallelism'],
  ['host/pageCache.ts', 'Invalid PID'],
  ['host/hostAddresses.ts', 'Invalid host name'],
  ['host/kernelCaches.ts', 'not a process id'],
  ['monitor/watch/sampler.ts', 'Invalid PID'],
  ['monitor/watch/sampler.ts', 'Invalid port'],
  ['target/slurm/slurmCommands.ts', 'Invalid '],
  ['target/systemd/systemd.ts', 'Invalid systemd property name'],
  ['target/docker/dockerTarget.ts', 'Invalid container id'],
  ['transport/shell.ts', 'sudo resets the environment'],
  ['transport/shell.ts', 'Invalid environment name'],
  ['transport/openssh/muxProcess.ts', 'Not a host and port'],
  ['transport/openssh/controlMaster.ts', 'A path with a double quote'],
  ['fleet/sessions/multiNodeSession.ts', 'a multi-node server has at least two nodes'],
];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (HOMES.includes(file)) return [];
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** A literal's text with each substitution as `${}`; undefined for anything else. */
function literalText(node: ts.Expression): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((span) => '${}' + span.literal.text).join('');
  return undefined;
}

/** Words of a text, a substitution counting as one (it names a thing: "${host} is unreachable"). */
function wordCount(text: string): number {
  return (text.replace(/\$\{\}/g, ' X ').match(/[A-Za-z][A-Za-z'’-]*/g) ?? []).length;
}

/**
 * Rooms whose errors take a kind first and their message after it (`new ForwardError('bind', ...)`,
 * `super('not-ready', ...)`): every argument there is read, and a `super(...)` call too.
 */
const KIND_FIRST_ROOMS = ['fleet', 'broker', 'transport', 'monitor/watch'];

/**
 * `new SomethingError('a sentence ...')` in a file: its error class, line and text. With
 * `everyArgument`, a sentence in any argument counts, and one given to `super(...)`.
 */
export function sentencesIn(
  file: string,
  text: string,
  everyArgument = false,
): { error: string; line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { error: string; line: number; text: string }[] = [];
  const take = (node: ts.Node, error: string, args: readonly ts.Expression[]): void => {
    for (const arg of everyArgument ? args : args.slice(0, 1)) {
      const words = literalText(arg);
      if (words !== undefined && wordCount(words) >= 3)
        found.push({ error, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: words });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && /(Error|Stop)$/.test(node.expression.text))
      take(node, node.expression.text, node.arguments ?? []);
    if (everyArgument && ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword)
      take(node, 'super', node.arguments);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Rooms whose output-channel lines (and the watch's alerts) take their words from present/words: a
 * `log(...)` there with a sentence of its own fails. A `trace` line echoes a command, not a sentence.
 */
const LOG_ROOMS = ['monitor/watch', 'target', 'transport', 'fleet', 'broker', 'engine', 'host'];
/**
 * Rooms whose results carry sentences the user reads, by the fields that hold them: an alert's
 * `message:` (a notification), an outcome's `reason:` (a refusal, why a client was chosen) or
 * `detail:`, an undo's `byHand:` or why there is `nothing:` to undo; a field there written with a
 * sentence of its own fails. A target also says how a run ended (`endedBecause`, `result`), why a
 * unit is not found (`notFoundText`), why no sampler runs or where it runs (`why`, `where`), why
 * its log cannot be read (`problem`) and what its discovery finds (`what`).
 */
const SENTENCE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'monitor/watch': ['message', 'reason', 'detail'],
  broker: ['message', 'reason'],
  target: [
    'message',
    'reason',
    'detail',
    'nothing',
    'byHand',
    'endedBecause',
    'result',
    'notFoundText',
    'why',
    'where',
    'what',
    'problem',
  ],
  host: ['message', 'reason', 'detail', 'why', 'problem'],
  transport: ['message', 'reason', 'detail'],
  fleet: ['message', 'reason', 'detail', 'error'],
  /**
   * What the engine judges: an advice's `title`, `evidence`, `action`, published `figure` and why it
   * is held back or `notApplicable`; why an HTTP answer is no completion (`reason`), what a
   * multi-node failure means (`meaning`), how tokens are counted (`how`), why a model takes images
   * or not (`why`). Log patterns are regular expressions, and a server's log line quoted whole
   * ("Load weight end") is its words, not ours.
   */
  engine: [
    'message',
    'reason',
    'detail',
    'title',
    'evidence',
    'action',
    'figure',
    'notApplicable',
    'manual',
    'meaning',
    'how',
    'why',
  ],
};
/** Callees whose arguments are lines of the output channel. */
const LOG_CALLS = new Set(['log', 'sayLacking']);
/**
 * Callees whose arguments are why something ended or was not done, a reason a user reads in the
 * log or a notification: a connection closed or dropped, a watch stopped, an address kept, a step
 * of a roll, a line of the advice's facts, a key tried at login.
 */
const REASON_CALLS = new Set(['close', 'drop', 'stop', 'stopNodes', 'lost', 'keep', 'cancel', 'progress', 'say']);

/** The literals an expression is made of: through conditionals, `+`, parentheses and template substitutions. */
function literalsOf(node: ts.Expression): string[] {
  if (ts.isParenthesizedExpression(node)) return literalsOf(node.expression);
  if (ts.isArrayLiteralExpression(node)) return node.elements.flatMap(literalsOf);
  if (ts.isArrowFunction(node) && !ts.isBlock(node.body)) return literalsOf(node.body);
  if (ts.isConditionalExpression(node)) return [...literalsOf(node.whenTrue), ...literalsOf(node.whenFalse)];
  if (ts.isBinaryExpression(node)) return [...literalsOf(node.left), ...literalsOf(node.right)];
  const text = literalText(node);
  const inner = ts.isTemplateExpression(node) ? node.templateSpans.flatMap((span) => literalsOf(span.expression)) : [];
  return text === undefined ? inner : [text, ...inner];
}

/** Words of a text not counting its substitutions: "${host}: ${what}" is no sentence, "port ${port} is open" is. */
function ownWords(text: string): number {
  return wordCount(text.replace(/\$\{\}/g, ' '));
}

/** Log lines (and the values of the `fields` named) in a file written with two or more words of their own. */
export function logSentencesIn(
  file: string,
  text: string,
  fields: readonly string[],
): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: number; text: string }[] = [];
  const take = (node: ts.Node, args: readonly ts.Expression[]): void => {
    // A literal without a space is a value (`node_fail`, `oom-kill`), never a sentence.
    for (const words of args.flatMap(literalsOf))
      if (ownWords(words) >= 2 && /\s/.test(words) && !/^".*"$/.test(words))
        found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: words });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : '';
      const level = node.arguments[0] && literalText(node.arguments[0]);
      if (LOG_CALLS.has(name) && level !== 'trace') take(node, node.arguments);
      if (REASON_CALLS.has(name)) take(node, node.arguments);
      if (name === 'push' && ts.isIdentifier(callee.getChildAt(0)) && callee.getChildAt(0).getText() === 'tried')
        take(node, node.arguments);
    }
    // A reason by default (`stop(reason = 'stopped by the user')`).
    if (ts.isParameter(node) && node.initializer) take(node, [node.initializer]);
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && fields.includes(node.name.text))
      take(node, [node.initializer]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * config/ reads and checks the settings; why a value is refused, why a key is read from the user's
 * settings only and where a value was found are said by present/words. A literal there that reads
 * as a sentence fails, except the assertions listed above and the values below.
 */
const CONFIG_ROOM = 'config';
/** Values there that read like words: a setting's JSON, a server's label (its identity), by file and text. */
const CONFIG_VALUES: readonly (readonly [file: string, text: string])[] = [
  ['config/config.ts', '"remote.extensionKind": { "${}": ["workspace"] }'],
  ['config/serverValidation.ts', 'compose service ${}'],
  ['config/serverValidation.ts', 'Slurm job ${}'],
];

/** The literals of a config/ file with a space and two words of their own: "user settings" is a place said to the user. */
export function configSentencesIn(file: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isTypeNode(node)) return;
    const words = ts.isExpression(node) ? literalText(node) : undefined;
    if (words !== undefined && /\s/.test(words) && ownWords(words) >= 2 && !/^".*"$/.test(words))
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: words });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function configStrays(): string[] {
  return sourceFiles(path.join(SRC, CONFIG_ROOM)).flatMap((file) => {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    return configSentencesIn(file, fs.readFileSync(file, 'utf8'))
      .filter((s) => !ASSERTIONS.some(([f, start]) => f === rel && s.text.startsWith(start)))
      .filter((s) => !CONFIG_VALUES.some(([f, t]) => f === rel && t === s.text))
      .map((s) => `src/${rel}:${s.line}: ${JSON.stringify(s.text)}`);
  });
}

/** Rooms whose sentences (failure summaries, signals, warnings) come from present/words: any literal there that reads as one fails. */
const PURE_ROOMS = ['monitor/state'];
/** Values that read like words there: compared, never shown (by file and text). */
const STATE_VALUES: readonly (readonly [file: string, text: string])[] = [
  ['monitor/state/unitChange.ts', 'no run yet'],
];

/**
 * The literals of a file that read as a sentence: three words of their own, or two beside a
 * substitution ("the service ${exit}"). A load phase's name ("capturing CUDA graphs") is a value,
 * and a literal wholly in double quotes quotes a log line ("Load weight end").
 */
export function stateSentencesIn(file: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isTypeNode(node)) return;
    const words = ts.isExpression(node) ? literalText(node) : undefined;
    if (words !== undefined && !(LOAD_PHASES as readonly string[]).includes(words) && !/^".*"$/.test(words)) {
      const own = ownWords(words);
      if (own >= 3 || (own >= 2 && words.includes('${}')))
        found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: words });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * verify/ judges and runs the parser checks; what it found is facts (present/words/verifyFindings.ts)
 * and present/words says them. A literal there of two words or more (a word: a run of non-spaces with
 * a letter, so `reasoning_content` is one) held in a field or returned reads as a sentence and
 * fails, except what is sent to the model (a message's `content`, a tool's `description`: the
 * model's input, kept in English) and the values listed below.
 */
const VERIFY_ROOM = 'verify';
/** Fields whose text is the model's input, not a user's reading. */
const MODEL_INPUT_FIELDS = new Set(['content', 'description']);
/** Values there that read like words: a request line, the tool's answer sent to the model (by file and text); check names are identifiers. */
const VERIFY_VALUES: readonly (readonly [file: string, text: string])[] = [
  ['verify/ask.ts', 'POST /v1/chat/completions: ${}; ${}'],
  ['verify/checks.ts', 'light rain'],
];

/** Whitespace-separated words with a letter, substitutions not counted. */
function verifyWords(text: string): number {
  return text
    .replace(/\$\{\}/g, ' ')
    .split(/\s+/)
    .filter((w) => /[A-Za-z]/.test(w)).length;
}

/** Literals of two words or more in a field (other than the model's input), returned, logged or judged (`result`), in a verify/ file. */
export function verifySentencesIn(file: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: number; text: string }[] = [];
  const take = (node: ts.Node, expr: ts.Expression | undefined): void => {
    if (!expr) return;
    for (const words of literalsOf(expr))
      if (verifyWords(words) >= 2)
        found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: words });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && !(ts.isIdentifier(node.name) && MODEL_INPUT_FIELDS.has(node.name.text)))
      take(node, node.initializer);
    if (ts.isReturnStatement(node)) take(node, node.expression);
    if (ts.isArrowFunction(node) && !ts.isBlock(node.body)) take(node, node.body);
    const callee = ts.isCallExpression(node) && ts.isIdentifier(node.expression) ? node.expression.text : '';
    if (ts.isCallExpression(node) && (LOG_CALLS.has(callee) || callee === 'result'))
      for (const arg of node.arguments) take(node, arg);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function verifyStrays(): string[] {
  return sourceFiles(path.join(SRC, VERIFY_ROOM)).flatMap((file) => {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    return verifySentencesIn(file, fs.readFileSync(file, 'utf8'))
      .filter((s) => !(CHECK_NAMES as readonly string[]).includes(s.text))
      .filter((s) => !VERIFY_VALUES.some(([f, t]) => f === rel && t === s.text))
      .map((s) => `src/${rel}:${s.line}: ${JSON.stringify(s.text)}`);
  });
}

function stateStrays(): string[] {
  return PURE_ROOMS.flatMap((room) =>
    sourceFiles(path.join(SRC, room)).flatMap((file) => {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      return stateSentencesIn(file, fs.readFileSync(file, 'utf8'))
        .filter((s) => !STATE_VALUES.some(([f, t]) => f === rel && t === s.text))
        .map((s) => `src/${rel}:${s.line}: ${JSON.stringify(s.text)}`);
    }),
  );
}

function logStrays(): string[] {
  return LOG_ROOMS.flatMap((room) =>
    sourceFiles(path.join(SRC, room)).flatMap((file) => {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      const fields = Object.entries(SENTENCE_FIELDS).find(([r]) => rel.startsWith(`${r}/`))?.[1] ?? [];
      return logSentencesIn(file, fs.readFileSync(file, 'utf8'), fields).map(
        (s) => `src/${rel}:${s.line}: ${JSON.stringify(s.text)}`,
      );
    }),
  );
}

function strays(): string[] {
  return sourceFiles(SRC).flatMap((file) => {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    const everyArgument = KIND_FIRST_ROOMS.some((room) => rel.startsWith(`${room}/`));
    return sentencesIn(file, fs.readFileSync(file, 'utf8'), everyArgument)
      .filter((s) => !ASSERTION_ERRORS.has(s.error))
      .filter((s) => !ASSERTIONS.some(([f, start]) => f === rel && s.text.startsWith(start)))
      .map((s) => `src/${rel}:${s.line}: new ${s.error}(${JSON.stringify(s.text)})`);
  });
}

describe('words in one home', function () {
  this.timeout(60_000);

  it('no error below the fronts is built from a sentence of its own: present/words holds them', () => {
    const found = strays();
    assert.deepEqual(found, [], `sentences outside present/ and the fronts:\n${found.join('\n')}`);
  });

  it('the check sees a sentence in an error, and counts a substitution as a word', () => {
    const code = [
      'throw new ConnectionClosedError(`Connection to ${where} was closed`);',
      "throw new Error('Invalid PID');",
      'throw new AuthError(`${who} refused: ${why}`);',
      'throw new Error(words(x));',
    ].join('\n');
    assert.deepEqual(
      sentencesIn('probe.ts', code).map((s) => [s.error, s.line, s.text]),
      [
        ['ConnectionClosedError', 1, 'Connection to ${} was closed'],
        ['AuthError', 3, '${} refused: ${}'],
      ],
    );
  });

  it("the check reads every argument of an error whose kind comes first, and a super's, only where asked", () => {
    const code = [
      "throw new ForwardError('bad-port', `pick another port than ${port} here`);",
      "super('not-ready', `${name} is not ready for the checks`);",
      "throw new RollStop('cancelled', words.cancelledByUser());",
    ].join('\n');
    assert.deepEqual(
      sentencesIn('probe.ts', code, true).map((s) => [s.error, s.line, s.text]),
      [
        ['ForwardError', 1, 'pick another port than ${} here'],
        ['super', 2, '${} is not ready for the checks'],
      ],
    );
    assert.deepEqual(sentencesIn('probe.ts', code), []);
  });

  it('the log check sees a reason given to close, stop or a login tried, and one given by default', () => {
    const code = [
      "this.line.close('the owner sent nothing back');",
      'session.stop(words.watchedAnew());',
      'tried.push(`${file} (wrong passphrase)`);',
      "class F { stopAll(reason = 'stopped by the user'): void {} }",
    ].join('\n');
    assert.deepEqual(
      logSentencesIn('probe.ts', code, []).map((s) => [s.line, s.text]),
      [
        [1, 'the owner sent nothing back'],
        [3, '${} (wrong passphrase)'],
        [4, 'stopped by the user'],
      ],
    );
  });

  it('no log line in the watch, the targets, the transports, the fleet, the broker, the engine or the host readers is a sentence of its own: present/words holds them', () => {
    const found = logStrays();
    assert.deepEqual(found, [], `log sentences outside present/:\n${found.join('\n')}`);
  });

  it('the log check sees a sentence in a log line, an alert, a refusal and a branch, and lets compositions and traces pass', () => {
    const code = [
      "deps.log('warn', `Could not follow the journal: ${why}`);",
      "log('info', starting ? 'Connecting now' : `${x}: ${y}`);",
      'this.log(`${name}: ${k} ${v}`);',
      "deps.log('trace', `$ sampler for PID ${pid} every ${ms} ms`);",
      "ctx.alertOnce({ kind: 'url', level: 'warn', message: `${unit} is healthy again.` });",
      "deps.log('info', portAnsweredBy(port, service));",
      "return { kind: 'unsupported', reason: `${file} is not valid YAML: ${why}` };",
      "return { kind: 'error', detail: said || 'no output at all' };",
    ].join('\n');
    assert.deepEqual(
      logSentencesIn('probe.ts', code, ['message', 'reason', 'detail']).map((s) => [s.line, s.text]),
      [
        [1, 'Could not follow the journal: ${}'],
        [2, 'Connecting now'],
        [5, '${} is healthy again.'],
        [7, '${} is not valid YAML: ${}'],
        [8, 'no output at all'],
      ],
    );
    assert.deepEqual(logSentencesIn('probe.ts', code, []).length, 2);
  });

  it("the target's check sees how a run ended and why no sampler runs, and lets a value without a space pass", () => {
    const code = [
      "return { result: 'node_fail', endedBecause: 'ended because a node of the job failed (NODE_FAIL)' };",
      "return { kind: 'lacking', why: `job ${id} is suspended` };",
      'return { result: words.removedExitUnknown(), where: insideJob(id, node) };',
    ].join('\n');
    assert.deepEqual(
      logSentencesIn('probe.ts', code, ['result', 'endedBecause', 'why', 'where']).map((s) => [s.line, s.text]),
      [
        [1, 'ended because a node of the job failed (NODE_FAIL)'],
        [2, 'job ${} is suspended'],
      ],
    );
  });

  it("the config check sees a refusal, a reason and a place, and lets a setting's name pass", () => {
    const code = [
      'errors.push(`${at}.host is missing (or give "nodes" for a multi-node server).`);',
      "const REASONS = { knownHostsFile: 'chooses which host keys are trusted' };",
      "return { target: 'global', where: remote ? 'Remote settings' : 'user settings' };",
      'const at = `kimiService.servers[${index}]`;',
    ].join('\n');
    assert.deepEqual(
      configSentencesIn('probe.ts', code).map((s) => [s.line, s.text]),
      [
        [1, '${}.host is missing (or give "nodes" for a multi-node server).'],
        [2, 'chooses which host keys are trusted'],
        [3, 'Remote settings'],
        [3, 'user settings'],
      ],
    );
  });

  it("the engine's check sees an advice's title and evidence, a meaning in a rule's arrow, and lets a quoted log line and a regular expression pass", () => {
    const code = [
      "return { title: 'Warm the page cache first', evidence: [took, cold ? 'read cold from NVMe' : flagNotSet(f)] };",
      'const rule = { meaning: (m) => `only ${m[1]} ranks reached the rendezvous` };',
      'return { evidence: [\'"Loading safetensors checkpoint shards"\'], pattern: /Load weight end/ };',
      "return { ok: false, reason: words.bodyEmpty(), how: estimated('no tokenizer') };",
    ].join('\n');
    assert.deepEqual(
      logSentencesIn('probe.ts', code, ['title', 'evidence', 'meaning', 'reason', 'how']).map((s) => [s.line, s.text]),
      [
        [1, 'Warm the page cache first'],
        [1, 'read cold from NVMe'],
        [2, 'only ${} ranks reached the rendezvous'],
      ],
    );
  });

  it('no sentence in the load state (a failure summary, a signal, a warning) is written there: present/words holds them', () => {
    const found = stateStrays();
    assert.deepEqual(found, [], `sentences in monitor/state:\n${found.join('\n')}`);
  });

  it('the state check sees a summary, a signal and a branch, and lets phases, quotations and compositions pass', () => {
    const code = [
      'next = fail(next, `the service did not start: it ${exitDescription(unit)}`);',
      "return finish(state, next, at, external ? 'restart requested by someone' : `unit ${a}/${s}, PID ${p}`);",
      "next = advancePhase(next, 'capturing CUDA graphs');",
      'if (done) return \'"Load weight end"\';',
      'const text = `${label}: ${summary}`;',
      "case 'allocating KV cache': return `the service ${why}`;",
    ].join('\n');
    assert.deepEqual(
      stateSentencesIn('probe.ts', code).map((s) => [s.line, s.text]),
      [
        [1, 'the service did not start: it ${}'],
        [2, 'restart requested by someone'],
        [2, 'unit ${}/${}, PID ${}'],
        [6, 'the service ${}'],
      ],
    );
  });

  it('no finding, consequence or progress line in verify/ is a sentence of its own: present/words holds them', () => {
    const found = verifyStrays();
    assert.deepEqual(found, [], `sentences in verify/:\n${found.join('\n')}`);
  });

  it("the verify check sees a finding in a field, a return and a branch, and lets the model's input, field names and compositions pass", () => {
    const code = [
      "return result('fail', `markers left in content: ${x}`);",
      "const f = { kind: 'noToolCalls', evidence: 'no tool_calls' };",
      "const body = { role: 'user', content: 'What is the weather in Paris?' };",
      "const tool = { description: 'Get the current weather in a city.' };",
      "return ok ? `${a}: ${b}` : 'reasoning_content';",
      "const line = () => (slow ? 'still reasoning' : `${n}/${t}`);",
      "if (calls.length === 0) return 'noToolCall';",
      'log(`Verifying parsers (${x})`);',
    ].join('\n');
    assert.deepEqual(
      verifySentencesIn('probe.ts', code).map((s) => [s.line, s.text]),
      [
        [1, 'markers left in content: ${}'],
        [2, 'no tool_calls'],
        [6, 'still reasoning'],
        [8, 'Verifying parsers (${})'],
      ],
    );
  });

  it("no refusal, reason or place in the settings' reader is a sentence of its own: present/words holds them", () => {
    const found = configStrays();
    assert.deepEqual(found, [], `sentences in config/:\n${found.join('\n')}`);
  });

  it('every listed config value is still there', () => {
    for (const [file, value] of CONFIG_VALUES)
      assert.ok(
        configSentencesIn(file, fs.readFileSync(path.join(SRC, file), 'utf8')).some((s) => s.text === value),
        `${file}: no "${value}"`,
      );
  });

  it('every listed verify value is still there', () => {
    for (const [file, value] of VERIFY_VALUES)
      assert.ok(
        verifySentencesIn(file, fs.readFileSync(path.join(SRC, file), 'utf8')).some((s) => s.text === value),
        `${file}: no "${value}"`,
      );
  });

  it('every listed assertion is still there (the list does not outlive its code)', () => {
    for (const [file, start] of ASSERTIONS) {
      const text = fs.readFileSync(path.join(SRC, file), 'utf8');
      assert.ok(
        sentencesIn(file, text, true).some((s) => s.text.startsWith(start)),
        `${file}: no error starting "${start}"`,
      );
    }
  });

  it('every listed state value is still there', () => {
    for (const [file, value] of STATE_VALUES)
      assert.ok(
        stateSentencesIn(file, fs.readFileSync(path.join(SRC, file), 'utf8')).some((s) => s.text === value),
        `${file}: no "${value}"`,
      );
  });
});
