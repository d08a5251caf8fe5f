import { strict as assert } from 'node:assert';
import { proposeServerName, serverNameProblem, serverUrlOf } from '../../src/target/discovered';
import { DISCOVERY_COMMAND, DISCOVERY_SCRIPT, parseDiscovery } from '../../src/target/systemd/unitDiscovery';
import { quote, shellLine } from '../../src/transport/shell';

const show = [
  'Id=sglang-k26.service',
  'Description=Kimi K2.6 on SGLang',
  'ActiveState=active',
  'FragmentPath=/etc/systemd/system/sglang-k26.service',
  'ExecStart={ path=/opt/sglang/bin/python3 ; argv[]=/opt/sglang/bin/python3 -m sglang.launch_server --model-path /models/Kimi-K2.6 --host 0.0.0.0 --port 30001 --tp 8 ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }',
  '',
  'Id=ssh.service',
  'Description=OpenBSD Secure Shell server',
  'ActiveState=active',
  'FragmentPath=/lib/systemd/system/ssh.service',
  'ExecStart={ path=/usr/sbin/sshd ; argv[]=/usr/sbin/sshd -D $SSHD_OPTS ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }',
  '',
  'Id=glm.service',
  'Description=glm',
  'ActiveState=failed',
  'FragmentPath=/etc/systemd/system/glm.service',
  'ExecStart={ path=/usr/bin/env ; argv[]=/usr/bin/env CUDA_VISIBLE_DEVICES=0 /usr/local/bin/sglang serve --model-path=/models/GLM --host=::1 ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }',
  '',
  'Id=empty.service',
  'Description=no ExecStart',
  'ActiveState=inactive',
  'FragmentPath=',
  '',
].join('\n');

describe('unit discovery: the SGLang servers of a host', () => {
  it('keeps the units whose ExecStart launches SGLang (launch_server or sglang serve, behind env too)', () => {
    const units = parseDiscovery(show);
    assert.deepEqual(
      units.map((u) => [u.unit, u.url, u.modelPath, u.activeState]),
      [
        ['glm.service', 'http://[::1]:30000', '/models/GLM', 'failed'],
        ['sglang-k26.service', 'http://127.0.0.1:30001', '/models/Kimi-K2.6', 'active'],
      ],
    );
    assert.equal(units[1]!.description, 'Kimi K2.6 on SGLang');
  });

  it('nothing to find is an empty list, not an error', () => {
    assert.deepEqual(parseDiscovery(''), []);
    assert.deepEqual(
      parseDiscovery(
        'Id=ssh.service\nExecStart={ path=/usr/sbin/sshd ; argv[]=/usr/sbin/sshd -D ; ignore_errors=no }\n',
      ),
      [],
    );
  });

  it("the url: 0.0.0.0 and :: become 127.0.0.1, a missing or bad port is SGLang's default", () => {
    const argv = (flags: string[]) => [
      '/usr/bin/python3',
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/m',
      ...flags,
    ];
    assert.equal(serverUrlOf(argv([])), 'http://127.0.0.1:30000');
    assert.equal(serverUrlOf(argv(['--host', '0.0.0.0', '--port', '8000'])), 'http://127.0.0.1:8000');
    assert.equal(serverUrlOf(argv(['--host', '::', '--port=31000'])), 'http://127.0.0.1:31000');
    assert.equal(serverUrlOf(argv(['--host', '10.0.0.5', '--port', '99999'])), 'http://10.0.0.5:30000');
    assert.equal(serverUrlOf(argv(['--port', '$PORT'])), 'http://127.0.0.1:30000');
    assert.equal(serverUrlOf(argv(['--host', '${HOST}', '--port', '8000'])), 'http://127.0.0.1:8000');
    // vLLM's own default port is 8000, not SGLang's 30000
    assert.equal(serverUrlOf(['/opt/venv/bin/vllm', 'serve', '/m']), 'http://127.0.0.1:8000');
    assert.equal(serverUrlOf(['/opt/venv/bin/vllm', 'serve', '/m', '--port', '8100']), 'http://127.0.0.1:8100');
  });

  it('one command: list units and unit files, then one systemctl show; unit names filtered first', () => {
    assert.deepEqual(DISCOVERY_COMMAND, { argv: ['sh', '-c', DISCOVERY_SCRIPT] });
    assert.equal(DISCOVERY_SCRIPT.match(/systemctl show/g)?.length, 1);
    assert.match(DISCOVERY_SCRIPT, /list-units --type=service --all --no-legend --plain/);
    assert.match(DISCOVERY_SCRIPT, /grep -E '\^\[A-Za-z0-9_\]\[A-Za-z0-9:_.@-\]\*\[.\]service\$'/);
    assert.match(DISCOVERY_SCRIPT, /-p Id,Description,ActiveState,FragmentPath,ExecStart$/);
    // The script reaches the remote shell as one quoted word of `sh -c`: nothing of it is read by the login shell.
    assert.equal(shellLine(DISCOVERY_COMMAND), `sh -c ${quote(DISCOVERY_SCRIPT)}`);
  });

  it('proposes host-unit, unique among the names in use; a typed name must be new and printable', () => {
    assert.equal(proposeServerName('gpu1', 'sglang-k26.service', []), 'gpu1-sglang-k26');
    assert.equal(
      proposeServerName('gpu1', 'sglang-k26.service', ['gpu1-sglang-k26', 'gpu1-sglang-k26-2']),
      'gpu1-sglang-k26-3',
    );
    assert.equal(
      serverNameProblem('gpu1-sglang-k26', ['gpu1-sglang-k26']),
      '"gpu1-sglang-k26" is already the name of a server in kimiService.servers.',
    );
    assert.equal(serverNameProblem(' ', []), 'A name is needed.');
    assert.equal(serverNameProblem('a\nb', []), 'No control characters.');
    assert.equal(serverNameProblem('new', ['old']), undefined);
  });
});

