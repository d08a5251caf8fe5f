// Bundles the extension into dist/extension.js (one CommonJS file; `vscode` is provided by
// the host). ssh2 loads its optional native modules inside try/catch and falls back to pure JS.
import * as esbuild from 'esbuild';
import { chmodSync, cpSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
// `node esbuild.mjs --only=cli` builds dist/cli.js alone (the CLI's integration tests).
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

// node-fetch 2 takes `Url.URL || whatwgUrl.URL`: Node always has the first, so whatwg-url (and
// its Unicode tables, tr46: ~280 KiB of the bundle) is never used. An empty module stands in.
const noWhatwgUrl = {
  name: 'no-whatwg-url',
  setup(build) {
    build.onResolve({ filter: /^whatwg-url$/ }, () => ({ path: 'whatwg-url', namespace: 'stub' }));
    build.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

const options = {
  entryPoints: ['src/extension.ts'],
  plugins: [noWhatwgUrl],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', 'cpu-features', '*.node'],
  // jsonc-parser's `main` is a UMD build whose lazy requires esbuild cannot follow: take its ES module.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  metafile: true,
};

// The command line (package.json "bin": kimi-service): the same core without `vscode`.
const cliOptions = {
  ...options,
  entryPoints: ['src/fronts/cli/main.ts'],
  outfile: 'dist/cli.js',
  external: options.external.filter((e) => e !== 'vscode'),
  banner: { js: '#!/usr/bin/env node' },
  // jsonc-parser's `main` is a UMD build whose lazy requires esbuild cannot follow: take its ES module.
  mainFields: ['module', 'main'],
};

/**
 * Builds and writes each output file whole: into a temporary file beside it, then renamed over it.
 * Test files running side by side rebuild dist/cli.js while another one runs it; a reader sees the
 * old bundle or the new one, never a half-written file ("SyntaxError: Unexpected end of input").
 */
async function bundle(buildOptions, mode = 0o644) {
  const result = await esbuild.build({ ...buildOptions, write: false });
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    const partial = `${file.path}.${process.pid}.partial`;
    writeFileSync(partial, file.contents, { mode: file.path.endsWith('.map') ? 0o644 : mode });
    renameSync(partial, file.path);
  }
  return result;
}

async function buildCli() {
  const result = await bundle(cliOptions, 0o755);
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  console.log(`dist/cli.js: ${(bytes / 1024).toFixed(0)} KiB${production ? ' (minified)' : ''}`);
}

// The MCP server (`node dist/mcp.js`, stdio): the same core without `vscode`.
const mcpOptions = {
  ...options,
  entryPoints: ['src/fronts/mcp/main.ts'],
  outfile: 'dist/mcp.js',
  external: options.external.filter((e) => e !== 'vscode'),
  mainFields: ['module', 'main'],
};

// The chat model's token counter runs in a worker thread (src/engine/tokenizer/countWorker.ts),
// loaded from next to dist/extension.js.
const workerOptions = {
  ...options,
  entryPoints: ['src/engine/tokenizer/countWorker.ts'],
  outfile: 'dist/tokenCountWorker.js',
  external: options.external.filter((e) => e !== 'vscode'),
  mainFields: ['module', 'main'],
};

async function buildWorker() {
  const result = await bundle(workerOptions);
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  console.log(`dist/tokenCountWorker.js: ${(bytes / 1024).toFixed(0)} KiB${production ? ' (minified)' : ''}`);
}

async function buildMcp() {
  const result = await bundle(mcpOptions);
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  console.log(`dist/mcp.js: ${(bytes / 1024).toFixed(0)} KiB${production ? ' (minified)' : ''}`);
}

// OpenSSH's SSH_ASKPASS (src/transport/openssh/askpass): dist/askpass.sh runs dist/askpass.js with
// the extension's own runtime; it asks the transport over a private socket.
const askpassOptions = {
  ...options,
  entryPoints: ['src/transport/openssh/askpass/askpassMain.ts'],
  outfile: 'dist/askpass.js',
  external: options.external.filter((e) => e !== 'vscode'),
  sourcemap: false,
};

async function buildAskpass() {
  await bundle(askpassOptions);
  const partial = `dist/askpass.sh.${process.pid}.partial`;
  cpSync('src/transport/openssh/askpass/askpass.sh', partial);
  chmodSync(partial, 0o755);
  renameSync(partial, 'dist/askpass.sh');
}

function copyWebviewAssets() {
  mkdirSync('dist/media', { recursive: true });
  cpSync('node_modules/uplot/dist/uPlot.iife.min.js', 'dist/media/uPlot.iife.min.js');
  cpSync('node_modules/uplot/dist/uPlot.min.css', 'dist/media/uPlot.min.css');
  // ssh2 talks to Pageant on Windows through its pagent.exe, found at <bundle dir>/../util/.
  mkdirSync('util', { recursive: true });
  cpSync('node_modules/ssh2/util/pagent.exe', 'util/pagent.exe');
}

if (only === 'cli') {
  await buildCli();
} else if (only === 'askpass') {
  await buildAskpass();
} else if (only === 'mcp') {
  await buildMcp();
} else if (watch) {
  const ctx = await esbuild.context(options);
  copyWebviewAssets();
  await ctx.watch();
  await (await esbuild.context(cliOptions)).watch();
  await (await esbuild.context(mcpOptions)).watch();
  await (await esbuild.context(workerOptions)).watch();
  await buildAskpass();
} else {
  const result = await bundle(options);
  copyWebviewAssets();
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  console.log(`dist/extension.js: ${(bytes / 1024).toFixed(0)} KiB${production ? ' (minified)' : ''}`);
  await buildCli();
  await buildMcp();
  await buildWorker();
  await buildAskpass();
}
