import { strict as assert } from 'node:assert';
import { backoffDelay, channelOpenError, classifySshError, isFatal } from '../../src/transport/ssh/sshErrors';

const ctx = {
  host: 'gpu7.example',
  port: 22,
  username: 'root',
  authTried: ['/k/id (rejected)', 'ssh-agent (rejected)'],
};
const err = (message: string, extra: Record<string, unknown>) => Object.assign(new Error(message), extra);

describe('ssh error classification', () => {
  it('tells DNS, refused, timeout, auth and other apart with readable messages', () => {
    const dns = classifySshError(
      err('getaddrinfo ENOTFOUND gpu7.example', { code: 'ENOTFOUND', level: 'client-socket' }),
      ctx,
    );
    assert.equal(dns.kind, 'dns');
    assert.equal(dns.message, 'Cannot resolve host name gpu7.example');
    const refused = classifySshError(err('connect ECONNREFUSED', { code: 'ECONNREFUSED' }), {
      ...ctx,
      host: '10.0.0.3',
    });
    assert.equal(refused.kind, 'refused');
    assert.equal(refused.message, 'Connection refused by 10.0.0.3:22 — is sshd running?');
    assert.equal(classifySshError(err('Keepalive timeout', { level: 'client-timeout' }), ctx).kind, 'timeout');
    const auth = classifySshError(
      err('All configured authentication methods failed', { level: 'client-authentication' }),
      ctx,
    );
    assert.equal(auth.kind, 'auth');
    assert.match(auth.message, /root@gpu7\.example:22.*\/k\/id \(rejected\), ssh-agent \(rejected\)/);
    assert.equal(classifySshError(err('weird', {}), ctx).kind, 'other');
  });

  it('a refused login with ssh2 set by hand for a host that needs more: names what ssh2 cannot do, not authorized_keys', () => {
    const auth = classifySshError(
      err('All configured authentication methods failed', { level: 'client-authentication' }),
      {
        ...ctx,
        ssh2Gaps: ['GSSAPIAuthentication yes (ssh2 has no Kerberos)'],
      },
    );
    assert.equal(auth.kind, 'auth');
    assert.match(
      auth.message,
      /set to ssh2, .*GSSAPIAuthentication yes \(ssh2 has no Kerberos\)\. Set the SSH client to "auto"/,
    );
    assert.doesNotMatch(auth.message, /authorized_keys/);
  });

  it('auth and host-key failures are fatal (no automatic retry)', () => {
    assert.ok(isFatal(classifySshError(err('x', { level: 'client-authentication' }), ctx)));
    assert.ok(!isFatal(classifySshError(err('x', { code: 'ECONNREFUSED' }), ctx)));
  });

  it('backs off 1, 2, 4 ... 30 s', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 50].map((n) => backoffDelay(n)),
      [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
    );
  });

  it('maps a refused forwardOut to code ECONNREFUSED', () => {
    const e = channelOpenError(
      err('(SSH) Channel open failure: Connection refused', { reason: 2 }),
      '127.0.0.1',
      30001,
    );
    assert.equal(e.code, 'ECONNREFUSED');
    assert.match(e.message, /127\.0\.0\.1:30001/);
    assert.equal(
      channelOpenError(err('(SSH) Channel open failure: administratively prohibited: open failed', {}), 'h', 1).code,
      'EACCES',
    );
  });
});
