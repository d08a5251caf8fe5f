/** A minimal typed event emitter (VS Code's EventEmitter is not available below the fronts). */
export class Emitter<T> {
  private readonly listeners = new Set<(event: T) => void>();

  /**
   * With `onListenerError`, a listener that throws is reported there and the others still run;
   * without it the error reaches the caller of `fire`.
   */
  constructor(private readonly onListenerError?: (error: unknown) => void) {}

  on(listener: (event: T) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  fire(event: T): void {
    for (const listener of [...this.listeners]) {
      if (!this.onListenerError) {
        listener(event);
        continue;
      }
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
