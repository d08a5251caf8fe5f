/** A minimal typed event emitter (VS Code's EventEmitter is not available below the fronts). */
export class Emitter<T> {
  private readonly listeners = new Set<(event: T) => void>();

  on(listener: (event: T) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  fire(event: T): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  dispose(): void {
    this.listeners.clear();
  }
}
