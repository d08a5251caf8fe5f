/**
 * The CLI's own words follow the POSIX locale, as a user runs the built `node dist/cli.js`:
 * `--help` and a usage error in Simplified Chinese under LANG=zh_CN.UTF-8, in English under
 * LANG=C; the command names, flags, settings and exit codes stay as they are typed either way.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');
const HAN = /[\u4e00-\u9fff]/;

/** Display columns: a Han character or fullwidth mark takes two. */
const columns = (line: string) => [...line].reduce((n, ch) => n + (/[\u3000-\u9fff\uff00-\uff60]/.test(ch) ? 2 : 1), 0);

function cli(locale: Record<string, string>, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['LANG', 'LC_ALL', 'LC_MESSAGES']) delete env[name];
  const run = spawnSync(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: { ...env, ...locale },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('CLI (node dist/cli.js): its words follow LANG', function () {
  this.timeout(120_000);

  before(() => {
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
  });

  it('LANG=zh_CN.UTF-8 --help: Chinese, with the commands, flags and settings as typed', () => {
    const run = cli({ LANG: 'zh_CN.UTF-8' }, '--help');
    assert.equal(run.code, 0, run.stderr);
    const text = run.stdout;
    assert.match(text, /^用法：kimi-service <command> \[options\]$/m);
    assert.match(text, /^命令：$/m);
    assert.match(text, /^选项：$/m);
    assert.match(text, /^ {2}wait \[--timeout S\] +等到就绪/m);
    assert.match(text, /^ {2}--json +在 stdout 上输出 JSON 行/m);
    assert.match(text, /kimiService\.activeServer/);
    assert.match(text, /^退出码：0 完成/m);
    assert.doesNotMatch(text, /Usage:|Commands:|Exit codes:|the server's state now/);
    for (const line of text.split('\n')) assert.ok(columns(line) <= 100, `wider than 100 columns: ${line}`);
    assert.doesNotMatch(text, /^[，。；：、）]/m, 'a line starts with a closing mark');
  });

  it('LANG=C --help: English, no Chinese; LC_ALL=C wins over LANG', () => {
    const locales: Record<string, string>[] = [{ LANG: 'C' }, { LANG: 'zh_CN.UTF-8', LC_ALL: 'C' }];
    for (const locale of locales) {
      const run = cli(locale, '--help');
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^Usage: kimi-service <command> \[options\]$/m);
      assert.match(run.stdout, /^ {2}status +the server's state now \(one line\), exit 0$/m);
      assert.match(run.stdout, /^Exit codes: 0 done/m);
      assert.doesNotMatch(run.stdout, HAN, JSON.stringify(locale));
    }
  });

  it('a usage error in the locale, exit 5 (nothing run)', () => {
    const zh = cli({ LANG: 'zh_CN.UTF-8' }, 'wait', '--timeout', 'soon');
    assert.equal(zh.code, 5);
    assert.match(zh.stderr, /^kimi-service: --timeout "soon" 不是秒数$/m);
    assert.match(zh.stderr, /kimi-service --help/);
    const en = cli({ LANG: 'C' }, 'wait', '--timeout', 'soon');
    assert.equal(en.code, 5);
    assert.match(en.stderr, /^kimi-service: --timeout "soon" is not a number of seconds$/m);
    assert.doesNotMatch(en.stderr, HAN);
  });
});
