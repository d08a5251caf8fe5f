import * as fs from 'node:fs';
import Mocha from 'mocha';
import { registerExtensionTests } from './extension.desktop.test';
import { registerLmToolTests } from './lmTools.desktop.test';

/**
 * Entry point VS Code's test runner calls inside the extension host (desktop, or code-server
 * through the workbench's `payload` query). When KIMI_TEST_REPORT names a file, the results are
 * written there too: in code-server the extension host's console is not visible to the caller.
 */
export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, color: false });
  registerExtensionTests(mocha.suite);
  registerLmToolTests(mocha.suite);
  const reportFile = process.env.KIMI_TEST_REPORT;
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      lines.push(`${runner.stats?.passes ?? 0} passed, ${failures} failed`);
      if (reportFile) fs.writeFileSync(reportFile, `${lines.join('\n')}\n`);
      if (failures > 0) reject(new Error(`${failures} extension-host test(s) failed`));
      else resolve();
    });
    runner.on('pass', (test) => lines.push(`  ✔ ${test.fullTitle()}`));
    runner.on('fail', (test, error) =>
      lines.push(`  ✘ ${test.fullTitle()}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
    );
  });
}
