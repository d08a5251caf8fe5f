/** Text as VS Code shows it (notifications, the log, the status bar, the servers view): secrets masked, the core's hints in VS Code's words. */
import { forFront } from '../../../present/hints';
import { maskSecrets } from '../../../util/secrets';

export function shownText(text: string, known: readonly string[] = []): string {
  return forFront(maskSecrets(text, known), 'vscode');
}
