/**
 * The words every front uses when a call names no usable server (fleet/servers/resolveServer) or the
 * settings cannot be used: a sentence without a front's prefix ("Kimi: ", "kimi-service: ")
 * or its ending ("Nothing was run."), in the display language. Pure.
 */
import * as l10n from '@vscode/l10n';
import { printable } from '../config/text';

/** Why no server was chosen (fleet/servers/resolveServer). */
export type ServerRefusal =
  | { readonly reason: 'none' }
  | { readonly reason: 'unknown'; readonly name: string; readonly known: readonly string[] };

/** `source`: where the servers come from ("kimiService.servers", a file's path). */
export function serverChoiceText(choice: ServerRefusal, source: string): string {
  if (choice.reason === 'none') return l10n.t('no server is configured in {0} (kimiService.servers is empty)', source);
  const known = choice.known.map((name) => `"${printable(name)}"`).join(', ');
  return l10n.t('no server named "{0}" in {1} (configured: {2})', printable(choice.name), source, known);
}

/** Settings that do not parse: each error names its setting. */
export function invalidSettingsText(source: string, errors: readonly string[]): string {
  return l10n.t('the Kimi configuration is not valid ({0}): {1}', source, errors.join('; '));
}

/** The sentence's first letter in capitals, for a front that starts a message with it. */
export function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
