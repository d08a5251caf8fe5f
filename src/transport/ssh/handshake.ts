/** One hop's SSH handshake: its deadline, host key, authentication, and the error the user reads when it fails. */
import type { Duplex } from 'node:stream';
import { Client, type ConnectConfig } from 'ssh2';
import { checkHostKey, orderHostKeyAlgorithms, readKnownHosts } from './hostKey';
import { knownKeyTypes } from './knownHosts';
import { proxyExitError, type ProxyProcess } from './proxyCommand';
import { authHandler } from './sshAuth';
import type { SshEndpoint } from './sshTargetTypes';
import { classifySshError } from './sshErrors';
import { noop, type DialContext, type Timers } from './sshOptions';
import { TransportError } from '../transport';
import { AuthError, ConnectionClosedError, ConnectTimeoutError, HostKeyError, transportError } from '../errors';
import {
  closedDuringHandshake,
  closedWhileAsking,
  handshakeTimedOut,
  passwordExpired,
  PROXY_COMMAND_EXITED,
  sshWhere,
  tooManyKeys,
} from '../../present/words/sshWords';

/** A handshake deadline that stops while we wait for the user (host key modal, passphrase). */
export class HandshakeDeadline {
  private handle: unknown;
  private remaining: number;
  private startedAt = 0;
  private done = false;

  constructor(
    ms: number,
    private readonly onExpire: () => void,
    private readonly timers: Timers,
  ) {
    this.remaining = ms;
    this.resume();
  }

  pause(): void {
    if (this.done || this.handle === undefined) return;
    this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.remaining -= Date.now() - this.startedAt;
  }

  resume(): void {
    if (this.done || this.handle !== undefined) return;
    this.startedAt = Date.now();
    this.handle = this.timers.setTimeout(
      () => {
        this.done = true;
        this.onExpire();
      },
      Math.max(0, this.remaining),
    );
  }

  clear(): void {
    this.done = true;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
  }
}

