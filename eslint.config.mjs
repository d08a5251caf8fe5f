// ESLint flat config: typescript-eslint's recommended rules over src/, test/ and scripts/, and import
// rules that encode the layering of src/ (README, "Architecture"):
//   fronts (and extension.ts) -> agent, broker -> fleet -> present, verify -> monitor -> engine, target, host
//   -> transport -> config, util
// A layer imports only layers below it (or its own); `vscode` belongs to the fronts alone.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';

// Highest first. Folders at one level may import each other, except where `internals` says.
const LAYERS = [
  ['fronts', 'extension.ts'],
  ['agent', 'broker'],
  ['fleet'],
  ['present', 'verify'],
  ['monitor'],
  ['engine', 'target', 'host'],
  ['transport'],
  ['config', 'util'],
];
const src = (name) => `./src/${name}`;

// present/words is a leaf every layer may import: the sentences a user reads, as pure functions of
// facts, so that a layer below present/ words its errors there and not in place.
const WORDS = 'present/words';

const layerZones = LAYERS.flatMap((level, i) => {
  const higher = LAYERS.slice(0, i).flat();
  if (higher.length === 0) return [];
  return level.flatMap((name) => {
    const message = `Layering: ${name} may import only the layers below it (${
      LAYERS.slice(i + 1)
        .flat()
        .join(', ') || 'none'
    }) and its own level (and ${WORDS}); ${higher.join(', ')} sit above it.`;
    const zone = { target: src(name), from: higher.filter((h) => h !== 'present').map(src), message };
    // (an exception is resolved against each `from`: present/ gets its own zone so the exception is its alone)
    return higher.includes('present') ? [zone, { ...zone, from: src('present'), except: ['./words'] }] : [zone];
  });
});

const wordsLeaf = {
  target: src(WORDS),
  from: './src',
  except: ['./util', `./${WORDS}`],
  message: `${WORDS} is a leaf every layer imports: it imports only util/ (take the facts as arguments).`,
};

// Each engine (engine/sglang, engine/vllm) and each target kind (target/systemd, target/docker,
// target/slurm) is a plug-in: its folder registers itself in engine/engine.ts or target/target.ts, and nothing outside
// engine/ or target/ imports inside it.
const PLUGINS = [
  './src/engine/sglang',
  './src/engine/vllm',
  './src/target/systemd',
  './src/target/docker',
  './src/target/slurm',
];
const sealed = LAYERS.flat()
  .filter((name) => name !== 'engine' && name !== 'target')
  .map((name) => ({
    target: src(name),
    from: PLUGINS,
    message: `Sealed plug-in: ${name} never imports inside an engine's or a target kind's folder; ask the Engine (engine/engine.ts) or the Target (target/target.ts), or move the shared piece to engine/ or target/.`,
  }));

// engine/ and target/ meet only through their top-level files (engine/events.ts, target/target.ts, ...):
// neither reaches into the other's engine- or manager-specific folders, nor do those folders reach into
// their siblings.
const internals = [
  [
    './src/engine',
    ['./src/target/systemd', './src/target/docker', './src/target/slurm'],
    'engine/ never imports target/systemd, target/docker or target/slurm: go through target/target.ts or move the shared piece down.',
  ],
  [
    './src/target',
    ['./src/engine/sglang', './src/engine/vllm'],
    'target/ never imports engine/sglang or engine/vllm: go through the engine/ top level or move the shared piece down.',
  ],
  [
    './src/engine/sglang',
    ['./src/engine/vllm'],
    'engine/sglang and engine/vllm never import each other: share through engine/.',
  ],
  [
    './src/engine/vllm',
    ['./src/engine/sglang'],
    'engine/vllm and engine/sglang never import each other: share through engine/.',
  ],
  // The target kinds never import each other: what two of them share lives in target/.
  ...['./src/target/systemd', './src/target/docker', './src/target/slurm'].map((kind, _, kinds) => [
    kind,
    kinds.filter((other) => other !== kind),
    `${kind.slice(6)} never imports another target kind's folder (${kinds
      .filter((other) => other !== kind)
      .map((other) => other.slice(6))
      .join(', ')}): share through target/.`,
  ]),
  // The CLI and the MCP server run as plain Node programs (dist/cli.js, dist/mcp.js), without VS Code.
  [
    './src/fronts/cli',
    ['./src/fronts/vscode', './src/fronts/lm', './src/fronts/mcp', './src/extension.ts'],
    'fronts/cli runs without VS Code: it imports no other front; share through the layers below.',
  ],
  [
    './src/fronts/mcp',
    ['./src/fronts/vscode', './src/fronts/lm', './src/fronts/cli', './src/extension.ts'],
    'fronts/mcp runs without VS Code: it imports no other front; share through the layers below.',
  ],
  // The monitor's pure rooms (the reducer, the ETA, the history) never reach its I/O rooms (the watch
  // and its witnesses, the reads before a restart): the state is folded from signals, not fetched.
  ...['./src/monitor/state', './src/monitor/eta', './src/monitor/history'].map((target) => [
    target,
    ['./src/monitor/watch', './src/monitor/forecast'],
    'monitor/state, monitor/eta and monitor/history are pure: they never import monitor/watch or monitor/forecast (the I/O); take what they need as an argument.',
  ]),
].map(([target, from, message]) => ({ target, from, message }));

const NO_VSCODE =
  'Only src/fronts/** and src/extension.ts import vscode; the core below the fronts stays VS Code-free, and fronts/cli and fronts/mcp run as plain Node programs.';

// Recommended rules turned off for the whole tree (each would need edits across many files):
const sharedOff = {
  // Log and terminal text is matched and scrubbed for control characters on purpose (ESC, NUL, ...).
  'no-control-regex': 'off',
  // Flags `let x = fallback; try { x = read() } catch { ... }`, the tree's idiom for optional reads.
  'no-useless-assignment': 'off',
  // New in ESLint 10: rethrown errors with a new message; the sites are fronts/ code being rewritten.
  'preserve-caught-error': 'off',
};

export default tseslint.config(
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'test/gpu-host/sglang-sim/**', 'test/fixtures/**'] },
  {
    files: ['{src,test,scripts}/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'] })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // `let timer; on('close', () => clear(timer)); timer = set(...)`: read in a closure before it is set.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      ...sharedOff,
    },
  },
  {
    // Tests load the simulated host's plain CommonJS modules by computed path, poke at untyped JSON
    // results, and match log lines whose spacing is the point.
    files: ['{test,scripts}/**/*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      'no-regex-spaces': 'off',
    },
  },
  {
    // The simulated host's commands (test/gpu-host/bin, lib), the e2e fixture extension, build scripts.
    files: ['{test,scripts}/**/*.{js,cjs,mjs}', '*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2022 },
    // Node's globals (require, process, Buffer, ...): without the `globals` package, no-undef is left to
    // the tests that run these files.
    rules: { 'no-undef': 'off', ...sharedOff },
  },
  {
    files: ['{test,scripts}/**/*.{js,cjs}'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/fronts/vscode/**', 'src/fronts/lm/**', 'src/extension.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: NO_VSCODE }] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: [...layerZones, wordsLeaf, ...internals, ...sealed] }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
);
