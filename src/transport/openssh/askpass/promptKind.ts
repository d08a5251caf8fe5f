/**
 * What an OpenSSH prompt asks for, read from its words ("Enter passphrase for key '...': ",
 * "Enter PIN for 'token': ", "user@host's password: ", "(user@host) Verification code: "), and
 * the words of a refusal when it was not answered. Pure.
 */
import type { PromptMode } from './protocol';

export type SshPromptKind = 'passphrase' | 'pin' | 'password' | 'code' | 'confirm' | 'notice' | 'other';

export function sshPromptKind(text: string, mode: PromptMode): SshPromptKind {
  if (mode === 'notice') return 'notice';
  if (mode === 'confirm') return 'confirm';
  if (/passphrase/i.test(text)) return 'passphrase';
  if (/\bPIN\b/.test(text)) return 'pin';
  if (/one[- ]?time|\botp\b|\bcode\b|verification|passcode|token|authenticator/i.test(text)) return 'code';
  if (/password/i.test(text)) return 'password';
  return 'other';
}

/** What was not given, for the refusal: "passphrase not given". */
export function notGivenWords(kind: SshPromptKind): string {
  switch (kind) {
    case 'passphrase':
      return 'passphrase not given';
    case 'pin':
      return 'PIN not given';
    case 'password':
      return 'password not given';
    case 'code':
      return 'one-time code not given';
    case 'confirm':
      return 'confirmation not given';
    default:
      return 'answer not given';
  }
}

/** A prompt as shown to the user: control characters removed (no terminal escapes), at most 500 characters. */
export function cleanPrompt(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, ' ').slice(0, 500);
}

/** One question of the OpenSSH client, as the user is to see it. */
export interface SshPrompt {
  /** Who asks: the host as configured (`user@host:port (OpenSSH)`). */
  readonly host: string;
  /** OpenSSH's own prompt ("Enter passphrase for key '/home/me/.ssh/id_ed25519': "), cleaned. */
  readonly text: string;
  /** True: shown as dots, never echoed. */
  readonly secret: boolean;
  readonly kind: SshPromptKind;
}

/**
 * Asks the user; undefined = cancelled. `signal` aborts when the login ended meanwhile (close the
 * question). Injected by the front: VS Code's input box, the CLI's terminal.
 */
export type SshPrompter = (prompt: SshPrompt, signal: AbortSignal) => Promise<string | undefined>;