import { loginUid, parseTypedHost, serverEntry, sshHostAliases } from '../../src/fleet/servers/serverEntry';
import { parseSettings } from '../../src/config/parseSettings';

describe('add server: hosts, the typed host, the entry written', () => {
  it('lists the concrete Host names of ~/.ssh/config and its Includes, once each, no patterns', () => {
    const main =
      'Host gpu1 gpu2\n  User kimi\nHost *.lan !bad\n  Port 2222\nHost=gpu3\nMatch host x\nInclude conf.d/*\n# Host commented\n';
    const included = 'Host gpu2 "gpu 4" lab?\n';
    assert.deepEqual(sshHostAliases([main, included]), ['gpu1', 'gpu2', 'gpu3']);
  });

  it('reads host, user@host and user@host:port; says what is wrong otherwise', () => {
    assert.deepEqual(parseTypedHost('gpu1'), { host: 'gpu1' });
    assert.deepEqual(parseTypedHost(' kimi@10.0.0.5:2222 '), { host: '10.0.0.5', username: 'kimi', port: 2222 });
    assert.deepEqual(parseTypedHost('root@[fe80::1]'), { host: '[fe80::1]', username: 'root' });
    assert.match(String(parseTypedHost('gpu1;rm')), /not a host name/);
    assert.match(String(parseTypedHost('a b')), /Type a host/);
    assert.match(String(parseTypedHost('gpu1:70000')), /between 1 and 65535/);
    assert.match(String(parseTypedHost('bad$user@gpu1')), /not a valid user name/);
  });

  it('writes a valid kimiService.servers entry; sudo when the login is not root', () => {
    const [unit] = parseDiscovery(show.split('\n\n')[0]!);
    assert.equal(loginUid('1000\nId=x\n'), 1000);
    assert.equal(loginUid('Id=x\n'), undefined);
    const entry = serverEntry('gpu1-sglang-k26', { host: 'gpu1', username: 'kimi', port: 2222 }, unit!, 1000);
    assert.deepEqual(entry, {
      name: 'gpu1-sglang-k26',
      host: 'gpu1',
      port: 2222,
      username: 'kimi',
      unit: 'sglang-k26.service',
      url: 'http://127.0.0.1:30001',
      sudo: true,
    });
    assert.deepEqual(serverEntry('n', { host: 'gpu1' }, unit!, 0), {
      name: 'n',
      host: 'gpu1',
      unit: 'sglang-k26.service',
      url: 'http://127.0.0.1:30001',
    });
    const settings = parseSettings({ servers: [entry] });
    assert.ok(settings.ok, JSON.stringify(settings));
  });
});
