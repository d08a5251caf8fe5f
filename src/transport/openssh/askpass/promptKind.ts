/**
 * What an OpenSSH prompt asks for, read from its words ("Enter passphrase for key '...': ",
 * "Enter PIN for 'token': ", "user@host's password: ", "(user@host) Verification code: "); a
 * refusal's words are present/words/opensshWords.ts's. Pure.
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
