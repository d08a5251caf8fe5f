/**
 * "Kimi Service: Verify parsers" and the check after a ready load
 * (kimiService.verifyParsersWhenReady): reasoning and tool calling really tried on the server,
 * the table in the log, the summary in a notification. A server in a rolling restart is
 * checked by the roll itself.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../../config/config';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import { NotReadyError } from '../../../fleet/fleetError';
import { serverReport } from '../../../present/report';
import { errorText } from '../../../util/errors';
import type { Notifier } from '../output/notifier';
import type { ServerPicker } from '../commands/serverPicker';
import type { Sessions } from '../sessions';

export class ParserChecks {
  /** Servers in a rolling restart: the roll checks their parsers itself. */
  private readonly rolling = new Set<string>();

  constructor(
    private readonly fleet: FleetVerbs,
    private readonly sessions: Sessions,
    private readonly choice: ServerPicker,
    private readonly notifier: Notifier,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async command(target?: string): Promise<void> {
    const server = this.choice.require(target);
    const session = server && (await this.sessions.openSession(server));
    if (server && session) await this.verify(server);
  }

  /** After a ready load: checked unless a rolling restart checks it. */
  async afterReady(server: ServerProfile): Promise<void> {
    if (!this.rolling.has(server.name)) await this.verify(server, true);
  }

  /** Runs `run` while the roll checks these servers' parsers itself. */
  async during<T>(names: readonly string[], run: () => Promise<T>): Promise<T> {
    for (const name of names) this.rolling.add(name);
    try {
      return await run();
    } finally {
      for (const name of names) this.rolling.delete(name);
    }
  }

  /** Checks that reasoning and tool calling really work on the server, and reports it. */
  async verify(server: ServerProfile, afterReady = false): Promise<void> {
    const log = (line: string) => this.log.info(`[${server.name}] ${line}`);
    try {
      const result = await this.fleet.verifyParsers(server, log);
      for (const line of result.table.split('\n')) log(line);
      const { readySummary } = await import('../../../present/verifyReport');
      // "ready, parsers verified for agents (N checks)" only when every check passed.
      const message = l10n.t(
        'Kimi on {0}: {1}',
        server.name,
        afterReady ? readySummary(result.summary) : result.summary,
      );
      if (result.allPassed) void vscode.window.showInformationMessage(message);
      else void this.notifier.notify('warn', message);
    } catch (error) {
      if (error instanceof NotReadyError) {
        // Asked by the user (the palette, the dashboard): the refusal is said where they look.
        const state = serverReport(error.snapshot).summary;
        const next =
          error.why === 'loading' ? l10n.t('wait until it is ready') : l10n.t('its logs say why it is not serving');
        void this.notifier.notify(
          'warn',
          l10n.t('Kimi: the parsers can be checked only on a ready server ({0}): {1}. Nothing was run.', state, next),
        );
        return;
      }
      this.log.warn(`[${server.name}] Parser verification could not run: ${errorText(error)}`);
    }
  }
}
