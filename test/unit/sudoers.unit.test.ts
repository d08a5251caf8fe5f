import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { privilegedCommand } from '../../src/transport/shell';
import { forFront } from '../../src/present/hints';
import {
  dropInLocation,
  privilegedArgv,
  sudoersFileName,
  sudoersInstallCommand,
  sudoersRules,
  sudoRefusalMessage,
} from '../../src/target/systemd/sudoers';

const DEFAULT_RULES = `# Kimi Service (VS Code): what kimi may run as root for sglang-k26-ddtree.service, and nothing else.
# Install: sudo visudo -f /etc/sudoers.d/kimi-sglang-k26-ddtree
# Restart the unit (the job is queued; the extension then watches the load):
Cmnd_Alias KIMI_SGLANG_K26_DDTREE_RESTART = /usr/bin/systemctl restart --no-block -- sglang-k26-ddtree.service
# Reload unit files after the parser drop-in changed:
Cmnd_Alias KIMI_SGLANG_K26_DDTREE_RELOAD = /usr/bin/systemctl daemon-reload
# "Enable parsers" and its roll-back: the drop-in folder, the drop-in and its backup (contents on stdin), removing the drop-in:
Cmnd_Alias KIMI_SGLANG_K26_DDTREE_DROPIN = /usr/bin/mkdir -p -- /etc/systemd/system/sglang-k26-ddtree.service.d, \\
    /usr/bin/tee -- /etc/systemd/system/sglang-k26-ddtree.service.d/50-kimi-parsers.conf, \\
    /usr/bin/tee -- /etc/systemd/system/sglang-k26-ddtree.service.d/50-kimi-parsers.conf.bak, \\
    /usr/bin/rm -f -- /etc/systemd/system/sglang-k26-ddtree.service.d/50-kimi-parsers.conf
kimi ALL=(root) NOPASSWD: KIMI_SGLANG_K26_DDTREE_RESTART, KIMI_SGLANG_K26_DDTREE_RELOAD, KIMI_SGLANG_K26_DDTREE_DROPIN
`;

/** The commands of a rules text, each as the words sudo compares (program path + arguments). */
function allowedCommands(rules: string): string[] {
  const joined = rules.replace(/\\\n\s*/g, ' ');
  const out: string[] = [];
  for (const line of joined.split('\n')) {
    const m = /^Cmnd_Alias \S+ = (.*)$/.exec(line);
    if (m) out.push(...m[1].split(/,\s*/));
  }
  return out;
}

