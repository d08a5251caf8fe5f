/**
 * The base of the extension's services: what a service registers (listeners, timers, emitters,
 * other services) is disposed with it, last registered first. A registration after the
 * disposal is disposed at once.
 */
export interface DisposableLike {
  dispose(): unknown;
}

export abstract class Disposable implements DisposableLike {
  private readonly registered: DisposableLike[] = [];
  private disposedAlready = false;

  protected get isDisposed(): boolean {
    return this.disposedAlready;
  }

  protected _register<T extends DisposableLike>(disposable: T): T {
    if (this.disposedAlready) disposable.dispose();
    else this.registered.push(disposable);
    return disposable;
  }

  /** A timer of this service, cleared when it is disposed. */
  protected _registerTimeout(run: () => void, ms: number): void {
    const timer = setTimeout(run, ms);
    this._register({ dispose: () => clearTimeout(timer) });
  }

  dispose(): void {
    if (this.disposedAlready) return;
    this.disposedAlready = true;
    for (const disposable of this.registered.splice(0).reverse()) disposable.dispose();
  }
}
