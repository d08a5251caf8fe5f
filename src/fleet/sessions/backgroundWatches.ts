/**
 * Which servers a front watches in the background (kimiService.watchAfterReady), and the marks of
 * watches under way that a closed window offers back at the next start. No VS Code here: the
 * front says when, and shows the offer.
 */
import { activeProfile, type ServerProfile, type Settings } from '../../config/config';
import type { MementoLike } from '../../monitor/history/history';

const WATCHES_KEY = 'kimi.watchesUnderWay';

export class BackgroundWatches {
  /** Background watches start once the resume offer knows which servers it offers back. */
  private allowed = false;
  /** Servers whose watch the user stopped: not watched again in the background until a command watches them. */
  private readonly stoppedByUser = new Set<string>();
  private disposed = false;

  constructor(
    private readonly fleet: { watchAll(skip: (server: ServerProfile) => boolean): string[] },
    /** Per window: which watches were under way when it closed. */
    private readonly marks: MementoLike,
    /** Servers this front cannot reach (e.g. `local` on the UI side of a remote window). */
    private readonly unreachable: (server: ServerProfile) => boolean,
  ) {}

  stoppedBy(names: readonly string[]): void {
    for (const name of names) this.stoppedByUser.add(name);
  }

  /** A command watches the server: the user's stop no longer holds. */
  commanded(name: string): void {
    this.stoppedByUser.delete(name);
  }

  /**
   * Every configured server under steady watch, started quietly, except the active server (its
   * own commands and the resume offer start its watch) and the servers offered back. The names
   * whose watch started.
   */
  start(settings: Settings | undefined, offeredBack: ReadonlySet<string> = new Set()): string[] {
    if (!settings?.watchAfterReady || !this.allowed || this.disposed) return [];
    const active = activeProfile(settings)?.name;
    return this.fleet.watchAll(
      (s) => s.name === active || offeredBack.has(s.name) || this.stoppedByUser.has(s.name) || this.unreachable(s),
    );
  }

  /**
   * The servers whose watch a closed window cut short, to offer back; the marks are cleared and
   * background watches allowed from now on.
   */
  async takeOffers(settings: Settings | undefined): Promise<ServerProfile[]> {
    const marks = this.marks.get<Record<string, number>>(WATCHES_KEY) ?? {};
    const servers = settings?.servers.filter((s) => marks[s.name] !== undefined) ?? [];
    this.allowed = true;
    await this.marks.update(WATCHES_KEY, undefined);
    return servers;
  }

  /** A watch began (`startedAt`) or ended (undefined): the mark a closed window leaves. */
  async remember(name: string, startedAt: number | undefined): Promise<void> {
    // A watch cancelled because the window closes is still under way on the host: keep its mark.
    if (this.disposed) return;
    const marks = { ...(this.marks.get<Record<string, number>>(WATCHES_KEY) ?? {}) };
    if (startedAt === undefined) delete marks[name];
    else marks[name] = startedAt;
    await this.marks.update(WATCHES_KEY, Object.keys(marks).length > 0 ? marks : undefined);
  }

  dispose(): void {
    this.disposed = true;
  }
}
