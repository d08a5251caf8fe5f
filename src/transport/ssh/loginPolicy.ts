/**
 * Keyboard-interactive and password logins (one-time codes through PAM, Duo, passwords): which
 * method to offer next, what the user is asked, and the facts of a refusal (present/words/loginWords.ts
 * words them). Pure.
 *
 * The rule that keeps an account from being locked: per hop and connection attempt, one
 * keyboard-interactive round and one password try, each only with the user's own answers. A
 * refused answer ends the attempt with the server's words (never retried by itself); a
 * cancelled question ends it before anything is sent.
 */
import {
  alsoAllowsNote,
  askerWords,
  needsInteractiveLogin,
  noAnswerRefusal as noAnswerWords,
  passwordPrompt,
  refusedRefusal as refusedWords,
  type LoginAnswerKind,
} from '../../present/words/loginWords';

export type PromptKind = 'code' | 'password' | 'other';

export interface LoginPrompt {
  /** The server's prompt, as it sent it (control characters removed). */
  readonly text: string;
  /** false: a secret (shown as dots, never echoed). */
  readonly echo: boolean;
  /** What it asks for: a one-time code is never stored; a password may be, when the user says so. */
  readonly kind: PromptKind;
}

export interface LoginQuestion {
  /** The hop that asks: `user@host:port`. */
  readonly host: string;
  /** That hop's name as configured (a ~/.ssh/config alias, or the host). */
  readonly alias: string;
  /** Set when the hop is a ProxyJump host: the GPU host it leads to. */
  readonly jumpFor?: string;
  readonly method: 'keyboard-interactive' | 'password';
  /** The server's own name and instructions for this question (may be empty). */
  readonly name: string;
  readonly instructions: string;
  readonly prompts: readonly LoginPrompt[];
}

export interface LoginAnswer {
  /** One answer per prompt, in order. */
  readonly answers: readonly string[];
  /** Told once whether the server accepted the round these answers belong to. */
  settled?(accepted: boolean): void;
}

/** ssh2's method names as the server lists them. */
type Method = string;

export interface HopLoginState {
  keyboardInteractiveTried: boolean;
  passwordTried: boolean;
  /** The refusal of the last round, when the server refused it. */
  refusal?: string;
}

export type NextLogin =
  | { readonly kind: 'keyboard-interactive' }
  | { readonly kind: 'password' }
  /**
   * Nothing more to offer; `refusal` replaces ssh2's "All configured authentication methods
   * failed", `note` goes into the list of what was tried.
   */
  | { readonly kind: 'end'; readonly refusal?: string; readonly note?: string };

/** At most this many questions in one keyboard-interactive round (password, then code, ...). */
export const MAX_QUESTIONS_PER_ROUND = 5;

const CODE_WORDS =
  /one[- ]?time|\botp\b|\bcode\b|token|verification|passcode|duo|authenticator|\bpin\b|\b2fa\b|\bmfa\b|factor|oath/i;
const PASSWORD_WORDS = /pass(word|phrase)|passwort|mot de passe|contrase/i;

export function promptKind(text: string, echo: boolean): PromptKind {
  if (CODE_WORDS.test(text)) return 'code';
  if (!echo && PASSWORD_WORDS.test(text)) return 'password';
  return 'other';
}

/** A server's text without control characters (no terminal escapes reach a terminal or a dialog), at most 2000 characters. */
export function cleanServerText(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '').slice(0, 2000);
}

export function loginPrompts(prompts: readonly { prompt: string; echo?: boolean }[]): LoginPrompt[] {
  return prompts.map((p) => {
    const text = cleanServerText(p.prompt);
    const echo = p.echo === true;
    return { text, echo, kind: promptKind(text, echo) };
  });
}

/**
 * After the public keys: keyboard-interactive when the server allows it (or has not said what
 * it allows), else a password when it lists `password`; each once. Without anyone to ask, a
 * server that lists only these methods gets the refusal that says so.
 */
export function nextLogin(
  state: HopLoginState,
  methodsLeft: readonly Method[] | null,
  canAsk: boolean,
  who: string,
  noLoginHint: string,
): NextLogin {
  const listed = (m: Method) => methodsLeft !== null && methodsLeft.includes(m);
  const interactive = ['keyboard-interactive', 'password'].filter(listed);
  if (!canAsk) {
    if (interactive.length === 0 || state.refusal) return end(state.refusal);
    // Still open to a key: the keys were refused (the usual error says so), not a second factor asked.
    if (listed('publickey')) return { kind: 'end', note: alsoAllowsNote(interactive) };
    return end(needsInteractiveLogin(who, interactive, noLoginHint));
  }
  if (!state.keyboardInteractiveTried && (methodsLeft === null || listed('keyboard-interactive')))
    return { kind: 'keyboard-interactive' };
  if (!state.passwordTried && listed('password')) return { kind: 'password' };
  return end(state.refusal);
}

function end(refusal: string | undefined): NextLogin {
  return refusal === undefined ? { kind: 'end' } : { kind: 'end', refusal };
}

/** Who asks, for the question's title: "kimi@gpu7:22" or "kimi@bastion:22 (jump host for gpu7)". */
export function askerName(q: Pick<LoginQuestion, 'host' | 'jumpFor'>): string {
  return askerWords(q.host, q.jumpFor);
}

function what(prompts: readonly LoginPrompt[]): LoginAnswerKind {
  if (prompts.some((p) => p.kind === 'code')) return 'code';
  if (prompts.length > 0 && prompts.every((p) => p.kind === 'password')) return 'password';
  return 'answer';
}

function quoted(prompts: readonly LoginPrompt[]): string {
  return prompts.map((p) => `"${p.text.trim()}"`).join(', ');
}

/** The user cancelled the question: nothing was sent for it. */
export function noAnswerRefusal(q: LoginQuestion): string {
  return noAnswerWords(what(q.prompts), askerName(q), quoted(q.prompts));
}

/** The server refused the round's answers: its own words (instructions and prompts), never retried by itself. */
export function refusedRefusal(q: LoginQuestion, methodsLeft: readonly Method[] | null): string {
  const said = [q.name, q.instructions].map((s) => s.trim()).filter(Boolean);
  return refusedWords(what(q.prompts), askerName(q), quoted(q.prompts), said.join(' '), methodsLeft ?? []);
}

/** The password method's single question. */
export function passwordQuestion(
  base: Omit<LoginQuestion, 'method' | 'name' | 'instructions' | 'prompts'>,
): LoginQuestion {
  return {
    ...base,
    method: 'password',
    name: '',
    instructions: '',
    prompts: [{ text: passwordPrompt(base.host), echo: false, kind: 'password' }],
  };
}
