// Bundles the extension into dist/extension.js (one CommonJS file; `vscode` is provided by
// the host). ssh2 loads its optional native modules inside try/catch and falls back to pure JS.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', 'cpu-features', '*.node'],
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  metafile: true,
};

function copyWebviewAssets() {
  mkdirSync('dist/media', { recursive: true });
  cpSync('node_modules/uplot/dist/uPlot.iife.min.js', 'dist/media/uPlot.iife.min.js');
  cpSync('node_modules/uplot/dist/uPlot.min.css', 'dist/media/uPlot.min.css');
}

if (watch) {
  const ctx = await esbuild.context(options);
  copyWebviewAssets();
  await ctx.watch();
} else {
  const result = await esbuild.build(options);
  copyWebviewAssets();
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  console.log(`dist/extension.js: ${(bytes / 1024).toFixed(0)} KiB${production ? ' (minified)' : ''}`);
}
