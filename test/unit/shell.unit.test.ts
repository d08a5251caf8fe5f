import { strict as assert } from 'node:assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from '../util/waitFor';
import {
  announcePidEndingWithStdin,
  assertAbsolutePath,
  commandLine,
  isSudoPasswordError,
  isSudoRefusalText,
  isValidAbsolutePath,
  isValidUnitName,
  killGroupCommand,
  shellLine,
  normalizeUnit,
  privilegedCommand,
  quote,
} from '../../src/transport/shell';

/** What /bin/sh makes of a command line: its argv, one per NUL. */
function shArgs(line: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`]).toString();
  return out.split('\0').slice(0, -1);
}

describe('shell quoting', () => {
  const nasty = [
    '',
    'plain',
    'with space',
    "it's",
    "''",
    '$(touch /tmp/pwned)',
    '`id`',
    'a;b|c&d',
    '"double"',
    'back\\slash',
    'new\nline',
    'tab\there',
    '*',
    '~root',
    '-n',
    'ünïcødé',
    "'; rm -rf / #",
  ];

  it('round-trips every argument through a real /bin/sh unchanged', () => {
    for (const arg of nasty) assert.deepEqual(shArgs(quote(arg)), [arg], JSON.stringify(arg));
    assert.deepEqual(shArgs(nasty.map(quote).join(' ')), nasty);
  });

  it('leaves safe words bare and single-quotes the rest', () => {
    assert.equal(quote('sglang-k26.service'), 'sglang-k26.service');
    assert.equal(quote('/opt/x/y'), '/opt/x/y');
    assert.equal(quote(''), "''");
    assert.equal(quote('a b'), "'a b'");
    assert.equal(quote("it's"), "'it'\\''s'");
  });

  it('refuses NUL, which no shell argument can hold', () => {
    assert.throws(() => quote('a\0b'));
  });

  it('commandLine quotes each argument', () => {
    assert.equal(
      commandLine(['systemctl', 'show', '-p', 'ActiveState', 'x y.service']),
      "systemctl show -p ActiveState 'x y.service'",
    );
    assert.throws(() => commandLine([]));
  });
});

describe('unit names', () => {
  it('accepts systemd names', () => {
    for (const ok of ['sglang-k26-ddtree', 'sglang-k26-ddtree.service', 'getty@tty1.service', 'a:b_c.d', 'x\\x2dy']) {
      assert.ok(isValidUnitName(ok), ok);
    }
  });
  it('rejects metacharacters, empty, too long, leading dash', () => {
    for (const bad of ['', 'a b', 'a;b', '$(id)', 'a/b', "a'b", '-x', '.service', 'a\nb', 'x'.repeat(257)]) {
      assert.ok(!isValidUnitName(bad), JSON.stringify(bad));
    }
  });
  it('normalizeUnit adds .service once', () => {
    assert.equal(normalizeUnit('sglang-k26-ddtree'), 'sglang-k26-ddtree.service');
    assert.equal(normalizeUnit('sglang.service'), 'sglang.service');
    assert.throws(() => normalizeUnit('a;reboot'), /Invalid systemd unit name/);
    assert.throws(() => normalizeUnit('x'.repeat(250)), /too long/);
  });
});

describe('paths and sudo', () => {
  it('validates absolute paths', () => {
    assert.ok(isValidAbsolutePath('/root/models/Kimi-K2.6'));
    assert.ok(!isValidAbsolutePath('relative/path'));
    assert.ok(!isValidAbsolutePath('/a\nb'));
    assert.ok(!isValidAbsolutePath('/a\0b'));
    assert.throws(() => assertAbsolutePath('x', 'model path'), /Invalid model path/);
  });

  it('privilegedCommand: the exact argv, with `sudo -n` in front only when asked, never sh -c', () => {
    const argv = ['systemctl', 'restart', '--no-block', '--', "we'ird.service"];
    assert.equal(privilegedCommand(argv, false), commandLine(argv));
    const line = privilegedCommand(argv, true);
    assert.equal(line, `sudo -n systemctl restart --no-block -- 'we'\\''ird.service'`);
    // What the remote shell hands to sudo: exactly these words (a sudoers rule can match them).
    assert.deepEqual(shArgs(line), ['sudo', '-n', ...argv]);
    assert.ok(!/\bsh -c\b/.test(line));
    assert.deepEqual(
      shArgs(privilegedCommand(['tee', '--', '/etc/systemd/system/a b.service.d/50-kimi-parsers.conf'], true)),
      ['sudo', '-n', 'tee', '--', '/etc/systemd/system/a b.service.d/50-kimi-parsers.conf'],
    );
    assert.throws(() => privilegedCommand([], true), /Empty command line/);
  });

  it('recognises sudo asking for a password', () => {
    assert.ok(isSudoPasswordError('sudo: a password is required\n'));
    assert.ok(!isSudoPasswordError('Failed to restart x.service: Unit not found.'));
  });

  it('recognises every way sudo refuses, and nothing else', () => {
    assert.ok(isSudoRefusalText('sudo: a password is required\n'));
    assert.ok(
      isSudoRefusalText(
        "Sorry, user kimi is not allowed to execute '/usr/bin/systemctl restart --no-block -- a.service' as root on gpu7.\n",
      ),
    );
    assert.ok(isSudoRefusalText('kimi is not in the sudoers file.  This incident will be reported.\n'));
    assert.ok(!isSudoRefusalText('Failed to restart a.service: Access denied\n'));
    assert.ok(!isSudoRefusalText('tee: /etc/x: No space left on device\n'));
  });
});

