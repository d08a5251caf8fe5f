/** Each server's recent states with their times (the last `size`): for a problem report. Pure. */
export interface StateStep {
  readonly at: number;
  readonly state: string;
}

export class StateHistory {
  private readonly steps = new Map<string, StateStep[]>();

  constructor(private readonly size = 30) {}

  /** A state seen at `at`; the same state again is not a step. */
  record(server: string, state: string, at: number): void {
    const list = this.steps.get(server) ?? [];
    if (list.at(-1)?.state === state) return;
    list.push({ at, state });
    if (list.length > this.size) list.shift();
    this.steps.set(server, list);
  }

  of(server: string): readonly StateStep[] {
    return [...(this.steps.get(server) ?? [])];
  }
}
