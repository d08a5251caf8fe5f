import { strict as assert } from 'node:assert';
import { wrap } from '../../src/fronts/cli/usage';
import { parseCliArgs, type CliCommand } from '../../src/fronts/cli/args';
import { CLI_LIMITS } from '../../src/fronts/cli/limits';

function command(argv: string[]): CliCommand {
  const parsed = parseCliArgs(argv);
  assert.equal(parsed.kind, 'command', JSON.stringify(parsed));
  return (parsed as { command: CliCommand }).command;
}

function error(argv: string[]): string {
  const parsed = parseCliArgs(argv);
  assert.equal(parsed.kind, 'error', JSON.stringify(parsed));
  return (parsed as { message: string }).message;
}

describe('cli: argument parsing', () => {
  it('each subcommand with its defaults', () => {
    for (const name of ['status', 'restart', 'wait', 'logs', 'verify'] as const) {
      const c = command([name]);
      assert.equal(c.command, name);
      assert.equal(c.server, undefined);
      assert.equal(c.json, false);
      assert.equal(c.timeoutSeconds, CLI_LIMITS.waitDefaultSeconds);
      assert.equal(c.lines, CLI_LIMITS.logLinesDefault);
      assert.deepEqual(c.flags, {});
      assert.equal(c.force || c.yes || c.wait, false);
    }
  });

  it('common options: --server, --json, --config, --settings, --verbose, in any order', () => {
    const c = command(['--json', 'status', '--server', 'gpu2', '--config', 'servers.json', '-v']);
    assert.equal(c.server, 'gpu2');
    assert.equal(c.json, true);
    assert.equal(c.verbose, true);
    assert.equal(c.configFile, 'servers.json');
    assert.equal(
      command(['logs', '--settings', '/home/a/.config/Code/User/settings.json']).settingsFile,
      '/home/a/.config/Code/User/settings.json',
    );
    assert.equal(command(['status', '--server=gpu3']).server, 'gpu3');
  });

  it('wait --timeout: seconds, 0 to 3600', () => {
    assert.equal(command(['wait', '--timeout', '100']).timeoutSeconds, 100);
    assert.equal(command(['wait', '--timeout=2.5']).timeoutSeconds, 2.5);
    assert.equal(command(['wait', '--timeout', '0']).timeoutSeconds, 0);
    assert.equal(
      command(['wait', '--timeout', String(CLI_LIMITS.waitMaxSeconds)]).timeoutSeconds,
      CLI_LIMITS.waitMaxSeconds,
    );
    assert.match(error(['wait', '--timeout', '3601']), /at most 3600/);
    assert.match(error(['wait', '--timeout=-1']), /negative/);
    assert.match(error(['wait', '--timeout', 'soon']), /not a number/);
    assert.match(error(['wait', '--timeout', '']), /not a number/);
  });

  it('restart: --force, --yes/-y, --wait with its --timeout', () => {
    const c = command(['restart', '--force', '-y', '--wait', '--timeout', '100']);
    assert.deepEqual([c.force, c.yes, c.wait, c.timeoutSeconds], [true, true, true, 100]);
    assert.match(error(['restart', '--timeout', '100']), /--timeout goes with restart --wait/);
  });

  it('logs -n N / --lines N: 1 to 1000', () => {
    assert.equal(command(['logs', '-n', '20']).lines, 20);
    assert.equal(command(['logs', '--lines', '1000']).lines, 1000);
    assert.match(error(['logs', '-n', '0']), /between 1 and 1000/);
    assert.match(error(['logs', '-n', '2.5']), /whole number/);
  });

  it('a subcommand refuses the options of another', () => {
    assert.match(error(['status', '--force']), /--force is not an option of status/);
    assert.match(error(['wait', '--yes']), /--yes is not an option of wait/);
    assert.match(error(['logs', '--timeout', '5']), /--timeout is not an option of logs/);
    assert.match(error(['verify', '-n', '5']), /--lines is not an option of verify/);
  });

  it('one server from flags: --host --unit --url --port --user --identity-file --sudo', () => {
    const c = command([
      'wait',
      '--host',
      'gpu1',
      '--unit',
      'sglang',
      '--url',
      'http://127.0.0.1:30000',
      '--port',
      '2222',
      '--user',
      'kimi',
      '--identity-file',
      '~/.ssh/id_ed25519',
      '--sudo',
    ]);
    assert.deepEqual(c.flags, {
      host: 'gpu1',
      unit: 'sglang',
      url: 'http://127.0.0.1:30000',
      port: 2222,
      username: 'kimi',
      identityFile: '~/.ssh/id_ed25519',
      sudo: true,
    });
    assert.match(error(['status', '--host', 'gpu1', '--port', '70000']), /--port must be between 1 and 65535/);
    assert.match(error(['status', '--url', 'http://x']), /--host and --unit/);
    assert.match(error(['status', '--host', 'gpu1', '--unit', 'u', '--config', 'servers.json']), /not both/);
  });

  it('usage errors: no command, an unknown command or option, a stray argument', () => {
    assert.match(error([]), /no command given/);
    assert.match(error(['reboot']), /unknown command "reboot"/);
    assert.match(error(['status', '--frobnicate']), /frobnicate/);
    assert.match(error(['status', 'now']), /unexpected argument "now"/);
    assert.match(error(['status', '--server']), /server/);
  });

  it('--help (alone or with a command) and --version', () => {
    const help = parseCliArgs(['--help']);
    assert.equal(help.kind, 'help');
    assert.match(
      (help as { text: string }).text,
      /Exit codes: 0 done.*1 failed, 2 wait timed out, 3 host unreachable,\s+4 host key\s+refused, 5 bad configuration/s,
    );
    assert.equal(parseCliArgs(['wait', '-h']).kind, 'help');
    assert.equal(parseCliArgs(['--version']).kind, 'version');
  });
});

