// Bundles the extension-host suite (mocha + the simulated GPU host harness) for VS Code's test runner.
import * as esbuild from 'esbuild';

await esbuild.build({
  entryPoints: ['test/desktop/suite/index.ts'],
  bundle: true,
  outfile: 'out/desktop/index.js',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', 'mocha', 'cpu-features', '*.node'],
  // jsonc-parser's `main` is a UMD build whose lazy requires esbuild cannot follow (as in esbuild.mjs).
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  sourcemap: 'inline',
  logLevel: 'warning',
});
