// code-server (VS Code's workbench + Node extension host, served to a browser) for the e2e
// suite and `npm run demo`. Installed once into a cache outside the repo by
// scripts/setup-code-server.sh; each run gets fresh user-data and extensions folders.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  createWriteStream,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from '../util/waitFor';
import { freePort } from '../util/freePort';
import { pidAlive } from '../util/pidAlive';

export const REPO_ROOT = resolve(__dirname, '..', '..');
/** The version scripts/setup-code-server.sh installs (its DEFAULT_VERSION), or KIMI_CODE_SERVER_VERSION. */
export const CODE_SERVER_VERSION =
  process.env.KIMI_CODE_SERVER_VERSION ??
  /^DEFAULT_VERSION=(\S+)$/m.exec(readFileSync(join(REPO_ROOT, 'scripts', 'setup-code-server.sh'), 'utf8'))![1]!;

/** The cache folder the setup script installs into (same default as the script). */
export function codeServerDir(): string {
  return (
    process.env.KIMI_CODE_SERVER_DIR ?? join(homedir(), '.cache', 'kimi-service', `code-server-${CODE_SERVER_VERSION}`)
  );
}

function entryPath(dir = codeServerDir()): string {
  return join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

/** The Node that code-server asks for (engines.node), installed next to it from the npm registry. */
export function codeServerNode(dir = codeServerDir()): string {
  return readFileSync(join(dir, 'node-path'), 'utf8').trim();
}

function installed(dir: string): boolean {
  return (
    existsSync(join(dir, '.kimi-install-complete')) &&
    existsSync(entryPath(dir)) &&
    existsSync(join(dir, 'node-path')) &&
    existsSync(codeServerNode(dir))
  );
}

/** Runs scripts/setup-code-server.sh unless its stamp says the install is complete. */
export function ensureCodeServer(): string {
  const dir = codeServerDir();
  if (installed(dir)) return dir;
  console.log(`[e2e] installing code-server ${CODE_SERVER_VERSION} into ${dir} (~4 min, once)`);
  const r = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-code-server.sh')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, KIMI_CODE_SERVER_DIR: dir, KIMI_CODE_SERVER_VERSION: CODE_SERVER_VERSION },
  });
  if (r.status !== 0) throw new Error(`scripts/setup-code-server.sh failed (status ${r.status})`);
  return dir;
}

/** Every descendant pid of `pid` (from /proc), deepest last. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...; comm may contain spaces/parens: split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      /* process went away */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/**
 * Kills a process, its process group and every descendant (also those that started their
 * own session, e.g. the extension host's children); SIGTERM first, SIGKILL after `graceMs`.
 */
export async function killTree(pid: number, graceMs = 3000): Promise<void> {
  const pids = [pid, ...descendants(pid)];
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* not a group leader / gone */
    }
    for (const p of [...pids, ...descendants(pid)]) {
      try {
        process.kill(p, sig);
      } catch {
        /* gone */
      }
    }
  };
  const gone = () => !pids.some(pidAlive);
  signal('SIGTERM');
  // A tree still alive after the grace is killed (not an error); one still alive after that is left to the OS.
  await waitFor(gone, { timeoutMs: graceMs, intervalMs: 100 }).catch(() => undefined);
  if (!gone()) signal('SIGKILL');
  await waitFor(gone, { timeoutMs: 2000 }).catch(() => undefined);
}

/** Settings that keep the workbench quiet and deterministic (no welcome page, no tips). */
export const QUIET_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'security.workspace.trust.enabled': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'chat.commandCenter.enabled': false,
  'chat.disableAIFeatures': true,
  'git.enabled': false,
  'window.commandCenter': false,
  'remote.autoForwardPorts': false,
  // VS Code 1.1xx opens the chat view in the secondary side bar by default.
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

