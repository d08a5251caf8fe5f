/**
 * What the packaged VSIX carries besides the bundles: files the extension finds at run time.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, startCodeServer, type CodeServer } from './codeServer';
import { PACKAGE_LIMIT_MS, packageExtension } from './scenario';
import { openWorkbench, runCommand, screenshot, type Workbench } from './workbench';
import { localizedManifest } from '../util/manifest';

const REPOSITORY = 'https://github.com/kimi-tools/kimi-service';

function vsixEntries(vsix: string): string[] {
  const listed = spawnSync(
    'python3',
    ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', vsix],
    { encoding: 'utf8' },
  );
  assert.equal(listed.status, 0, listed.stderr);
  return listed.stdout.trim().split('\n');
}

describe('e2e: the packaged VSIX', function () {
  this.timeout(300_000);

  it('carries pagent.exe where the bundled ssh2 looks for it (Pageant on Windows), and no source or test file', () => {
    const entries = vsixEntries(packageExtension());
    assert.ok(entries.includes('extension/util/pagent.exe'), entries.join('\n'));
    // ssh2 resolves it from the bundle's folder: <extension>/dist/../util/pagent.exe.
    for (const bundle of ['extension.js', 'cli.js', 'mcp.js']) {
      assert.match(fs.readFileSync(path.join(REPO_ROOT, 'dist', bundle), 'utf8'), /util\/pagent\.exe/, bundle);
    }
    assert.deepEqual(
      entries.filter((e) => /^extension\/(src|test|node_modules)\//.test(e)),
      [],
    );
  });

  it('is ready to publish: icon, licence and changelog in the manifest, the walkthrough pages, no placeholder URL', () => {
    const vsix = packageExtension();
    const entries = vsixEntries(vsix);
    for (const f of [
      'extension/media/icon.png',
      'extension/LICENSE.txt',
      'extension/changelog.md',
      'extension/readme.md',
      // the words of package.json, in English and translated (VS Code picks one by display language)
      'extension/package.nls.json',
      'extension/package.nls.zh-cn.json',
      // the words shown at run time (vscode.l10n.bundle; the CLI's and the MCP server's from dist/../l10n)
      'extension/l10n/bundle.l10n.json',
      'extension/l10n/bundle.l10n.zh-cn.json',
    ])
      assert.ok(entries.includes(f), `${f} in ${entries.join(', ')}`);
    // Each display language's walkthrough pages (package.nls.LOCALE.json names them).
    for (const locale of [undefined, 'zh-cn']) {
      const steps = localizedManifest<{
        contributes: { walkthroughs: { steps: { media: { markdown: string } }[] }[] };
      }>(locale).contributes.walkthroughs[0]!.steps;
      for (const { media } of steps) assert.ok(entries.includes(`extension/${media.markdown}`), media.markdown);
    }
    const manifest = spawnSync(
      'python3',
      ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension.vsixmanifest").decode())', vsix],
      { encoding: 'utf8' },
    ).stdout;
    assert.match(manifest, /<Icon>extension\/media\/icon\.png<\/Icon>/);
    assert.match(manifest, /<License>extension\/LICENSE\.txt<\/License>/);
    assert.match(manifest, /Microsoft\.VisualStudio\.Services\.Content\.Changelog/);
    assert.doesNotMatch(manifest, /example\.invalid/);
  });

  it("keeps the README's pictures, as links into the repository that the extension's page can load", () => {
    const vsix = packageExtension();
    const readme = spawnSync(
      'python3',
      ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension/readme.md").decode())', vsix],
      { encoding: 'utf8' },
    ).stdout;
    const source = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const pictures = (text: string) => [...text.matchAll(/!\[([^\]]*)\]\(([^)]+)\)/g)].map((m) => m[2]!);
    assert.ok(pictures(source).length >= 6, 'the repository README has its pictures');
    assert.deepEqual(
      pictures(readme),
      pictures(source).map((p) => `${REPOSITORY}/raw/HEAD/${p}`),
      'every picture is still in the packaged README, at its place in the repository',
    );
    for (const picture of pictures(source))
      assert.ok(fs.existsSync(path.join(REPO_ROOT, picture)), `${picture} exists`);
    assert.doesNotMatch(readme, /Picture in the repository's README/);
    // Links to the docs point at the repository too (the extension page cannot open a relative .md).
    const relativeLinks = [...readme.matchAll(/\]\(([^)]+)\)/g)]
      .map((m) => m[1]!)
      .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
    assert.deepEqual(relativeLinks, []);
    assert.ok(readme.includes(`](${REPOSITORY}/blob/HEAD/docs/ssh.md)`), 'docs/ssh.md is linked in the repository');
    const manifest = spawnSync(
      'python3',
      ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension.vsixmanifest").decode())', vsix],
      { encoding: 'utf8' },
    ).stdout;
    assert.ok(manifest.includes(`Links.Source" Value="${REPOSITORY}`), 'the repository in the manifest');
  });
});

/**
 * What a fresh clone has: the tracked files as they are on disk (changes not yet committed
 * included), and nothing else. Copied by `tar` from git's own list: nothing is committed or
 * stashed, so it needs no git identity (CI has none).
 */
