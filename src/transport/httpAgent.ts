/**
 * An http.Agent whose sockets are streams opened on the GPU host (ssh2 forwardOut), so
 * node-fetch requests reach 127.0.0.1:30001 of that host through the one SSH connection.
 */
import * as http from 'node:http';
import type { Duplex } from 'node:stream';
import type { StreamOpener } from './transport';

function noop(): void {}

/** http.ClientRequest calls these socket methods; a channel has none of them. */
function asSocket(stream: Duplex): Duplex {
  const s = stream as Duplex & Record<string, unknown>;
  for (const m of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref']) {
    if (typeof s[m] !== 'function') s[m] = noop;
  }
  if (typeof s.destroySoon !== 'function') s.destroySoon = () => stream.destroy();
  return stream;
}

export class TunnelAgent extends http.Agent {
  constructor(private readonly openStream: StreamOpener) {
    // One request per channel: channels are cheap and a kept-alive one can go stale with the tunnel.
    super({ keepAlive: false });
  }

  // Node's Agent accepts an async createConnection: return nothing and call back later.
  override createConnection(
    options: http.ClientRequestArgs,
    callback: (err: Error | null, socket?: Duplex) => void,
  ): undefined {
    const host = options.hostname ?? options.host ?? '127.0.0.1';
    const port = Number(options.port ?? 80);
    this.openStream(host.replace(/^\[(.*)\]$/, '$1'), port).then(
      (stream) => callback(null, asSocket(stream as Duplex)),
      (err: Error) => callback(err),
    );
    return undefined;
  }
}