describe('a followed command that ends with its stdin (/bin/sh and bash, as sshd starts them: setsid)', () => {
  const start = (shell: string, command: string) =>
    spawn(shell, ['-c', announcePidEndingWithStdin(command)], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const groupAlive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };

  for (const shell of ['/bin/sh', 'bash']) {
    it(`${shell}: the command's own exit status, and a \`wait\` in it does not wait for the watchdog`, async () => {
      const child = start(shell, 'sleep 0.2 & wait; exit 3');
      assert.equal(await exited(child), 3, 'stdin still open: the command ended by itself');
      child.stdin!.end();
    });

    it(`${shell}: EOF on stdin ends the whole process group, a silent command included`, async () => {
      const child = start(shell, 'sleep 100 & sleep 101');
      const firstLine = await new Promise<string>((resolve) =>
        child.stdout!.once('data', (d: Buffer) => resolve(d.toString())),
      );
      const pgid = Number(firstLine.trim().split('\n')[0]);
      assert.equal(pgid, child.pid, 'the announced pid is the group');
      assert.ok(groupAlive(pgid));
      child.stdin!.end();
      await exited(child);
      await waitFor(() => !groupAlive(pgid), { timeoutMs: 5000, message: 'the group ended' });
    });
  }

  it('killGroupCommand is understood by dash too (kill -s SIG -- -PGID)', async () => {
    const child = spawn('sleep', ['100'], { detached: true, stdio: 'ignore' });
    execFileSync('/bin/sh', ['-c', killGroupCommand(child.pid!, 'TERM')]);
    await exited(child);
    assert.equal(groupAlive(child.pid!), false);
  });
});

describe('shellLine: a HostCommand as the one line a shell runs', () => {
  it('quotes each word; sudo, env and redirections are fields, not text', () => {
    assert.equal(
      shellLine({ argv: ['systemctl', 'restart', '--no-block', '--', 'a b.service'] }),
      "systemctl restart --no-block -- 'a b.service'",
    );
    assert.equal(shellLine({ argv: ['docker', 'restart', '--', 'x'], sudo: true }), 'sudo -n docker restart -- x');
    assert.equal(
      shellLine({ argv: ['systemctl', 'show', '-p', 'Id', "x';touch /tmp/canary;'"], env: { TZ: 'UTC' } }),
      `TZ=UTC systemctl show -p Id 'x'\\'';touch /tmp/canary;'\\'''`,
    );
    assert.equal(
      shellLine({ argv: ['tee', '--', '/etc/x'], sudo: true, discardStdout: true, stderrToStdout: true }),
      'sudo -n tee -- /etc/x >/dev/null 2>&1',
    );
  });
  it('runs exactly its words: a script gets its values as $1, never spliced', () => {
    const out = execFileSync('/bin/sh', [
      '-c',
      shellLine({ argv: ['sh', '-c', 'printf "%s|" "$1" "$2"', 'sh', '$(touch /tmp/kimi-canary)', "it's"] }),
    ]).toString();
    assert.equal(out, "$(touch /tmp/kimi-canary)|it's|");
  });
  it('refuses what it cannot say safely', () => {
    assert.throws(() => shellLine({ argv: ['x'], sudo: true, env: { A: '1' } }), /sudo resets/);
    assert.throws(() => shellLine({ argv: ['x'], env: { 'A;B': '1' } }), /Invalid environment name/);
    assert.throws(() => shellLine({ argv: ['a\0b'] }), /NUL/);
  });
});
