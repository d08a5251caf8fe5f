/**
 * Questions on a terminal (stdin a TTY, questions and echo on stderr so stdout stays the
 * answer): y/N confirmations, an unknown host key, a key's passphrase, a login's one-time code
 * or password. Without a terminal the CLI never asks (NO_QUESTIONS_UI and nonInteractivePolicy
 * in fleet/servers/standalone).
 */
import * as l10n from '@vscode/l10n';
import * as readline from 'node:readline';
import type {
  LoginAnswer,
  LoginQuestion,
  SessionUi,
  SshPrompt,
  UnknownHostKey,
} from '../../fleet/sessions/sessionFactory';
import { askerName } from '../../transport/ssh/loginPolicy';

export interface Terminal {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  readonly output: NodeJS.WritableStream;
  /** Ctrl-C at a question (the terminal is raw then, so no SIGINT comes by itself). */
  readonly interrupt?: () => void;
}

/** True for "y" / "yes" (any case); anything else, or no answer, is no. */
export function isYes(answer: string | undefined): boolean {
  return answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
}

/** One line from the terminal; undefined on end of input. */
export function askLine(term: Terminal, question: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: term.input, output: term.output, terminal: true });
    let answered = false;
    let interrupted = false;
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
    rl.on('SIGINT', () => {
      // No answer at all: the interruption ends the command (exit 130), not a "no".
      interrupted = true;
      rl.close();
      term.output.write('\n');
      term.interrupt?.();
    });
    rl.on('close', () => {
      if (!answered && !interrupted) {
        term.output.write('\n');
        resolve(undefined);
      }
    });
  });
}

export async function confirm(term: Terminal, question: string): Promise<boolean> {
  return isYes(await askLine(term, `${question} [y/N] `));
}

/** The question asked for a host key that is not in the known-hosts file (policy `ask`). */
export function hostKeyQuestion(key: UnknownHostKey): string {
  const name = key.alias && key.alias !== key.host ? `${key.alias} (${key.host})` : key.host;
  const lines = [
    key.port !== 22
      ? l10n.t('The host key of {0} port {1} is not known.', name, key.port)
      : l10n.t('The host key of {0} is not known.', name),
    `  ${key.keyType} ${key.fingerprint}`,
  ];
  if (key.otherKeyTypes.length > 0)
    lines.push(
      `  ${l10n.t('Other key types are known for this host ({0}): check it was not replaced.', key.otherKeyTypes.join(', '))}`,
    );
  lines.push(
    l10n.t(
      "Compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub). Trust it and add it to {0}?",
      key.knownHostsFile,
    ),
  );
  return lines.join('\n');
}

/** A passphrase read without echo. */
export function askSecret(term: Terminal, question: string): Promise<string | undefined> {
  const input = term.input;
  if (!input.isTTY || !input.setRawMode) return askLine(term, question);
  return new Promise((resolve) => {
    term.output.write(question);
    let value = '';
    input.setRawMode!(true);
    input.resume();
    const done = (result: string | undefined) => {
      input.removeListener('data', onData);
      input.setRawMode!(false);
      input.pause();
      term.output.write('\n');
      resolve(result);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done(value);
        if (ch === '\u0003') {
          input.removeListener('data', onData);
          input.setRawMode!(false);
          input.pause();
          term.output.write('\n');
          return term.interrupt?.();
        }
        if (ch === '\u0004') return done(undefined); // Ctrl-D
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.on('data', onData);
  });
}

/**
 * A keyboard-interactive or password question: who asks and the server's own words, then each
 * prompt as the server wrote it (without echo when it asks so). undefined = Ctrl-D (cancelled).
 */
export async function askLogin(term: Terminal, q: LoginQuestion): Promise<LoginAnswer | undefined> {
  const said = [q.name, q.instructions].filter((s) => s.trim());
  term.output.write(
    `${l10n.t('{0} asks ({1}):', askerName(q), q.method)}\n${said.map((s) => `${s.trimEnd()}\n`).join('')}`,
  );
  const answers: string[] = [];
  for (const p of q.prompts) {
    const answer = p.echo ? await askLine(term, p.text) : await askSecret(term, p.text);
    if (answer === undefined) return undefined;
    answers.push(answer);
  }
  return { answers };
}

/** A question of the OpenSSH client: who asks, then OpenSSH's own words, without echo when secret. */
export function askSshPrompt(term: Terminal, p: SshPrompt): Promise<string | undefined> {
  const question = `${l10n.t('{0} asks:', p.host)} ${p.text.trimEnd()} `;
  return p.secret ? askSecret(term, question) : askLine(term, question);
}

/** The SessionUi of a CLI on a terminal: asks on stderr, one question at a time. */
export function terminalUi(term: Terminal): SessionUi {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(ask: () => Promise<T>): Promise<T> => {
    const next = queue.then(ask, ask);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    trustUnknownHostKey: (key) => serial(() => confirm(term, hostKeyQuestion(key))),
    requestPassphrase: (keyPath, retry) =>
      serial(() =>
        askSecret(
          term,
          retry ? l10n.t('Wrong passphrase. Passphrase for {0}: ', keyPath) : l10n.t('Passphrase for {0}: ', keyPath),
        ),
      ),
    login: (question) => serial(() => askLogin(term, question)),
    sshPrompt: (p) => serial(() => askSshPrompt(term, p)),
  };
}
