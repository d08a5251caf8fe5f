import { strict as assert } from 'node:assert';
import {
  acceptedClients,
  parseExecLine,
  sshClientOf,
  sshdLineClient,
  sshdSessions,
  strangers,
} from '../gpu-host/execLog';

const SSHD = [
  'Connection from 127.0.0.1 port 40100 on 127.0.0.1 port 2222 rdomain ""',
  'Accepted publickey for root from 127.0.0.1 port 40100 ssh2: ED25519 SHA256:abc',
  'Starting session: command for root from 127.0.0.1 port 40100 id 0',
  'Accepted publickey for kimi from 127.0.0.1 port 40200 ssh2: ED25519 SHA256:def',
  'Starting session: command for kimi from 127.0.0.1 port 40200 id 0',
  'Starting session: command for kimi from 127.0.0.1 port 40200 id 1',
];

describe('simulated host logs by SSH connection (execLog)', () => {
  it('parses an exec.log line, arguments kept as written', () => {
    const e = parseExecLine("2026-12-06T08:35:32.720Z 255 ssh=127.0.0.1:57418 systemctl show -p 'Id,x y' a.service");
    assert.deepEqual(
      { at: e.at, pid: e.pid, ssh: e.ssh, name: e.name, args: e.args },
      {
        at: Date.parse('2026-12-06T08:35:32.720Z'),
        pid: 255,
        ssh: '127.0.0.1:57418',
        name: 'systemctl',
        args: "show -p 'Id,x y' a.service",
      },
    );
    assert.equal(parseExecLine('2026-12-06T08:35:32.720Z 9 ssh=- nvidia-smi').args, '');
    assert.throws(() => parseExecLine('2026-12-06T08:35:32.720Z 255 systemctl show'), /not an exec.log line/);
  });

  it('names a connection by its client end, as SSH_CONNECTION and the sshd log do', () => {
    assert.equal(sshClientOf('10.213.4.1 51234 10.213.4.2 22\n'), '10.213.4.1:51234');
    assert.throws(() => sshClientOf(''), /not an SSH_CONNECTION value/);
    assert.equal(sshdLineClient(SSHD[1]!), '127.0.0.1:40100');
    assert.equal(sshdLineClient('Server listening on 127.0.0.1 port 2222.'), undefined);
    assert.deepEqual(acceptedClients(SSHD), ['127.0.0.1:40100', '127.0.0.1:40200']);
    assert.equal(sshdSessions(SSHD, '127.0.0.1:40200').length, 2);
    assert.equal(sshdSessions(SSHD, '127.0.0.1:40300').length, 0);
  });

  it('says who ran what is not ours: the connection and its login, or no SSH session', () => {
    const entries = [
      '2026-12-06T08:00:00.000Z 10 ssh=127.0.0.1:40100 systemctl show a',
      '2026-12-06T08:00:00.100Z 11 ssh=127.0.0.1:40200 systemctl show b',
      '2026-12-06T08:00:00.200Z 12 ssh=- systemctl is-active c',
    ].map(parseExecLine);
    const text = strangers(entries, ['127.0.0.1:40100'], SSHD);
    assert.doesNotMatch(text, /show a/);
    assert.match(text, /show b\n {4}pid 11, connection 127\.0\.0\.1:40200: Accepted publickey for kimi/);
    assert.match(text, /is-active c\n {4}pid 12, no SSH session/);
    assert.equal(strangers(entries.slice(0, 1), ['127.0.0.1:40100'], SSHD), '(none)');
  });
});
