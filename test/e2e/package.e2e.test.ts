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
});
