import { strict as assert } from 'node:assert';
import {
  AuthError,
  ChannelOpenError,
  CommandAbortedError,
  ConfigError,
  ConnectionClosedError,
  ConnectionRefusedError,
  ConnectTimeoutError,
  DnsError,
  HostKeyError,
  RemoteExitError,
  SshConfigSyntaxError,
  transportError,
} from '../../src/transport/errors';
import { TransportError, type TransportErrorKind } from '../../src/transport/transport';
import { channelOpenError, classifySshError } from '../../src/transport/ssh/sshErrors';
import { parseJumpHop } from '../../src/transport/ssh/sshJumpHop';
import { resolveSshTarget } from '../../src/transport/ssh/sshConfig';
import { toFetchResponse } from '../../src/transport/curlFetch';

// Callers tell the transport's faults apart by class (or kind), never by the message text.

const ctx = { host: 'gpu7.example', port: 22, username: 'root', authTried: [] };
const err = (message: string, extra: Record<string, unknown>) => Object.assign(new Error(message), extra);

describe('transport errors: one class per fault', () => {
  it('classifySshError gives the class of each fault, with its kind and the same words', () => {
    const cases: [Record<string, unknown>, new (...a: never[]) => TransportError, TransportErrorKind][] = [
      [{ code: 'ENOTFOUND' }, DnsError, 'dns'],
      [{ code: 'ECONNREFUSED' }, ConnectionRefusedError, 'refused'],
      [{ code: 'ETIMEDOUT' }, ConnectTimeoutError, 'timeout'],
      [{ level: 'client-authentication' }, AuthError, 'auth'],
      [{ code: 'ECONNRESET' }, ConnectionClosedError, 'closed'],
    ];
    for (const [extra, cls, kind] of cases) {
      const e = classifySshError(err('x', extra), ctx);
      assert.ok(e instanceof cls, `${JSON.stringify(extra)} -> ${cls.name}`);
      assert.ok(e instanceof TransportError);
      assert.equal(e.kind, kind);
      assert.equal(e.name, 'TransportError');
    }
    assert.equal(
      classifySshError(err('x', { code: 'ECONNREFUSED' }), ctx).message,
      'Connection refused by gpu7.example:22 — is sshd running?',
    );
  });

  it('transportError picks the class for a kind known only at run time, keeping the host key change', () => {
    const change = { host: 'h', offered: 'SHA256:a', known: ['SHA256:b'], file: '/k', lines: [3] };
    const changed = transportError('host-key-changed', 'changed', change);
    assert.ok(changed instanceof HostKeyError);
    assert.equal(changed.kind, 'host-key-changed');
    assert.deepEqual(changed.hostKeyChange, change);
    assert.ok(transportError('config', 'bad') instanceof ConfigError);
    const other = transportError('other', 'odd');
    assert.equal(other.constructor, TransportError);
    assert.equal(other.kind, 'other');
  });

  it('a channel the host would not open is a ChannelOpenError whose code says why', () => {
    const refused = channelOpenError(err('(SSH) Channel open failure: Connection refused', {}), '127.0.0.1', 30001);
    assert.ok(refused instanceof ChannelOpenError);
    assert.equal(refused.code, 'ECONNREFUSED');
    assert.equal(
      refused.message,
      'connect to 127.0.0.1:30001 from the SSH host failed: (SSH) Channel open failure: Connection refused',
    );
    assert.equal(channelOpenError(err('administratively prohibited', {}), 'h', 1).code, 'EACCES');
  });

  it('what ~/.ssh/config cannot say is an SshConfigSyntaxError', () => {
    assert.throws(() => parseJumpHop('b:99999'), SshConfigSyntaxError);
    assert.throws(
      () => resolveSshTarget({ host: 'a' }, 'Host a\n  ProxyJump a\n', { homeDir: '/home/u', localUser: 'u' }),
      (e: unknown) => e instanceof SshConfigSyntaxError && e.message === 'ProxyJump loop through a',
    );
  });

  it('curl on the host that ended without an answer is a RemoteExitError, with a code only when it says why', () => {
    assert.throws(
      () => toFetchResponse({ kind: 'failed', message: 'curl on the host: refused', code: 'ECONNREFUSED' }),
      (e: unknown) => e instanceof RemoteExitError && e.code === 'ECONNREFUSED',
    );
    assert.throws(
      () => toFetchResponse({ kind: 'failed', message: 'm' }),
      (e: unknown) => e instanceof RemoteExitError && !('code' in e),
    );
  });

  it('an aborted command is named AbortError', () => {
    const e = new CommandAbortedError('Remote command aborted');
    assert.equal(e.name, 'AbortError');
    assert.equal(e.message, 'Remote command aborted');
  });
});
