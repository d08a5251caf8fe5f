// One e2e scenario = a simulated GPU host (real sshd + SGLang simulator) + code-server with the
// packaged extension configured for that host + the workbench in headless Chromium.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startGpuHost, type GpuHost, type GpuHostOptions } from '../gpu-host/harness';
import { REPO_ROOT, startCodeServer, type CodeServer } from './codeServer';
import { loginHome, type LoginHome } from '../util/loginHome';
import {
  clickDialogButton,
  openWorkbench,
  resetRecorders,
  resultsDir,
  runCommand,
  screenshot,
  statusHistory,
  formatStatusHistory,
  notificationHistory,
  type DialogInfo,
  type Workbench,
  waitForDialog,
  waitForStatus,
} from './workbench';
import type { Page } from 'playwright-core';
import { serverEntry } from '../integration/simHost';

export const VSIX = join(REPO_ROOT, 'dist', 'kimi-service.vsix');

/** `npm run package` takes seconds with node_modules in place, a few minutes when it runs npm ci. */
export const PACKAGE_LIMIT_MS = 600_000;

let packaged = false;
/** `npm run package` once per run (dist/kimi-service.vsix). KIMI_E2E_VSIX=path skips it. */
export function packageExtension(): string {
  if (process.env.KIMI_E2E_VSIX) return process.env.KIMI_E2E_VSIX;
  if (packaged && existsSync(VSIX)) return VSIX;
  const t0 = Date.now();
  // Synchronous, so mocha's own timeout cannot end it: its limit is its own.
  const r = spawnSync('npm', ['run', 'package'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: PACKAGE_LIMIT_MS,
    killSignal: 'SIGKILL',
  });
  if (r.status !== 0 || !existsSync(VSIX)) {
    const why = r.error ? `${r.error.message} (limit ${PACKAGE_LIMIT_MS / 1000} s)` : `status ${r.status}`;
    throw new Error(`npm run package failed (${why}):\n${r.stdout}\n${r.stderr}`);
  }
  console.log(`    [e2e] packaged ${VSIX} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  packaged = true;
  return VSIX;
}

/** A load of ~`seconds` s on the default 16 x 4 MiB model folder: every read is cold. */
export function simForLoad(seconds: number, shards = 16, shardBytes = 4 * 1024 * 1024): Record<string, unknown> {
  const mbps = (shards * shardBytes) / 1e6 / seconds;
  return { readMBps: mbps, warmReadMBps: mbps, coldFiles: 'all' };
}

/** The unit's ExecStart with `--tool-call-parser kimi_k2 --reasoning-parser kimi_k2`. */
export function unitWithParsers(host: GpuHost, parser = 'kimi_k2'): string {
  return host.defaultUnitText.replace(
    '--trust-remote-code',
    `--trust-remote-code --tool-call-parser ${parser} --reasoning-parser ${parser}`,
  );
}

export interface ScenarioOptions {
  /** Names the folder of this scenario's logs under the results folder. */
  name?: string;
  gpuHost?: GpuHostOptions;
  /** Unit file text (e.g. unitWithParsers) written before code-server starts. */
  unitText?: (host: GpuHost) => string;
  hostKeyPolicy?: 'ask' | 'strict' | 'accept-new';
  /** Put the host's key in the known-hosts file (default true). */
  knownHost?: boolean;
  /** Extra user settings, or a function of the started host that returns them. */
  settings?: Record<string, unknown> | ((host: GpuHost) => Record<string, unknown>);
  /** More VSIX files installed next to the extension (e.g. a fixture that uses it). */
  extraVsix?: () => string[];
  /** Extra environment of the extension host (e.g. a HOME of the scenario's own, in `tmp`). */
  env?: (host: GpuHost, tmp: string) => Record<string, string | undefined>;
  /** Open the folder untrusted (Restricted Mode). */
  restrictedMode?: boolean;
  /** The opened folder's .vscode/settings.json (default: none), e.g. a repository's own settings. */
  workspaceSettings?: (host: GpuHost) => Record<string, unknown>;
  /** The browser's device pixels per CSS pixel (default 1); 2 for sharp pictures. */
  deviceScaleFactor?: number;
  /** VS Code's display language; its language pack goes in `extraVsix`. */
  locale?: string;
  /**
   * Run on the started host before code-server starts (e.g. a scheduler the settings name a job
   * of); what it returns runs at the stop, before the host stops.
   */
  prepare?: (host: GpuHost) => Promise<() => Promise<void>>;
  /**
   * The login user's ~/.ssh/config as OpenSSH reads it (from the passwd home, not $HOME):
   * code-server then runs with a home of the scenario's own (loginHome.ts).
   */
  sshConfig?: (host: GpuHost, tmp: string) => string;
}

export interface Scenario {
  host: GpuHost;
  cs: CodeServer;
  wb: Workbench;
  page: Page;
  knownHostsFile: string;
  tmp: string;
  stop(): Promise<void>;
}

export function kimiSettings(
  host: GpuHost,
  knownHostsFile: string,
  policy: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    'kimiService.servers': [serverEntry(host)],
    'kimiService.activeServer': 'sim',
    'kimiService.knownHostsFile': knownHostsFile,
    'kimiService.hostKeyPolicy': policy,
    'kimiService.pollIntervalSeconds': 0.5,
    'kimiService.confirmRestart': true,
    'kimiService.notifyWhenReady': true,
    ...extra,
  };
}

/** Copies the extension's log channel file and code-server's output into the results folder. */
export function saveLogs(cs: CodeServer, name: string): void {
  try {
    const dir = join(resultsDir(), `logs-${name}`);
    mkdirSync(dir, { recursive: true });
    for (const f of cs.findLogFiles(/Kimi Service\.log$|exthost\.log$|remoteagent\.log$/))
      copyFileSync(f, join(dir, basename(f)));
    copyFileSync(cs.logFile, join(dir, 'code-server.log'));
  } catch (e) {
    console.log(`    (could not save logs: ${e})`);
  }
}

export async function startScenario(opts: ScenarioOptions = {}): Promise<Scenario> {
  const vsix = packageExtension();
  const tmp = mkdtempSync(join(tmpdir(), 'kimi-e2e-'));
  const knownHostsFile = join(tmp, 'known_hosts');
  let host: GpuHost | undefined;
  let cs: CodeServer | undefined;
  let wb: Workbench | undefined;
  let unprepare: (() => Promise<void>) | undefined;
  let home: LoginHome | undefined;
  const stop = async () => {
    await wb?.close().catch(() => undefined);
    if (cs) saveLogs(cs, opts.name ?? 'scenario');
    await cs?.stop().catch(() => undefined);
    await unprepare?.().catch(() => undefined);
    await host?.stop().catch(() => undefined);
    // Throws while the real home is still mounted there: then nothing is deleted.
    home?.release();
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    host = await startGpuHost(opts.gpuHost ?? {});
    if (opts.unitText) await host.writeUnit(opts.unitText(host), { reload: true });
    if (opts.prepare) unprepare = await opts.prepare(host);
    writeFileSync(knownHostsFile, opts.knownHost === false ? '' : `${host.knownHostsLine()}\n`);
    let folder: string | undefined;
    if (opts.workspaceSettings) {
      folder = join(tmp, 'workspace');
      mkdirSync(join(folder, '.vscode'), { recursive: true });
      writeFileSync(join(folder, '.vscode', 'settings.json'), JSON.stringify(opts.workspaceSettings(host), null, 2));
    }
    if (opts.sshConfig) home = loginHome(join(tmp, 'login-home'), opts.sshConfig(host, tmp));
    cs = await startCodeServer({
      ...(home ? { wrap: home.wrap } : {}),
      folder,
      restrictedMode: opts.restrictedMode,
      locale: opts.locale,
      vsix: [vsix, ...(opts.extraVsix?.() ?? [])],
      settings: kimiSettings(
        host,
        knownHostsFile,
        opts.hostKeyPolicy ?? 'strict',
        typeof opts.settings === 'function' ? opts.settings(host) : opts.settings,
      ),
      // The extension host must not pick up this machine's ssh-agent or ~/.ssh/config
      // by accident: the scenario's settings name everything.
      // Each scenario's windows share their watches through a broker of their own (docs/broker.md),
      // not with another scenario's or this machine's own windows.
      env: { SSH_AUTH_SOCK: undefined, KIMI_SERVICE_BROKER_DIR: join(tmp, 'broker'), ...opts.env?.(host, tmp) },
    });
    wb = await openWorkbench(cs.url, { deviceScaleFactor: opts.deviceScaleFactor });
    return { host, cs, wb, page: wb.page, knownHostsFile, tmp, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Answers modal dialogs as they come until `done()` is true: `answers` maps a predicate on
 * the dialog to the button to press. Returns every dialog seen. An unexpected dialog fails.
 */
export async function answerDialogs(
  page: Page,
  answers: { when: (d: DialogInfo) => boolean; press: string; name: string }[],
  done: () => Promise<boolean>,
  opts: { timeoutMs?: number; shotPrefix?: string } = {},
): Promise<DialogInfo[]> {
  const seen: DialogInfo[] = [];
  const box = page.locator('.monaco-dialog-box');
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out; dialogs seen: ${JSON.stringify(seen)}`);
    if (await box.isVisible()) {
      const info = await box.evaluate((el) => ({
        message: (el.querySelector<HTMLElement>('.dialog-message-text')?.innerText ?? '').trim(),
        detail: (el.querySelector<HTMLElement>('.dialog-message-detail')?.innerText ?? '').trim(),
        buttons: Array.from(el.querySelectorAll<HTMLElement>('.dialog-buttons .monaco-button')).map((b) =>
          b.innerText.trim(),
        ),
      }));
      const a = answers.find((x) => x.when(info));
      if (!a) throw new Error(`unexpected dialog: ${JSON.stringify(info)}`);
      seen.push(info);
      if (opts.shotPrefix) await screenshot(page, `${opts.shotPrefix}-dialog-${a.name}`);
      await clickDialogButton(page, a.press);
    }
    await page.waitForTimeout(100);
  }
  return seen;
}

