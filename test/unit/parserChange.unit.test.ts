import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { enableParsers, rollback, type ParserChangeDeps } from '../../src/server/parserChange';
import { parseSystemctlCat } from '../../src/server/execStart';

// A throwaway "host": real /bin/sh runs the generated commands; systemctl and sudo are small stand-ins
// on PATH, and the unit directory is a temp dir. This checks the quoting end to end.
const FAKE_SYSTEMCTL = `#!/bin/sh
root="$KIMI_TEST_ROOT"
cmd=$1; shift
for a in "$@"; do unit=$a; done
case $cmd in
cat)
  f="$root/$unit"
  [ -e "$f" ] || { echo "No files found for $unit." >&2; exit 1; }
  echo "# $f"; cat "$f"
  for d in "$root/$unit.d"/*.conf; do [ -e "$d" ] || continue; echo; echo "# $d"; cat "$d"; done ;;
show)
  echo "FragmentPath=$root/$unit"
  echo "DropInPaths=$(ls "$root/$unit.d"/*.conf 2>/dev/null | tr '\\n' ' ')"
  echo "ExecStart=" ;;
daemon-reload) echo reload >> "$root/reloads" ;;
*) echo "unknown $cmd" >&2; exit 2 ;;
esac
`;
const FAKE_SUDO = `#!/bin/sh
[ "$1" = "-n" ] && shift
echo sudo >> "$KIMI_TEST_ROOT/sudos"
exec "$@"
`;

const UNIT = 'sglang-k26-ddtree.service';
const VENDOR = `[Unit]
Description=SGLang
[Service]
ExecStart=/usr/bin/python3 -m sglang.launch_server \\
    --model-path "/root/models/Kimi K2.6 it's" --tp 8
`;

interface Host {
  root: string;
  deps: ParserChangeDeps;
  commands: string[];
  diffs: string[];
  reloads(): number;
  read(rel: string): string | null;
}

const roots: string[] = [];
after(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function makeHost(options: { sudo?: boolean; confirm?: boolean } = {}): Host {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-unit-'));
  roots.push(root);
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'systemctl'), FAKE_SYSTEMCTL, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'sudo'), FAKE_SUDO, { mode: 0o755 });
  fs.writeFileSync(path.join(root, UNIT), VENDOR);
  const commands: string[] = [];
  const diffs: string[] = [];
  const deps: ParserChangeDeps = {
    sudo: options.sudo ?? false,
    unitDir: root,
    now: () => new Date(Date.UTC(2025, 0, 2, 3, 4, 5)),
    log: () => undefined,
    confirmDiff: async (diff) => {
      diffs.push(diff);
      return options.confirm ?? true;
    },
    exec: (command) => {
      commands.push(command);
      return new Promise((resolve) => {
        execFile('/bin/sh', ['-c', command], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, KIMI_TEST_ROOT: root } }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ stdout, stderr, code });
        });
      });
    },
  };
  const read = (rel: string): string | null => {
    const p = path.join(root, rel);
    return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null;
  };
  return { root, deps, commands, diffs, reloads: () => (read('reloads') ?? '').split('\n').filter(Boolean).length, read };
}

const DROP_IN = `${UNIT}.d/50-kimi-parsers.conf`;
const choice = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };

describe('parserChange: enableParsers / rollback', () => {
  it('writes the drop-in, reloads, and rolls back to absence', async () => {
    const h = makeHost();
    const r = await enableParsers(h.deps, 'sglang-k26-ddtree', choice);
    assert.equal(r.kind, 'changed');
    if (r.kind !== 'changed') return;
    assert.equal(h.diffs.length, 1);
    assert.match(h.diffs[0], /^\+ --tool-call-parser kimi_k2$/m);
    const written = h.read(DROP_IN);
    assert.ok(written);
    const argv = parseSystemctlCat(`${VENDOR}\n${written}`).commands[0].argv;
    assert.deepEqual(argv, [
      '/usr/bin/python3', '-m', 'sglang.launch_server', '--model-path', "/root/models/Kimi K2.6 it's", '--tp', '8',
      '--tool-call-parser', 'kimi_k2', '--reasoning-parser', 'kimi_k2',
    ]);
    assert.deepEqual(r.rollback, { unit: UNIT, dropInPath: path.join(h.root, DROP_IN), previousContent: null, createdDir: true });
    assert.equal(h.reloads(), 1);

    await rollback(h.deps, r.rollback);
    assert.equal(h.read(DROP_IN), null);
    assert.equal(fs.existsSync(path.join(h.root, `${UNIT}.d`)), false);
    assert.equal(h.reloads(), 2);
  });

  it('already set: nothing written, nothing reloaded, no diff shown', async () => {
    const h = makeHost();
    fs.mkdirSync(path.join(h.root, `${UNIT}.d`));
    fs.writeFileSync(path.join(h.root, `${UNIT}.d/10-flags.conf`), '[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --reasoning-parser=kimi_k2 --tool-call-parser kimi_k2\n');
    const r = await enableParsers(h.deps, UNIT, choice);
    assert.equal(r.kind, 'already-set');
    assert.equal(h.diffs.length, 0);
    assert.equal(h.read(DROP_IN), null);
    assert.equal(h.reloads(), 0);
  });

  it('replaces an earlier drop-in of ours, keeps a backup, rollback restores it exactly (sudo)', async () => {
    const h = makeHost({ sudo: true });
    const old = '# mine\n[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --reasoning-parser kimi\n';
    fs.mkdirSync(path.join(h.root, `${UNIT}.d`));
    fs.writeFileSync(path.join(h.root, DROP_IN), old);
    const r = await enableParsers(h.deps, UNIT, choice);
    assert.equal(r.kind, 'changed');
    if (r.kind !== 'changed') return;
    assert.match(r.diff, /^- --reasoning-parser kimi$/m);
    assert.equal(r.rollback.previousContent, old);
    assert.equal(r.rollback.backupPath, path.join(h.root, `${DROP_IN}.bak-20250102-030405`));
    assert.equal(h.read(`${DROP_IN}.bak-20250102-030405`), old);
    assert.ok(h.commands.filter((c) => /daemon-reload|writing|printf/.test(c)).every((c) => c.startsWith('sudo -n ')));
    assert.ok((h.read('sudos') ?? '').length > 0);

    await rollback(h.deps, r.rollback);
    assert.equal(h.read(DROP_IN), old);
    assert.ok(fs.existsSync(path.join(h.root, `${UNIT}.d`)));
  });

  it('declined diff: nothing written', async () => {
    const h = makeHost({ confirm: false });
    assert.deepEqual(await enableParsers(h.deps, UNIT, choice), { kind: 'cancelled' });
    assert.equal(h.read(DROP_IN), null);
    assert.equal(h.reloads(), 0);
  });

  it('refuses when a later drop-in sets ExecStart (ours would not win)', async () => {
    const h = makeHost();
    fs.mkdirSync(path.join(h.root, `${UNIT}.d`));
    fs.writeFileSync(path.join(h.root, `${UNIT}.d/override.conf`), '[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --tp 4\n');
    await assert.rejects(enableParsers(h.deps, UNIT, choice), /override\.conf.*after 50-kimi-parsers\.conf/);
    assert.equal(h.read(DROP_IN), null);
  });

  it('rejects invalid parser and unit names before touching the host', async () => {
    const h = makeHost();
    await assert.rejects(enableParsers(h.deps, UNIT, { toolCallParser: "kimi_k2'; reboot", reasoningParser: 'kimi_k2' }), /not a parser name/);
    await assert.rejects(enableParsers(h.deps, '../x', choice), /Invalid systemd unit name/);
    assert.equal(h.commands.length, 0);
  });

  it('reports a unit systemd does not know', async () => {
    const h = makeHost();
    await assert.rejects(enableParsers(h.deps, 'nope', choice), /systemctl cat failed \(exit 1\): No files found/);
  });
});