export interface CodeServerOptions {
  /** Folder opened in the workbench (default: a fresh empty temp folder). */
  folder?: string;
  /** Workspace trust on, the folder never asked about: the window opens in Restricted Mode. */
  restrictedMode?: boolean;
  /** User settings, merged over QUIET_SETTINGS. */
  settings?: Record<string, unknown>;
  /** VSIX files installed before start. */
  vsix?: string[];
  /** Port (default: a free one). */
  port?: number;
  /** Where code-server's own output goes (default: <root>/code-server.log). */
  logFile?: string;
  /** Extra environment for code-server and its extension host (undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** Echo code-server's output to this process's stderr. */
  echo?: boolean;
  /**
   * Run VS Code's own server (lib/vscode/out/server-main.js) with --enable-smoke-test-driver
   * instead of code-server's wrapper: the only way a current workbench runs an extension-host
   * test suite given in its `payload` query.
   */
  smokeTestDriver?: boolean;
  /** VS Code's display language (`--locale`); a language pack for it must be among `vsix`. */
  locale?: string;
  /** Runs code-server as `wrap` says (e.g. in a mount namespace with a home of its own, loginHome.ts). */
  wrap?: (command: string, args: readonly string[]) => { command: string; args: string[] };
}

export interface CodeServer {
  url: string;
  port: number;
  root: string;
  userDataDir: string;
  extensionsDir: string;
  folder: string;
  logFile: string;
  pid: number;
  /** Rewrites User/settings.json (the workbench picks the change up live). */
  writeSettings(settings: Record<string, unknown>): void;
  /** The extension host's log files (LogOutputChannel files live next to them). */
  findLogFiles(pattern: RegExp): string[];
  /** Kills the process tree and removes the temp folder (kept when KIMI_E2E_KEEP=1). */
  stop(): Promise<void>;
}

