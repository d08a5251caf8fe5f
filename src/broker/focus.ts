/**
 * Which peer tells its user (the "ready" toast, a failure): the window focused last, else the
 * owner. Pure: the owner feeds it the focus reports and asks it at each event.
 */
export const OWNER_PEER = 0;

/** The peers' focus reports, in order: which window was focused last, and so tells. */
export class LastFocused {
  /** Peer → when it was last seen focused (a peer focused now counts as focused at every ask). */
  private readonly lastFocused = new Map<number, number>();
  private readonly focusedNow = new Set<number>();
  private tick = 0;

  report(peer: number, focused: boolean): void {
    this.tick += 1;
    if (focused) {
      this.focusedNow.add(peer);
      this.lastFocused.set(peer, this.tick);
    } else {
      if (this.focusedNow.delete(peer)) this.lastFocused.set(peer, this.tick);
    }
  }

  left(peer: number): void {
    this.focusedNow.delete(peer);
    this.lastFocused.delete(peer);
  }

  /** The peer that tells: one focused now, else the one focused last, else the owner. */
  teller(): number {
    let best = OWNER_PEER;
    let bestAt = -1;
    for (const [peer, at] of this.lastFocused) {
      const rank = this.focusedNow.has(peer) ? Number.MAX_SAFE_INTEGER - 1 - (this.tick - at) : at;
      if (rank > bestAt) {
        best = peer;
        bestAt = rank;
      }
    }
    return best;
  }
}
