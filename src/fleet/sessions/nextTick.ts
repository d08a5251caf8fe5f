/**
 * Work the fleet does on the next tick (a watch moved to a session with new settings), and the
 * servers whose watch is about to move (a background watch leaves them alone meanwhile).
 * Nothing runs after the disposal.
 */
export class NextTick {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly moving = new Set<string>();
  private disposed = false;

  /** The server's watch moves on the next tick. */
  isMoving(name: string): boolean {
    return this.moving.has(name);
  }

  /** Runs `run` on the next tick; with `moving`, that server counts as moving until then. */
  later(run: () => void, moving?: string): void {
    if (moving !== undefined) this.moving.add(moving);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (moving !== undefined) this.moving.delete(moving);
      if (!this.disposed) run();
    }, 0);
    this.timers.add(timer);
  }

  dispose(): void {
    this.disposed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
