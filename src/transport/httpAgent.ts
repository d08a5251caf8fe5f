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

/** A request as it is sent through the tunnel: its url, the agent that carries it, its Host header. */
export interface TunnelRoute {
  readonly url: string;
  readonly agent: http.Agent;
  readonly host?: string;
}

export class TunnelAgent extends http.Agent {
  /** One agent per address on the far side (route()). */
  private readonly bound = new Map<string, TunnelAgent>();

  constructor(
    private readonly openStream: StreamOpener,
    /** The address every stream of this agent goes to, whatever host the request names. */
    private readonly target?: { readonly host: string; readonly port: number },
  ) {
    // One request per channel: channels are cheap and a kept-alive one can go stale with the tunnel.
    super({ keepAlive: false });
  }

  /**
   * How a request for `url` goes out: to a loopback url, by an agent bound to the url's own host
   * and port, with the url's authority as the Host header. An editor that patches http.request for
   * its proxy settings (VS Code's http.proxySupport, on by default) keeps a caller's agent only for
   * loopback hosts: a request that named the GPU node would be sent from this machine instead,
   * past the tunnel. Not for https (its certificate names the host): sent as it is.
   */
  route(url: string): TunnelRoute {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:') return { url, agent: this };
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(parsed.port || 80);
    const key = `${host} ${port}`;
    let agent = this.bound.get(key);
    if (!agent) {
      agent = new TunnelAgent(this.openStream, { host, port });
      this.bound.set(key, agent);
    }
    return { url: `http://127.0.0.1:${port}${parsed.pathname}${parsed.search}`, agent, host: parsed.host };
  }

  // Node's Agent accepts an async createConnection: return nothing and call back later.
  override createConnection(
    options: http.ClientRequestArgs,
    callback: (err: Error | null, socket?: Duplex) => void,
  ): undefined {
    const host = this.target?.host ?? (options.hostname ?? options.host ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
    const port = this.target?.port ?? Number(options.port ?? 80);
    this.openStream(host, port).then(
      (stream) => callback(null, asSocket(stream as Duplex)),
      (err: Error) => callback(err),
    );
    return undefined;
  }
}
