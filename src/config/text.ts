/** Text of settings in messages: control characters found and shown harmlessly. */

// A control character, including newline: never valid in a path or a name.
export const CONTROL = /[\u0000-\u001f\u007f]/;

/** Shows a bad value in a message without letting it break the message. */
export function printable(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 77)}...` : clean;
}
