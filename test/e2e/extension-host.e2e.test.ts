/**
 * The extension-host mocha suite (test/desktop/suite, also run by `npm run test:desktop` in VS
 * Code desktop) run inside code-server: the workbench's `payload` query carries
 * extensionDevelopmentPath and extensionTestsPath, as VS Code's own "run extension tests in the
 * browser" does. The extension under test is this repository's dist/ (built by `npm test`).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, startCodeServer, type CodeServer } from './codeServer';
import { openWorkbench, type Workbench } from './workbench';

describe('e2e: the extension-host suite inside code-server', function () {
  this.timeout(300_000);
  let server: CodeServer | undefined;
  let workbench: Workbench | undefined;
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-exthost-')), 'report.txt');

  after(async () => {
    await workbench?.close();
    await server?.stop();
    fs.rmSync(path.dirname(report), { recursive: true, force: true });
  });

  it('passes in the real extension host', async () => {
    for (const script of [['esbuild.mjs'], ['test/desktop/build.mjs']]) {
      const built = spawnSync(process.execPath, script, { cwd: REPO_ROOT, stdio: 'inherit' });
      assert.equal(built.status, 0, `node ${script.join(' ')} failed`);
    }
    server = await startCodeServer({ env: { KIMI_TEST_REPORT: report }, smokeTestDriver: true });
    const authority = new URL(server.url).host;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', `vscode-remote://${authority}${REPO_ROOT}`],
      ['extensionTestsPath', `vscode-remote://${authority}${path.join(REPO_ROOT, 'out', 'desktop', 'index.js')}`],
    ]);
    const url = `${server.url.replace(/\/?$/, '/')}?folder=${encodeURIComponent(server.folder)}&payload=${encodeURIComponent(payload)}`;
    workbench = await openWorkbench(url);
    const deadline = Date.now() + 240_000;
    while (!fs.existsSync(report) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    assert.ok(fs.existsSync(report), 'the suite wrote its report (did the extension host run the tests?)');
    const text = fs.readFileSync(report, 'utf8');
    process.stdout.write(text.replace(/^/gm, '      '));
    const summary = /(\d+) passed, (\d+) failed/.exec(text);
    assert.ok(summary, text);
    assert.equal(Number(summary[2]), 0, text);
    assert.ok(Number(summary[1]) >= 3, text);
  });
});