function cleanTree(into: string): void {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, `git ls-files: ${listed.stderr}`);
  // A tracked file deleted in the working copy is not in a clone of it either.
  const files = listed.stdout.split('\0').filter((f) => f !== '' && fs.existsSync(path.join(REPO_ROOT, f)));
  const copy = spawnSync('sh', ['-c', 'tar -C "$1" --null -T - -cf - | tar -C "$2" -xf -', 'copy', REPO_ROOT, into], {
    input: files.join('\0'),
    encoding: 'utf8',
  });
  assert.equal(copy.status, 0, copy.stderr);
}

describe('e2e: npm run package on a fresh clone', function () {
  this.timeout(900_000);
  let dir: string | undefined;
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sets itself up (npm ci) and makes the same VSIX as the working copy', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-clone-'));
    cleanTree(dir);
    assert.ok(fs.existsSync(path.join(dir, 'package.json')));
    assert.ok(!fs.existsSync(path.join(dir, 'node_modules')), 'no node_modules in the clone');
    assert.ok(!fs.existsSync(path.join(dir, 'dist')), 'no dist in the clone');
    const t0 = Date.now();
    // The npm cache is used when it has the packages (CI has the registry for the others).
    const r = spawnSync('npm', ['run', 'package'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, npm_config_prefer_offline: 'true' },
      timeout: PACKAGE_LIMIT_MS,
      killSignal: 'SIGKILL',
    });
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    assert.ok(
      !r.error,
      `npm run package did not end: ${r.error?.message} after ${seconds} s:\n${r.stdout}\n${r.stderr}`,
    );
    assert.equal(r.status, 0, `npm run package failed in ${seconds} s:\n${r.stdout}\n${r.stderr}`);
    console.log(`    [e2e] npm run package on a fresh clone: ${seconds} s`);
    assert.match(r.stderr, /\[setup\] npm ci \(node_modules is missing\)/, 'the set-up ran npm ci');
    const vsix = path.join(dir, 'dist', 'kimi-service.vsix');
    assert.ok(fs.existsSync(vsix), vsix);
    assert.deepEqual(vsixEntries(vsix).sort(), vsixEntries(packageExtension()).sort());
  });
});

// What a user sees: the installed extension's page in the workbench, with the README's pictures.
const READ_PICTURES = `Array.from(document.images).map((i) => ({
  alt: i.alt, src: i.getAttribute('src') || '', width: i.complete ? i.naturalWidth : 0 }))`;

describe("e2e: the installed extension's page", function () {
  this.timeout(300_000);
  let cs: CodeServer | undefined;
  let wb: Workbench | undefined;
  after(async () => {
    await wb?.close().catch(() => undefined);
    await cs?.stop().catch(() => undefined);
  });

  it('shows every picture of the README: its address in the repository answers with the picture, and it loads', async () => {
    cs = await startCodeServer({ vsix: [packageExtension()] });
    wb = await openWorkbench(cs.url);
    const page = wb.page;
    // The page loads pictures only from https addresses (its sanitizer drops relative and data:
    // ones, its policy allows no other origin), so the packaged README points into the
    // repository. This machine has no internet: the repository's address is answered here with
    // the file at that path of this checkout, which is what the repository serves once pushed.
    const served: string[] = [];
    const prefix = `${REPOSITORY}/raw/HEAD/`;
    await wb.context.route(
      (url) => url.href.startsWith(prefix),
      async (route) => {
        const file = path.join(REPO_ROOT, decodeURIComponent(route.request().url().slice(prefix.length)));
        served.push(route.request().url());
        if (fs.existsSync(file)) await route.fulfill({ path: file, contentType: 'image/png' });
        else await route.fulfill({ status: 404, body: 'not in the repository' });
      },
    );
    await runCommand(page, 'Extensions: Show Installed Extensions');
    await page.locator('.extensions-viewlet .monaco-list-row').filter({ hasText: 'Kimi Service' }).first().click();
    const source = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const expected = [...source.matchAll(/!\[([^\]]*)\]\((docs\/images\/[^)]+)\)/g)].map((m) => ({
      alt: m[1]!,
      src: `${prefix}${m[2]!}`,
    }));
    assert.ok(expected.length >= 6, 'the README has its pictures');
    let pictures: { alt: string; src: string; width: number }[] = [];
    const shown = (e: { alt: string; src: string }) =>
      pictures.some((p) => p.alt === e.alt && p.src === e.src && p.width > 0);
    const deadline = Date.now() + 120_000;
    while (!expected.every(shown)) {
      if (Date.now() > deadline)
        throw new Error(
          `pictures on the extension page: ${JSON.stringify(pictures, null, 1)}; requests answered: ${JSON.stringify(served)}`,
        );
      pictures = [];
      for (const frame of page.frames())
        if (frame !== page.mainFrame())
          pictures.push(...((await frame.evaluate(READ_PICTURES).catch(() => [])) as typeof pictures));
      await page.waitForTimeout(200);
    }
    console.log(
      `    pictures loaded: ${expected.map((e) => `${path.basename(e.src)} ${pictures.find((p) => p.src === e.src)!.width}px`).join(', ')}`,
    );
    await screenshot(page, 'extension-page');
  });
});