export function handshake(
  ctx: DialContext,
  ep: SshEndpoint,
  sock: Duplex | undefined,
  via: string | undefined,
  proxy?: ProxyProcess,
): Promise<Client> {
  return new Promise<Client>((resolve, reject) => {
    const client = new Client();
    ctx.dialing.add(client);
    // ssh2 may emit errors after we stop caring (end/destroy); never let them go unhandled.
    client.on('error', noop);
    const authTried: string[] = [];
    let hostKeyError: TransportError | undefined;
    let settled = false;
    const failNow = (err: unknown) => {
      if (settled) return;
      settled = true;
      deadline.clear();
      endClient(client);
      auth.finish(false);
      const loginRefusal = auth.loginRefusal();
      const message = (err as { message?: unknown } | undefined)?.message;
      if (!hostKeyError && typeof message === 'string' && /too many authentication failures/i.test(message)) {
        // sshd's MaxAuthTries: usually an agent offering many keys before the right one.
        return reject(new AuthError(tooManyKeys(`${ep.username}@${sshWhere(ep.hostName, ep.port, via)}`, authTried)));
      }
      const level = (err as { level?: unknown } | undefined)?.level;
      if (!hostKeyError && loginRefusal !== undefined && level === 'client-authentication')
        return reject(new AuthError(loginRefusal));
      reject(
        hostKeyError ??
          classifySshError(err, {
            host: ep.hostName,
            port: ep.port,
            username: ep.username,
            authTried,
            via,
            ...(ctx.options.choice?.ssh2Gaps ? { ssh2Gaps: ctx.options.choice.ssh2Gaps } : {}),
          }),
      );
    };
    let waitedForProxy = false;
    const fail = (err: unknown) => {
      if (settled) return;
      // A connection that broke because the ProxyCommand died: say why it died (its exit
      // may be reported a moment after the broken pipe).
      const level = (err as { level?: unknown } | undefined)?.level;
      if (
        proxy &&
        !hostKeyError &&
        level !== 'client-authentication' &&
        !(err instanceof TransportError && err.kind !== 'closed')
      ) {
        if (!proxy.exit && !waitedForProxy) {
          waitedForProxy = true;
          const t = setTimeout(() => fail(err), 1000);
          t.unref();
          void proxy.exited.then(() => {
            clearTimeout(t);
            fail(err);
          });
          return;
        }
        if (proxy.exit) {
          const e = proxyExitError(ep.proxyCommand ?? '', proxy.exit);
          return failNow(transportError(e.kind, e.message));
        }
      }
      failNow(err);
    };
    const timeoutMs = ep.connectTimeoutMs ?? ctx.options.readyTimeoutMs ?? 15_000;
    const deadline = new HandshakeDeadline(
      timeoutMs,
      () =>
        failNow(
          new ConnectTimeoutError(
            handshakeTimedOut(
              Math.round(timeoutMs / 1000),
              sshWhere(ep.hostName, ep.port, via),
              ep.connectTimeoutMs !== undefined,
            ),
          ),
        ),
      ctx.timers,
    );
    const auth = authHandler(ctx, ep, deadline, authTried, failNow, () => settled || ctx.isDisposed());
    // The agent's own failures (not running, refused to sign) are not the connection's: the
    // next key is tried, and the error is listed with what was tried.
    const onError = (err: Error & { level?: string }) => {
      if (err.level === 'agent') {
        authTried.push(`ssh-agent: ${err.message}`);
        return;
      }
      fail(err);
    };
    client.on('ready', () => {
      if (settled) return;
      settled = true;
      deadline.clear();
      auth.finish(true);
      client.removeListener('error', onError);
      client.removeListener('close', onCloseEarly);
      resolve(client);
    });
    client.on('error', onError);
    const onCloseEarly = () =>
      fail(
        auth.asking()
          ? new AuthError(closedWhileAsking(`${ep.username}@${sshWhere(ep.hostName, ep.port)}`))
          : new ConnectionClosedError(closedDuringHandshake(sshWhere(ep.hostName, ep.port))),
      );
    client.on('close', onCloseEarly);
    client.on('change password', () =>
      failNow(new AuthError(passwordExpired(`${ep.username}@${sshWhere(ep.hostName, ep.port)}`))),
    );
    if (proxy) void proxy.exited.then(() => fail(new ConnectionClosedError(PROXY_COMMAND_EXITED)));

    const verifyHostKey = (key: Buffer, verify: (ok: boolean) => void): void => {
      checkHostKey(ctx, ep, key, deadline).then(
        () => verify(!ctx.isDisposed() && !settled),
        (err: unknown) => {
          hostKeyError = err instanceof TransportError ? err : new HostKeyError('host-key-rejected', String(err));
          verify(false);
        },
      );
    };

    const config: ConnectConfig = {
      host: ep.hostName,
      port: ep.port,
      username: ep.username,
      sock,
      readyTimeout: 0, // HandshakeDeadline replaces it: it pauses while the user decides
      keepaliveInterval: ep.serverAliveIntervalMs ?? ctx.options.keepaliveIntervalMs ?? 5000,
      keepaliveCountMax: ep.serverAliveCountMax ?? ctx.options.keepaliveCountMax ?? 3,
      hostVerifier: verifyHostKey,
      authHandler: auth.handler,
    };
    readKnownHosts(ctx, ep)
      .then((files) => {
        if (settled) return;
        const text = files.map((f) => f.text).join('\n');
        config.algorithms = {
          serverHostKey: orderHostKeyAlgorithms(knownKeyTypes(text, ep.hostName, ep.port)) as never,
        };
        client.connect(config);
      })
      .catch(fail);
  });
}

export function endClient(client: Client): void {
  try {
    client.end();
  } catch {
    // already gone
  }
  try {
    client.destroy();
  } catch {
    // already gone
  }
}