describe('cli: forward', () => {
  it('names its server as an argument or with --server, takes --local-port', () => {
    const c = command(['forward', 'gpu2', '--local-port', '8080']);
    assert.equal(c.command, 'forward');
    assert.equal(c.server, 'gpu2');
    assert.equal(c.localPort, 8080);
    assert.equal(command(['forward', '--server', 'gpu2']).server, 'gpu2');
    assert.equal(command(['forward', 'gpu2', '--server', 'gpu2']).server, 'gpu2');
    assert.equal(command(['forward']).localPort, undefined);
  });

  it('refuses two different servers, extra arguments, a bad port, --local-port on other commands, a name on other commands', () => {
    assert.match(error(['forward', 'a', '--server', 'b']), /two servers named: "a" and --server "b"/);
    assert.match(error(['forward', 'a', 'b']), /unexpected argument "b"/);
    assert.match(error(['forward', '--local-port', '0']), /--local-port must be between 1 and 65535/);
    assert.match(error(['forward', '--local-port', 'http']), /--local-port "http" is not a whole number/);
    assert.match(error(['status', '--local-port', '8080']), /--local-port is not an option of status/);
    assert.match(error(['status', 'gpu2']), /unexpected argument "gpu2"/);
  });

  it('parsers enable|rollback: the parser names default to kimi_k2; an action is required', () => {
    const enable = command(['parsers', 'enable', '--yes', '--timeout', '600']);
    assert.deepEqual(enable.parsers, { action: 'enable', reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' });
    assert.equal(enable.yes, true);
    assert.equal(enable.timeoutSeconds, 600);
    const named = command(['parsers', 'enable', '--reasoning-parser', 'deepseek-r1', '--tool-call-parser', 'qwen25']);
    assert.equal(named.parsers?.reasoningParser, 'deepseek-r1');
    assert.equal(named.parsers?.toolCallParser, 'qwen25');
    assert.equal(command(['parsers', 'rollback']).parsers?.action, 'rollback');
    assert.match(error(['parsers']), /needs an action/);
    assert.match(error(['parsers', 'undo']), /unknown parsers action "undo"/);
    assert.match(error(['parsers', 'rollback', '--reasoning-parser', 'x']), /goes with parsers enable/);
    assert.match(error(['parsers', 'enable', '--force']), /not an option of parsers/);
  });

  it('discover HOST [--add UNIT [--name NAME]]', () => {
    assert.deepEqual(command(['discover', 'root@gpu1:2222']).discover, { host: 'root@gpu1:2222' });
    assert.deepEqual(command(['discover', 'gpu1', '--add', 'sglang', '--name', 'k26']).discover, {
      host: 'gpu1',
      add: 'sglang',
      name: 'k26',
    });
    assert.match(error(['discover']), /needs a host/);
    assert.match(error(['discover', 'gpu1', '--name', 'k26']), /--name goes with discover --add/);
    assert.match(error(['discover', 'gpu1', 'gpu2']), /unexpected argument "gpu2"/);
  });
});

describe('kimi-service advice', () => {
  it('advice, advice --apply 2 --yes --timeout 600', () => {
    const plain = parseCliArgs(['advice']);
    assert.equal(plain.kind, 'command');
    if (plain.kind === 'command') {
      assert.equal(plain.command.command, 'advice');
      assert.equal(plain.command.apply, undefined);
    }
    const apply = parseCliArgs(['advice', '--apply', '2', '--yes', '--timeout', '600']);
    assert.equal(apply.kind, 'command');
    if (apply.kind === 'command') {
      assert.equal(apply.command.apply, 2);
      assert.equal(apply.command.yes, true);
      assert.equal(apply.command.timeoutSeconds, 600);
    }
  });
  it('--apply takes a suggestion number; other commands refuse it', () => {
    assert.deepEqual(parseCliArgs(['advice', '--apply', 'x']), {
      kind: 'error',
      message: '--apply "x" is not a whole number',
    });
    assert.deepEqual(parseCliArgs(['status', '--apply', '1']), {
      kind: 'error',
      message: '--apply is not an option of status',
    });
  });
});

describe('cli: --help layout', () => {
  it('wraps at spaces and between Han characters, never starting a line with a closing mark', () => {
    assert.deepEqual(wrap('one two three four', 9), ['one two', 'three', 'four']);
    assert.deepEqual(wrap('状态变化一行', 6), ['状态变', '化一行']);
    assert.deepEqual(wrap('加载仍在继续），完成', 12), ['加载仍在继', '续），完成']);
  });
});
