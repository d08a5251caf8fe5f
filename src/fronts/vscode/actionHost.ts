/**
 * What the parser and advice actions need from the extension: the server a command acts on, its
 * session, the notifications, and the restart after a change of the server's command line.
 */
import type { ServerProfile } from '../../config/config';
import type { FleetSession } from '../../fleet/fleet';
import type { WatchOutcome } from '../../monitor/watcher';
import type { NoticeKind } from './notifier';

export interface ActionHost {
  /** The server when it is configured and not loading (a load under way is said). */
  idleServer(target?: string): ServerProfile | undefined;
  /** The session of a server, or undefined after telling the user why there is none. */
  openSession(server: ServerProfile): Promise<FleetSession | undefined>;
  notify(kind: NoticeKind, message: string): Promise<void>;
  showLog(): void;
  /** Restarts and watches; resolves with how the load ended. */
  watch(server: ServerProfile, mode: 'restart' | 'attach'): Promise<WatchOutcome | undefined>;
}
