/**
 * `npm run test:desktop`: the extension-host suite in VS Code desktop (@vscode/test-electron).
 * Uses VSCODE_EXECUTABLE when set (a VS Code already installed); otherwise test-electron
 * downloads VS Code, which needs the internet (not available on the CI machines here, where
 * the e2e suite in code-server covers the extension in a real workbench instead).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  const build = spawnSync(process.execPath, [path.join(root, 'test', 'desktop', 'build.mjs')], {
    stdio: 'inherit',
    cwd: root,
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-desktop-'));
  try {
    await runTests({
      ...(process.env.VSCODE_EXECUTABLE ? { vscodeExecutablePath: process.env.VSCODE_EXECUTABLE } : {}),
      extensionDevelopmentPath: root,
      extensionTestsPath: path.join(root, 'out', 'desktop', 'index.js'),
      launchArgs: [
        '--disable-extensions',
        '--disable-workspace-trust',
        `--user-data-dir=${userData}`,
        fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-ws-')),
      ],
    });
  } catch (error) {
    console.error(`Desktop tests failed: ${error instanceof Error ? error.message : String(error)}`);
    if (!process.env.VSCODE_EXECUTABLE)
      console.error('No VSCODE_EXECUTABLE was given and VS Code could not be downloaded or run here.');
    process.exitCode = 1;
  } finally {
    fs.rmSync(userData, { recursive: true, force: true });
  }
}

void main();
