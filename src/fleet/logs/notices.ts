/**
 * What a front that notifies (VS Code) says once and what it leaves to its log: the policy,
 * without the notifications themselves.
 */

/** The same failure is not notified again within this long (a crash loop followed by a steady watch). */
export const REPEAT_FAILURE_QUIET_MS = 10 * 60_000;

export class NoticeGate {
  private readonly lastFailure = new Map<string, { readonly text: string; readonly at: number }>();
  private readonly journalWarned = new Set<string>();
  /** Servers watched in the background that no command has touched: their refusals go to the log. */
  private readonly backgroundOnly = new Set<string>();

  /** A failure is notified once; the same text again soon after goes to the log only. */
  failure(server: string, text: string, now: number): boolean {
    const last = this.lastFailure.get(server);
    if (last && last.text === text && now - last.at < REPEAT_FAILURE_QUIET_MS) return false;
    this.lastFailure.set(server, { text, at: now });
    return true;
  }

  /** An alert is notified, except an unreadable journal after the first time. */
  alert(server: string, kind: string): boolean {
    if (kind !== 'journal') return true;
    if (this.journalWarned.has(server)) return false;
    this.journalWarned.add(server);
    return true;
  }

  watchedInBackground(servers: readonly string[]): void {
    for (const name of servers) this.backgroundOnly.add(name);
  }

  /** A command named the server: what it is refused is said from now on. */
  touched(server: string): void {
    this.backgroundOnly.delete(server);
  }

  /** A refusal is notified unless the server is only watched in the background (and not the active one). */
  refusal(server: string, active: string | undefined): boolean {
    return !this.backgroundOnly.has(server) || server === active;
  }
}