function runCli(dir: string, args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(codeServerNode(dir), [entryPath(dir), ...args], { env, encoding: 'utf8', timeout: 120_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0) throw new Error(`code-server ${args.join(' ')} failed (status ${r.status}):\n${out}`);
  return out;
}

function walk(dir: string, out: string[] = []): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

export async function startCodeServer(opts: CodeServerOptions = {}): Promise<CodeServer> {
  const dir = ensureCodeServer();
  const root = mkdtempSync(join(tmpdir(), 'kimi-code-server-'));
  const userDataDir = join(root, 'user-data');
  const extensionsDir = join(root, 'extensions');
  const folder = opts.folder ?? join(root, 'workspace');
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  mkdirSync(folder, { recursive: true });
  const configFile = join(root, 'config.yaml');
  // Our own config file, so code-server never writes ~/.config/code-server/config.yaml.
  writeFileSync(configFile, 'auth: none\ncert: false\n');

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The windows of this code-server share a broker (src/broker) with each other, never with
    // another instance's (e2e files run side by side, each with its own servers named "sim").
    KIMI_SERVICE_BROKER_DIR: join(root, 'broker'),
    ...opts.env,
    XDG_DATA_HOME: join(root, 'xdg-data'),
    XDG_CONFIG_HOME: join(root, 'xdg-config'),
  };
  // Keep code-server from finding and reusing another instance's IPC socket (e.g. when the
  // suite itself runs in a VS Code terminal).
  delete env.VSCODE_IPC_HOOK_CLI;
  // Variables tsx/mocha may leave behind would be inherited by the extension host.
  delete env.NODE_OPTIONS;
  for (const [k, v] of Object.entries(opts.env ?? {})) if (v === undefined) delete env[k];

  // code-server's extension host is a remote one: it reads machine-scoped settings
  // (kimiService.servers and the other user-only keys) from the remote machine's settings,
  // Machine/settings.json, not from User/settings.json: this extension's settings go in both, as a
  // user of a remote window puts them in the Remote settings too; the workbench's own stay in User
  // (a remote extension host that saw e.g. openOnInstall: false would behave unlike a real one).
  mkdirSync(join(userDataDir, 'Machine'), { recursive: true });
  const writeSettings = (settings: Record<string, unknown>) => {
    const trust = opts.restrictedMode
      ? {
          'security.workspace.trust.enabled': true,
          'security.workspace.trust.startupPrompt': 'never',
          // The banner's links take the keyboard focus from the palette's key binding.
          'security.workspace.trust.banner': 'never',
        }
      : {};
    const text = JSON.stringify({ ...QUIET_SETTINGS, ...trust, ...settings }, null, 2);
    writeFileSync(join(userDataDir, 'User', 'settings.json'), text);
    const ours = Object.fromEntries(Object.entries(settings).filter(([key]) => key.startsWith('kimiService.')));
    writeFileSync(join(userDataDir, 'Machine', 'settings.json'), JSON.stringify(ours, null, 2));
  };
  writeSettings(opts.settings ?? {});

  for (const vsix of opts.vsix ?? []) {
    runCli(
      dir,
      [
        '--config',
        configFile,
        '--user-data-dir',
        userDataDir,
        '--extensions-dir',
        extensionsDir,
        '--install-extension',
        vsix,
      ],
      env,
    );
  }
  if (opts.locale) writeLanguagePacks(userDataDir, extensionsDir);

  const port = opts.port ?? (await freePort());
  const logFile = opts.logFile ?? join(root, 'code-server.log');
  const log = createWriteStream(logFile);
  // VS Code's own server under code-server (same workbench, same extension host), started with
  // --enable-smoke-test-driver: since about 1.10x the workbench honours a `payload`'s
  // extensionDevelopmentPath/extensionTestsPath only then, and code-server has no such flag.
  const direct = [
    join(dir, 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js'),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--without-connection-token',
    '--accept-server-license-terms',
    '--enable-smoke-test-driver',
    '--disable-telemetry',
    '--user-data-dir',
    userDataDir,
    '--server-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
  ];
  const args = opts.smokeTestDriver
    ? direct
    : [
        entryPath(dir),
        '--config',
        configFile,
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        ...(opts.restrictedMode ? [] : ['--disable-workspace-trust']),
        '--disable-getting-started-override',
        ...(opts.locale ? ['--locale', opts.locale] : []),
        '--user-data-dir',
        userDataDir,
        '--extensions-dir',
        extensionsDir,
        folder,
      ];
  const run = opts.wrap ? opts.wrap(codeServerNode(dir), args) : { command: codeServerNode(dir), args };
  const child: ChildProcess = spawn(run.command, run.args, {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid!;
  let output = '';
  const onData = (b: Buffer) => {
    const s = b.toString();
    output += s;
    log.write(s);
    if (opts.echo) process.stderr.write(s.replace(/^/gm, '[code-server] '));
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await killTree(pid);
    log.end();
  };
  // A crashed or interrupted test run must not leave code-server behind.
  const onExit = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    for (const p of descendants(pid)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  process.once('exit', onExit);

  try {
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`code-server did not start within 60 s:\n${output}`)), 60_000);
      const check = () => {
        if (/HTTP server listening on|Web UI available at/.test(output)) {
          clearTimeout(timer);
          res();
        }
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.once('exit', (code, sig) => {
        clearTimeout(timer);
        rej(new Error(`code-server exited (${code ?? sig}) before listening:\n${output}`));
      });
      check();
    });
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`,
    port,
    root,
    userDataDir,
    extensionsDir,
    folder,
    logFile,
    pid,
    writeSettings,
    findLogFiles: (pattern) => walk(join(userDataDir, 'logs')).filter((f) => pattern.test(f)),
    stop: async () => {
      process.removeListener('exit', onExit);
      await stop();
      if (process.env.KIMI_E2E_KEEP !== '1') rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * languagepacks.json in the user data folder, as VS Code's server writes it when a language pack
 * is installed from its own UI (the CLI's `--install-extension` does not): without it `--locale`
 * resolves to English, for the workbench and the extension host alike.
 */
function writeLanguagePacks(userDataDir: string, extensionsDir: string): void {
  const packs: Record<
    string,
    { hash: string; extensions: unknown[]; translations: Record<string, string>; label: string }
  > = {};
  for (const folder of readdirSync(extensionsDir)) {
    const manifestFile = join(extensionsDir, folder, 'package.json');
    if (!existsSync(manifestFile)) continue;
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
      name: string;
      publisher: string;
      version: string;
      contributes?: {
        localizations?: {
          languageId: string;
          languageName?: string;
          localizedLanguageName?: string;
          translations: { id: string; path: string }[];
        }[];
      };
    };
    const id = `${manifest.publisher}.${manifest.name}`.toLowerCase();
    for (const localization of manifest.contributes?.localizations ?? []) {
      const translations = Object.fromEntries(
        localization.translations.map((t) => [t.id, join(extensionsDir, folder, t.path)]),
      );
      const hash = createHash('md5').update(id).update(manifest.version).digest('hex');
      packs[localization.languageId] = {
        hash,
        extensions: [{ extensionIdentifier: { id }, version: manifest.version }],
        translations,
        label: localization.localizedLanguageName ?? localization.languageName ?? localization.languageId,
      };
    }
  }
  writeFileSync(join(userDataDir, 'languagepacks.json'), JSON.stringify(packs));
}
