/** The chain of hops to the GPU host: a ProxyCommand or the first hop, then each ProxyJump host forwarding to the next. */
import type { Duplex } from 'node:stream';
import type { Client } from 'ssh2';
import { endClient, handshake } from './handshake';
import { spawnProxyCommand, type ProxyProcess } from './proxyCommand';
import type { SshEndpoint } from './sshTargetTypes';
import { channelOpenError } from './sshErrors';
import type { DialContext } from './sshOptions';
import { transportError } from '../errors';
import { proxyCommandSays } from '../../present/words/connectionWords';
import { jumpCouldNotReach } from '../../present/words/sshWords';

/** Connects every hop in turn; on failure ends what was opened. The GPU host's client is last. */
export async function dial(ctx: DialContext): Promise<Client[]> {
  const { target } = ctx.options;
  const hops: SshEndpoint[] = [...target.jumps, target];
  const clients: Client[] = [];
  let proxy: ProxyProcess | undefined;
  try {
    let sock: Duplex | undefined;
    for (let i = 0; i < hops.length; i++) {
      let via = i > 0 ? `via ${hops[i - 1].hostName}` : undefined;
      if (i === 0 && hops[0].proxyCommand !== undefined) {
        proxy = startProxy(ctx, hops[0], hops[0].proxyCommand);
        sock = proxy.sock;
        via = 'via ProxyCommand';
      }
      const client = await handshake(ctx, hops[i], sock, via, i === 0 ? proxy : undefined);
      clients.push(client);
      if (i === 0 && proxy) {
        const p = proxy;
        client.once('close', () => {
          p.kill();
          ctx.proxies.delete(p);
        });
      }
      if (i + 1 < hops.length) sock = await forwardToHop(client, hops[i], hops[i + 1]);
    }
    return clients;
  } catch (err) {
    clients.reverse().forEach(endClient);
    if (proxy) {
      proxy.kill();
      ctx.proxies.delete(proxy);
    }
    throw err;
  } finally {
    for (const c of clients) ctx.dialing.delete(c);
  }
}

function startProxy(ctx: DialContext, ep: SshEndpoint, command: string): ProxyProcess {
  const proxy = spawnProxyCommand(command, {
    ...(ctx.options.platform ? { platform: ctx.options.platform } : {}),
    log: (line) => ctx.log(proxyCommandSays(ep.alias, line)),
  });
  ctx.proxies.add(proxy);
  void proxy.exited.then(() => ctx.proxies.delete(proxy));
  return proxy;
}

function forwardToHop(client: Client, from: SshEndpoint, to: SshEndpoint): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, to.hostName, to.port, (err, channel) => {
      if (!err) return resolve(channel);
      const e = channelOpenError(err, to.hostName, to.port);
      const kind = e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ENOTFOUND' ? 'dns' : 'other';
      reject(
        transportError(kind, jumpCouldNotReach(from.hostName, `${to.hostName}:${to.port}`, (err as Error).message)),
      );
    });
  });
}
