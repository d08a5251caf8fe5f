// A fixture extension of test/e2e/fixture/ packaged into a VSIX of its own, beside a folder where
// the fixture writes its reports (one file per command it ran), both in one temp folder.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './codeServer';

export class FixtureExtension {
  private dir = '';

  /** `folder`: the fixture's folder under test/e2e/fixture; `label`: how a failure names it. */
  constructor(
    private readonly folder: string,
    private readonly label: string,
  ) {}

  /** Where the fixture writes its reports (made on first use). */
  get reportDir(): string {
    return join(this.made(), 'reports');
  }

  /** Packages the fixture (vsce) and returns the VSIX's path. */
  packageVsix(): string {
    const vsix = join(this.made(), `${this.folder}.vsix`);
    const r = spawnSync(
      join(REPO_ROOT, 'node_modules', '.bin', 'vsce'),
      ['package', '--no-dependencies', '--skip-license', '--allow-missing-repository', '-o', vsix],
      { cwd: join(REPO_ROOT, 'test', 'e2e', 'fixture', this.folder), encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`vsce package of ${this.label} failed:\n${r.stdout}\n${r.stderr}`);
    return vsix;
  }

  remove(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = '';
  }

  private made(): string {
    if (!this.dir) {
      this.dir = mkdtempSync(join(tmpdir(), `kimi-${this.folder}-`));
      mkdirSync(join(this.dir, 'reports'), { recursive: true });
    }
    return this.dir;
  }
}
