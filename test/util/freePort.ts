import * as net from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (listened on, then closed), not one of
 * `exclude`. Another process may take it before the caller does, as with any such probe.
 */
export function freePort(exclude: readonly number[] = []): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => {
        if (exclude.includes(port)) freePort(exclude).then(resolve, reject);
        else resolve(port);
      });
    });
  });
}
