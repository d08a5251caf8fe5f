/**
 * Keyboard-interactive and password logins (one-time codes through PAM, Duo, passwords): which
 * method to offer next, what the user is asked, and the words of a refusal. Pure.
 *
 * The rule that keeps an account from being locked: per hop and connection attempt, one
 * keyboard-interactive round and one password try, each only with the user's own answers. A
 * refused answer ends the attempt with the server's words (never retried by itself); a
 * cancelled question ends it before anything is sent.
 */

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
    if (listed('publickey'))
      return { kind: 'end', note: `(the server also allows ${interactive.join(', ')}: nobody to answer here)` };
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
  return q.jumpFor ? `${q.host} (jump host for ${q.jumpFor})` : q.host;
}

function what(prompts: readonly LoginPrompt[]): string {
  if (prompts.some((p) => p.kind === 'code')) return 'code';
  if (prompts.length > 0 && prompts.every((p) => p.kind === 'password')) return 'password';
  return 'answer';
}

function quoted(prompts: readonly LoginPrompt[]): string {
  return prompts.map((p) => `"${p.text.trim()}"`).join(', ');
}

/** The user cancelled the question: nothing was sent for it. */
export function noAnswerRefusal(q: LoginQuestion): string {
  return (
    `Login refused: no ${what(q.prompts)} given to ${askerName(q)} (it asked ${quoted(q.prompts)}). ` +
    'Nothing was sent, and it is not asked again until you connect again.'
  );
}

/** The server refused the round's answers: its own words (instructions and prompts), never retried by itself. */
export function refusedRefusal(q: LoginQuestion, methodsLeft: readonly Method[] | null): string {
  const said = [q.name, q.instructions].map((s) => s.trim()).filter(Boolean);
  const w = what(q.prompts);
  return (
    `Login refused by ${askerName(q)}: it did not accept the ${w} given to ${quoted(q.prompts)}` +
    (said.length > 0 ? ` (it said: ${said.join(' ')})` : '') +
    (methodsLeft && methodsLeft.length > 0 ? `; it now allows ${methodsLeft.join(', ')}` : '') +
    `. Not tried again, since each failure counts against the account: connect again to give a new ${w}.`
  );
}

export function needsInteractiveLogin(who: string, methods: readonly Method[], hint: string): string {
  return (
    `${who} needs an interactive login (${methods.join(', ')}: a one-time code or a password), ` +
    `and nobody can answer it here. ${hint}`
  );
}

export const DEFAULT_NO_LOGIN_HINT =
  'Connect from VS Code (Kimi Service) or run kimi-service on a terminal, which ask for it; a script or the MCP server cannot.';

/** The password method's single question. */
export function passwordQuestion(
  base: Omit<LoginQuestion, 'method' | 'name' | 'instructions' | 'prompts'>,
): LoginQuestion {
  return {
    ...base,
    method: 'password',
    name: '',
    instructions: '',
    prompts: [{ text: `Password for ${base.host}: `, echo: false, kind: 'password' }],
  };
}
