/**
 * Lets a script outside VS Code load a front module that imports `vscode` (the status bar's
 * text functions use none of it): `require('vscode')` gives inert classes and values.
 */
import Module from 'node:module';

type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;

export function installVscodeStub(): void {
  const mod = Module as unknown as { _load: Loader };
  if ((mod._load as Loader & { stubbed?: boolean }).stubbed) return;
  const inert = new Proxy(
    {},
    {
      get: (_t, key) => (key === '__esModule' ? false : key === 'then' ? undefined : class Inert {}),
    },
  );
  const load = mod._load;
  const stubbed: Loader & { stubbed?: boolean } = function (this: unknown, request, parent, isMain) {
    return request === 'vscode' ? inert : load.call(this, request, parent, isMain);
  };
  stubbed.stubbed = true;
  mod._load = stubbed;
}
