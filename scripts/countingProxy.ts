/**
 * A TCP proxy in front of sshd that counts the bytes both ways and remembers its upstream source
 * ports, so sshd's own log lines can be attributed to the side that went through it. Used by the
 * benchmarks (scripts/bench.ts, scripts/bench-steady.ts).
 */
import * as net from 'node:net';

export class CountingProxy {
  bytes = 0;
  connections = 0;
  readonly upstreamPorts = new Set<number>();
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly targetPort: number) {
    this.server = net.createServer((client) => {
      this.connections++;
      const upstream = net.connect({ host: '127.0.0.1', port: this.targetPort }, () => {
        if (upstream.localPort) this.upstreamPorts.add(upstream.localPort);
      });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (d: Buffer) => {
        this.bytes += d.length;
        upstream.write(d);
      });
      upstream.on('data', (d: Buffer) => {
        this.bytes += d.length;
        client.write(d);
      });
      client.on('end', () => upstream.end());
      upstream.on('end', () => client.end());
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        this.port = (this.server.address() as net.AddressInfo).port;
        resolve();
      }),
    );
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
