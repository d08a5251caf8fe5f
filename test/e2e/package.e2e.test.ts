/**
 * What the packaged VSIX carries besides the bundles: files the extension finds at run time.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './codeServer';
import { packageExtension } from './scenario';

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
    ])
      assert.ok(entries.includes(f), `${f} in ${entries.join(', ')}`);
    const walkthrough = JSON.parse(
      fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'),
    ).contributes.walkthroughs[0].steps.map((s: { media: { markdown: string } }) => `extension/${s.media.markdown}`);
    for (const page of walkthrough) assert.ok(entries.includes(page), page);
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

  it("keeps the README's pictures: relative links to images the VSIX carries, and a repository for the docs", () => {
    const vsix = packageExtension();
    const entries = vsixEntries(vsix);
    const readme = spawnSync(
      'python3',
      ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension/readme.md").decode())', vsix],
      { encoding: 'utf8' },
    ).stdout;
    const source = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const pictures = (text: string) => [...text.matchAll(/!\[([^\]]*)\]\(([^)]+)\)/g)].map((m) => m[2]!);
    assert.ok(pictures(source).length >= 6, 'the repository README has its pictures');
    assert.deepEqual(pictures(readme), pictures(source), 'every picture is still in the packaged README');
    for (const picture of pictures(readme)) {
      assert.match(picture, /^docs\/images\/[\w-]+\.png$/, 'relative, so the installed extension shows it offline');
      assert.ok(entries.includes(`extension/${picture}`), `${picture} is packed`);
      const packed = spawnSync(
        'python3',
        [
          '-c',
          'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))',
          vsix,
          `extension/${picture}`,
        ],
        { encoding: 'buffer' },
      ).stdout;
      assert.ok(packed.equals(fs.readFileSync(path.join(REPO_ROOT, picture))), `${picture} is the repository's file`);
    }
    assert.doesNotMatch(readme, /Picture in the repository's README/);
    // Links to the docs point at the repository (the extension page cannot open a relative .md).
    const relativeLinks = [...readme.matchAll(/(?<!!)\[[^\]]*\]\(([^)]+)\)/g)]
      .map((m) => m[1]!)
      .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
    assert.deepEqual(relativeLinks, []);
    assert.match(readme, /\]\(https:\/\/github\.com\/kimi-tools\/kimi-service\/blob\/HEAD\/docs\/ssh\.md\)/);
    const manifest = spawnSync(
      'python3',
      ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension.vsixmanifest").decode())', vsix],
      { encoding: 'utf8' },
    ).stdout;
    assert.match(manifest, /Links\.Source" Value="https:\/\/github\.com\/kimi-tools\/kimi-service/);
  });
});