export const isRestartConfirm = (d: DialogInfo) => d.buttons.includes('Restart');

/**
 * Once the status bar shows a state: "Restart Kimi service" from the palette and its
 * confirmation accepted (the recorders cleared first unless `keepRecorders`).
 */
export async function restartFromPalette(page: Page, o: { keepRecorders?: boolean } = {}): Promise<void> {
  await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
  if (!o.keepRecorders) await resetRecorders(page);
  await runCommand(page, 'Restart Kimi service');
  const dlg = await waitForDialog(page);
  assert.ok(isRestartConfirm(dlg), `confirmation dialog: ${JSON.stringify(dlg)}`);
  await clickDialogButton(page, 'Restart');
}
export const isHostKeyDialog = (d: DialogInfo) =>
  /SHA256:/.test(`${d.message}\n${d.detail}`) && d.buttons.includes('Trust');

/** On failure: a screenshot and what the page recorded, to make the report self-explaining. */
export async function dumpOnFailure(s: Scenario | undefined, title: string): Promise<void> {
  if (!s) return;
  try {
    await screenshot(s.page, `FAILED-${title}`);
    console.log(`    status history:\n${formatStatusHistory(await statusHistory(s.page))}`);
    console.log(`    notifications: ${JSON.stringify(await notificationHistory(s.page), null, 1)}`);
    const logs = s.cs.findLogFiles(/Kimi Service\.log$/);
    for (const f of logs) console.log(`    ${f}:\n${spawnSync('tail', ['-n', '60', f], { encoding: 'utf8' }).stdout}`);
    console.log(`    journal (tail):\n${(await s.host.journal()).slice(-30).join('\n')}`);
  } catch (e) {
    console.log(`    (could not collect diagnostics: ${e})`);
  }
}

let printed = false;
/**
 * Prints the screenshots folder once at the end of the run. Each spec file registers it as a
 * root-level after() hook, so it runs whichever files are selected.
 */
export function printResultsDir(): void {
  if (printed) return;
  printed = true;
  console.log(`\n  e2e screenshots and logs: ${resultsDir()}\n`);
}

/**
 * Registers one scenario's mocha hooks in the current describe (start before, dump the state on a
 * failure, stop after) and returns a getter for it.
 */
export function useScenario(opts: ScenarioOptions): () => Scenario {
  let s: Scenario | undefined;
  before(async () => {
    s = await startScenario(opts);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await dumpOnFailure(s, this.currentTest.title.replace(/\W+/g, '-').slice(0, 40));
  });
  after(async () => {
    await s?.stop();
  });
  return () => {
    if (!s) throw new Error('the scenario did not start');
    return s;
  };
}
