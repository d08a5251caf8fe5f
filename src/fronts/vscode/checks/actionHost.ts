/**
 * What the parser and advice actions need from the extension: the server a command acts on, its
 * session, the notifications, and the restart after a change of the server's command line.
 */
import type { ServerProfile } from '../../../config/config';
import type { FleetSession } from '../../../fleet/fleetTypes';
import type { NoticeKind } from '../output/notifier';
import type { ChangeRestart } from '../restart/restartCommand';

export interface ActionHost {
  /** The server a command acts on: the named or the active one (unknown names and bad settings are said). */
  requireServer(target?: string): ServerProfile | undefined;
  /** The session of a server, or undefined after telling the user why there is none. */
  openSession(server: ServerProfile): Promise<FleetSession | undefined>;
  notify(kind: NoticeKind, message: string): Promise<void>;
  showLog(): void;
  /**
   * The restart after a change of the command line, through the restart rule (a load under way:
   * follow it or restart anyway, as the user chooses); undefined when nothing was restarted or followed.
   */
  restartAfterChange(server: ServerProfile): Promise<ChangeRestart | undefined>;
}
