import * as fs from 'node:fs';
import * as net from 'node:net';

/**
 * Where probed ports are drawn from: below the kernel's ephemeral range (ip_local_port_range,
 * 32768-60999 by default), which every outgoing connection takes its local port from. A port the
 * kernel hands to listen(0) comes from that range, so on a busy run one of the suite's own SSH or
 * HTTP connections could take it between the probe and the caller's bind (sshd once failed so:
 * "Bind to port ... failed: Address already in use"); no connection takes a port below it.
 */
function probeRange(): { low: number; high: number } {
  let ephemeralLow = 32768;
  try {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 12000) ephemeralLow = first;
  } catch {
    // Not Linux: the usual default.
  }
  return { low: 10000, high: ephemeralLow - 1 };
}

/** Whether 127.0.0.1:port can be listened on now. */
function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (listened on, then closed), not one of
 * `exclude`, drawn at random below the ephemeral range (probeRange). Another process of the suite
 * probing at the same moment could still draw the same one: one chance in about 20,000.
 */
export async function freePort(exclude: readonly number[] = []): Promise<number> {
  const { low, high } = probeRange();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!exclude.includes(port) && (await listenable(port))) return port;
  }
  throw new Error(`no free port between ${low} and ${high} after 200 tries`);
}
