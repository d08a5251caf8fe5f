import * as assert from 'node:assert/strict';
import { shellLine } from '../../src/transport/shell';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { enableParsers, rollback, type ParserChangeDeps } from '../../src/target/systemd/parserDropIn';
import { parseSystemctlCat } from '../../src/target/systemd/execStartSyntax';
import { forFront } from '../../src/present/hints';

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
  /** Every command, with the stdin it was given (if any). */
  stdins: Array<string | undefined>;
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
  const stdins: Array<string | undefined> = [];
  const diffs: string[] = [];
  const deps: ParserChangeDeps = {
    sudo: options.sudo ?? false,
    unitDir: root,
    log: () => undefined,
    confirmDiff: async (diff) => {
      diffs.push(diff);
      return options.confirm ?? true;
    },
    exec: (request, execOptions) => {
      const command = shellLine(request);
      commands.push(command);
      stdins.push(execOptions?.stdin);
      return new Promise((resolve) => {
        const child = execFile(
          '/bin/sh',
          ['-c', command],
          { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, KIMI_TEST_ROOT: root } },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
            resolve({ stdout, stderr, code });
          },
        );
        // Like Transport.exec: the stdin text, then end of file; without it, nothing is written.
        if (execOptions?.stdin !== undefined) child.stdin!.end(execOptions.stdin);
        else child.stdin!.end();
      });
    },
  };
  const read = (rel: string): string | null => {
    const p = path.join(root, rel);
    return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null;
  };
  return {
    root,
    stdins,
    deps,
    commands,
    diffs,
    reloads: () => (read('reloads') ?? '').split('\n').filter(Boolean).length,
    read,
  };
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
      '/usr/bin/python3',
      '-m',
      'sglang.launch_server',
      '--model-path',
      "/root/models/Kimi K2.6 it's",
      '--tp',
      '8',
      '--tool-call-parser',
      'kimi_k2',
      '--reasoning-parser',
      'kimi_k2',
    ]);
    assert.deepEqual(r.rollback, {
      unit: UNIT,
      dropInPath: path.join(h.root, DROP_IN),
      previousContent: null,
      createdDir: true,
    });
    assert.equal(h.reloads(), 1);

    // The content went on tee's stdin, not on a command line.
    const write = h.commands.findIndex((c) => c.startsWith('tee -- '));
    assert.equal(h.commands[write], `tee -- ${path.join(h.root, DROP_IN)} >/dev/null`);
    assert.equal(h.stdins[write], written);
    assert.ok(!h.commands.some((c) => c.includes('--tool-call-parser')), 'the drop-in text is on no command line');

    await rollback(h.deps, r.rollback);
    assert.equal(h.read(DROP_IN), null);
    assert.ok(h.commands.includes(`rm -f -- ${path.join(h.root, DROP_IN)}`));
    // The folder it created stays, empty (removing it would need one more sudo rule; systemd ignores it).
    assert.deepEqual(fs.readdirSync(path.join(h.root, `${UNIT}.d`)), []);
    assert.equal(h.reloads(), 2);
  });

  it('already set: nothing written, nothing reloaded, no diff shown', async () => {
    const h = makeHost();
    fs.mkdirSync(path.join(h.root, `${UNIT}.d`));
    fs.writeFileSync(
      path.join(h.root, `${UNIT}.d/10-flags.conf`),
      '[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --reasoning-parser=kimi_k2 --tool-call-parser kimi_k2\n',
    );
    const r = await enableParsers(h.deps, UNIT, choice);
    assert.equal(r.kind, 'already-set');
    assert.equal(h.diffs.length, 0);
    assert.equal(h.read(DROP_IN), null);
    assert.equal(h.reloads(), 0);
  });

  it('replaces an earlier drop-in of ours, keeps a backup, rollback restores it exactly (sudo)', async () => {
    const h = makeHost({ sudo: true });
    const old =
      '# mine\n[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --reasoning-parser kimi\n';
    fs.mkdirSync(path.join(h.root, `${UNIT}.d`));
    fs.writeFileSync(path.join(h.root, DROP_IN), old);
    const r = await enableParsers(h.deps, UNIT, choice);
    assert.equal(r.kind, 'changed');
    if (r.kind !== 'changed') return;
    assert.match(r.diff, /^- --reasoning-parser kimi$/m);
    assert.equal(r.rollback.previousContent, old);
    assert.equal(r.rollback.backupPath, path.join(h.root, `${DROP_IN}.bak`));
    assert.equal(h.read(`${DROP_IN}.bak`), old);
    // Every write is one exact command under sudo: no sh -c, nothing but the fixed path as argument.
    const dropIn = path.join(h.root, DROP_IN);
    const privileged = h.commands.filter((c) => c.startsWith('sudo '));
    assert.deepEqual(privileged, [
      `sudo -n tee -- ${dropIn}.bak >/dev/null`,
      `sudo -n tee -- ${dropIn} >/dev/null`,
      'sudo -n systemctl daemon-reload',
    ]);
    assert.ok(!h.commands.some((c) => /sudo -n sh\b/.test(c)));
    assert.equal((h.read('sudos') ?? '').split('\n').filter(Boolean).length, 3);

    await rollback(h.deps, r.rollback);
    assert.equal(h.read(DROP_IN), old);
    assert.ok(fs.existsSync(path.join(h.root, `${UNIT}.d`)));
    assert.deepEqual(h.commands.filter((c) => c.startsWith('sudo ')).slice(3), [
      `sudo -n tee -- ${dropIn} >/dev/null`,
      'sudo -n systemctl daemon-reload',
    ]);
  });

  it('sudo refuses: the message names the refused command and the sudoers rule command; nothing written', async () => {
    const h = makeHost({ sudo: true });
    fs.writeFileSync(path.join(h.root, 'bin', 'sudo'), '#!/bin/sh\necho "sudo: a password is required" >&2\nexit 1\n', {
      mode: 0o755,
    });
    await assert.rejects(enableParsers(h.deps, UNIT, choice), (e: Error) => {
      assert.match(
        e.message,
        /^creating the drop-in folder failed: sudo asks for a password on this machine: allow "mkdir -p -- \S+" without a password\. Refused: sudo -n mkdir -p -- /,
      );
      assert.match(forFront(e.message, 'vscode'), /"Kimi Service: Copy sudoers rule"/);
      assert.match(e.message, /sudo visudo -f \/etc\/sudoers\.d\/kimi-sglang-k26-ddtree/);
      return true;
    });
    assert.equal(h.read(DROP_IN), null);
    assert.equal(h.reloads(), 0);
  });

  it('a failing write (not a refusal) puts the previous drop-in back', async () => {
    const h = makeHost({ sudo: true });
    const old = '[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m\n';
    fs.mkdirSync(path.join(h.root, `${UNIT}.d`));
    fs.writeFileSync(path.join(h.root, DROP_IN), old);
    // tee that truncates its file, then fails, on the first write of the drop-in only
    fs.writeFileSync(
      path.join(h.root, 'bin', 'tee'),
      `#!/bin/sh
f=$2
if [ "\${f%.bak}" = "$f" ] && [ ! -e "$KIMI_TEST_ROOT/tee-failed" ]; then : > "$f"; touch "$KIMI_TEST_ROOT/tee-failed"; echo "tee: $f: No space left on device" >&2; exit 1; fi
exec /usr/bin/tee "$@"
`,
      { mode: 0o755 },
    );
    await assert.rejects(
      enableParsers(h.deps, UNIT, choice),
      /writing the drop-in failed \(exit 1\): sudo -n tee -- .*No space left on device/,
    );
    assert.equal(h.read(DROP_IN), old);
    assert.equal(h.reloads(), 0);
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
    fs.writeFileSync(
      path.join(h.root, `${UNIT}.d/override.conf`),
      '[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --tp 4\n',
    );
    await assert.rejects(enableParsers(h.deps, UNIT, choice), /override\.conf.*after 50-kimi-parsers\.conf/);
    assert.equal(h.read(DROP_IN), null);
  });

  it('rejects invalid parser and unit names before touching the host', async () => {
    const h = makeHost();
    await assert.rejects(
      enableParsers(h.deps, UNIT, { toolCallParser: "kimi_k2'; reboot", reasoningParser: 'kimi_k2' }),
      /not a parser name/,
    );
    await assert.rejects(enableParsers(h.deps, '../x', choice), /Invalid systemd unit name/);
    assert.equal(h.commands.length, 0);
  });

  it('reports a unit systemd does not know', async () => {
    const h = makeHost();
    await assert.rejects(enableParsers(h.deps, 'nope', choice), /systemctl cat failed \(exit 1\): No files found/);
  });
});
