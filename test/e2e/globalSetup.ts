// Mocha's global fixture for the e2e suite: the VSIX is packaged once, in mocha's main process,
// before the parallel workers start (each would otherwise run `npm run package` into the same dist/).
import { packageExtension } from './scenario';

export function mochaGlobalSetup(): void {
  process.env.KIMI_E2E_VSIX = packageExtension();
}
