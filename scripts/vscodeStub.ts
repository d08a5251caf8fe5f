/**
 * The little of the `vscode` module that the chat model's token counts use at run time
 * (fronts/vscode/chat/tokenCounter.ts: CancellationError), for a benchmark run without VS Code.
 * Imported first: it answers `require('vscode')` for the modules loaded after it.
 */
import Module from 'node:module';

class CancellationError extends Error {
  constructor() {
    super('Canceled');
    this.name = 'Canceled';
  }
}

const stub = { CancellationError };
const loader = Module as unknown as { _load(request: string, ...rest: unknown[]): unknown };
const original = loader._load.bind(Module);
loader._load = (request: string, ...rest: unknown[]) => (request === 'vscode' ? stub : original(request, ...rest));
