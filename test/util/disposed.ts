/**
 * Disposes what a test made and gives `undefined` to forget it, for the one-line hook
 * `afterEach(() => (test = disposed(test)))`.
 */
export function disposed(made: { dispose(): void } | undefined): undefined {
  made?.dispose();
  return undefined;
}