describe('sudoers rules generated from the unit name', () => {
  it('the default unit: exactly these lines', () => {
    assert.equal(sudoersRules('kimi', 'sglang-k26-ddtree'), DEFAULT_RULES);
    assert.equal(sudoersRules('kimi', 'sglang-k26-ddtree.service'), DEFAULT_RULES);
  });

  it('allow exactly the commands the extension runs with sudo, and nothing else', () => {
    const unit = 'sglang-k26-ddtree.service';
    const where = dropInLocation(unit);
    const run = [
      privilegedArgv.restart(unit),
      privilegedArgv.daemonReload(),
      privilegedArgv.mkdir(where.dir),
      privilegedArgv.tee(where.file),
      privilegedArgv.tee(where.backup),
      privilegedArgv.rm(where.file),
    ];
    // What sudo receives (`sudo -n PROGRAM ARGS`), the program resolved by secure_path to /usr/bin.
    const asSudoSeesIt = run.map((argv) => {
      const words = privilegedCommand(argv, true).split(' ').slice(2);
      return [`/usr/bin/${words[0]}`, ...words.slice(1)].join(' ');
    });
    assert.deepEqual(allowedCommands(DEFAULT_RULES).sort(), asSudoSeesIt.sort());
    // no wildcard, no shell, no editor: every argument is fixed
    assert.ok(!/[*?[\]]|\bsh\b|ALL\s*$/m.test(allowedCommands(DEFAULT_RULES).join('\n')));
  });

  it('the paths are where Debian installs the programs', function () {
    for (const program of ['systemctl', 'tee', 'mkdir', 'rm']) {
      const candidates = [`/usr/bin/${program}`, `/bin/${program}`];
      if (!candidates.some((p) => fs.existsSync(p))) this.skip();
      assert.ok(fs.existsSync(`/usr/bin/${program}`) || fs.realpathSync('/bin') === '/usr/bin', program);
    }
  });

  it('visudo accepts them', function () {
    const found = ['/usr/sbin/visudo', '/sbin/visudo'].find((p) => fs.existsSync(p));
    if (!found) this.skip();
    const visudo: string = found!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-sudoers-'));
    try {
      for (const [user, unit] of [
        ['kimi', 'sglang-k26-ddtree'],
        ['alice.b', 'sglang@gpu0.service'],
        ['svc_kimi', 'Kimi_K2.6'],
      ]) {
        const file = path.join(dir, 'rules');
        fs.writeFileSync(file, sudoersRules(user, unit), { mode: 0o440 });
        const r = spawnSync(visudo, ['-c', '-q', '-f', file], { encoding: 'utf8' });
        assert.equal(r.status, 0, `${user} ${unit}: ${r.stdout}${r.stderr}`);
      }
      // and all at once, as several units in one sudoers.d: the alias names do not collide
      const all = path.join(dir, 'all');
      fs.writeFileSync(
        all,
        ['a-b', 'a_b', 'a.b', 'A-B', 'sglang-k26-ddtree'].map((u) => sudoersRules('kimi', u)).join('\n'),
        { mode: 0o440 },
      );
      execFileSync(visudo, ['-c', '-q', '-f', all]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('file names sudo reads (no dot), distinct aliases for names that read alike', () => {
    assert.equal(sudoersFileName('sglang-k26-ddtree.service'), 'kimi-sglang-k26-ddtree');
    assert.equal(sudoersInstallCommand('sglang-k26-ddtree'), 'sudo visudo -f /etc/sudoers.d/kimi-sglang-k26-ddtree');
    assert.match(sudoersFileName('Kimi_K2.6'), /^kimi-Kimi_K2_6_[0-9a-f]{8}$/);
    assert.ok(!sudoersFileName('sglang@gpu0').includes('.'));
    const alias = (u: string) => /Cmnd_Alias (\S+)_RESTART/.exec(sudoersRules('kimi', u))![1];
    assert.equal(alias('sglang-k26-ddtree'), 'KIMI_SGLANG_K26_DDTREE');
    const names = ['a-b', 'a_b', 'a.b', 'A-B'].map(alias);
    assert.equal(new Set(names).size, 4, names.join(' '));
  });

  it('refuses names sudoers would read specially', () => {
    assert.throws(() => sudoersRules('kimi', 'a\\x2db'), /would read specially/);
    assert.throws(() => sudoersRules('kimi', 'a:b'), /would read specially/);
    assert.throws(() => sudoersRules('%admins', 'a'), /would need quoting/);
    assert.throws(() => sudoersRules('kimi ALL=(ALL) ALL', 'a'), /would need quoting/);
    assert.throws(() => sudoersRules('', 'a'), /would need quoting/);
    assert.throws(() => sudoersRules('kimi', 'a;b'), /Invalid systemd unit name/);
  });
});

describe('sudo refusal messages', () => {
  const base = {
    host: 'gpu7',
    unit: 'sglang-k26-ddtree.service',
    action: 'systemctl restart sglang-k26-ddtree.service',
    command: 'sudo -n systemctl restart --no-block -- sglang-k26-ddtree.service',
  };

  it('a password wanted: names the command, the rules command and where they go', () => {
    const m = forFront(sudoRefusalMessage({ ...base, stderr: 'sudo: a password is required\n' }), 'vscode');
    assert.equal(
      m,
      'sudo asks for a password on gpu7: allow "systemctl restart sglang-k26-ddtree.service" without a password. ' +
        'Refused: sudo -n systemctl restart --no-block -- sglang-k26-ddtree.service. ' +
        '"Kimi Service: Copy sudoers rule" copies the sudoers rules that allow exactly the extension\'s commands ' +
        '(install them with sudo visudo -f /etc/sudoers.d/kimi-sglang-k26-ddtree), or connect as a user who may run it.',
    );
  });

  it("a rule that does not match: sudo's own line is kept", () => {
    const core = sudoRefusalMessage({
      ...base,
      host: undefined,
      stderr:
        "Sorry, user kimi is not allowed to execute '/usr/bin/systemctl restart --no-block -- sglang-k26-ddtree.service' as root on gpu7.\n",
    });
    assert.doesNotMatch(core, /Kimi Service/);
    const m = forFront(core, 'vscode');
    assert.match(
      m,
      /^sudo on this machine does not allow "systemctl restart sglang-k26-ddtree\.service" \(Sorry, user kimi is not allowed to execute '\/usr\/bin\/systemctl restart/,
    );
    assert.match(m, /Refused: sudo -n systemctl restart --no-block -- sglang-k26-ddtree\.service\./);
    assert.match(m, /"Kimi Service: Copy sudoers rule"/);
  });
});
