/**
 * The words of a keyboard-interactive or password login (transport/ssh/loginPolicy.ts decides,
 * these say it): who asks, what is asked, and the refusals when a login cannot go on.
 */
import * as l10n from '@vscode/l10n';

/** What a login round asks for. */
export type LoginAnswerKind = 'code' | 'password' | 'answer';

function answerWord(kind: LoginAnswerKind): string {
  switch (kind) {
    case 'code':
      return l10n.t('code');
    case 'password':
      return l10n.t('password');
    case 'answer':
      return l10n.t('answer');
  }
}

/** The hop that asks: "kimi@gpu7:22", or "kimi@bastion:22 (jump host for gpu7)". */
export function askerWords(host: string, jumpFor: string | undefined): string {
  return jumpFor ? l10n.t('{0} (jump host for {1})', host, jumpFor) : host;
}

/** The password method's single question. */
export function passwordPrompt(host: string): string {
  return l10n.t('Password for {0}: ', host);
}

/** The user cancelled the question (`prompts`: the server's prompts, quoted): nothing was sent. */
export function noAnswerRefusal(kind: LoginAnswerKind, asker: string, prompts: string): string {
  return l10n.t(
    'Login refused: no {0} given to {1} (it asked {2}). Nothing was sent, and it is not asked again until you connect again.',
    answerWord(kind),
    asker,
    prompts,
  );
}

/**
 * The server refused the round's answers: `said` is its own name and instructions (may be empty),
 * `methodsLeft` what it allows now (empty: it did not say).
 */
export function refusedRefusal(
  kind: LoginAnswerKind,
  asker: string,
  prompts: string,
  said: string,
  methodsLeft: readonly string[],
): string {
  const w = answerWord(kind);
  return l10n.t(
    'Login refused by {0}: it did not accept the {1} given to {2}{3}{4}. Not tried again, since each failure counts against the account: connect again to give a new {1}.',
    asker,
    w,
    prompts,
    said ? l10n.t(' (it said: {0})', said) : '',
    methodsLeft.length > 0 ? l10n.t('; it now allows {0}', methodsLeft.join(', ')) : '',
  );
}

/** Nobody can answer here, and the server allows only interactive logins (`methods`); `hint` says where to connect from. */
export function needsInteractiveLogin(who: string, methods: readonly string[], hint: string): string {
  return l10n.t(
    '{0} needs an interactive login ({1}: a one-time code or a password), and nobody can answer it here. {2}',
    who,
    methods.join(', '),
    hint,
  );
}

/** The keys were refused and the server also allows interactive `methods`, which nobody can answer here. */
export function alsoAllowsNote(methods: readonly string[]): string {
  return l10n.t('(the server also allows {0}: nobody to answer here)', methods.join(', '));
}

/** Where a login that needs an answer can be made, for the fronts that cannot ask. */
export function defaultNoLoginHint(): string {
  return l10n.t(
    'Connect from VS Code (Kimi Service) or run kimi-service on a terminal, which ask for it; a script or the MCP server cannot.',
  );
}
