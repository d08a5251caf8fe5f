/** Text of settings in messages: control characters found and shown harmlessly. */

// A control character, including newline: never valid in a path or a name.
export const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Shows a bad value in a message without letting it break the message (a newline would forge a
 * log line): cut first, so a value of megabytes costs no more than a short one.
 */
export function printable(text: string, max = 80): string {
  const clean = text.slice(0, max + 1).replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > max ? `${clean.slice(0, max - 3)}...` : clean;
}
