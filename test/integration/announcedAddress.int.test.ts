/**
 * A published log that announces an address of the machine it came from ("Uvicorn running on
 * http://10.99.91.49:30001"), replayed as it is on the simulated GPU host: the extension must not
 * follow it, since the host has no such interface; its probes stay on the configured url. Every
 * stream the session opens through the tunnel is recorded, and one to an address other than the
 * loopback is refused before it leaves (a test sends nothing to another machine).
 */
import { strict as assert } from 'node:assert';
import type { Transport } from '../../src/transport/transport';
import { waitFor } from '../util/waitFor';
import { headers, ReplayHosts } from './realLogReplay';

const FOREIGN = 'slurmv4-pd-decode-rdma-errors-then-ready';

/** The transport, with each tunnel stream's target recorded and any but the loopback refused. */
function recordingStreams(transport: Transport, opened: string[]): Transport {
  const openStream: Transport['openStream'] = (host, port) => {
    opened.push(`${host}:${port}`);
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
      return Promise.reject(new Error(`refused by the test: ${host}:${port} is not the loopback`));
    return transport.openStream(host, port);
  };
  return new Proxy(transport, {
    get(target, name) {
      if (name === 'openStream') return openStream;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("a log announcing another machine's address, replayed through the real sshd", function () {
  this.timeout(90_000);
  const hosts = new ReplayHosts();
  const header = headers().find((h) => h.id === FOREIGN)!;

  before(async function () {
    this.timeout(120_000);
    await hosts.start([header.engine]);
  });
  after(() => hosts.stop());

  it('ends ready with every probe on the configured url, and the log says why the announced one is not followed', async () => {
    const opened: string[] = [];
    const j = await hosts.judge(header, {
      replay: { rewriteAddress: false },
      session: { wrap: (t) => recordingStreams(t, opened) },
      // Ready can come from HTTP before the journal's line is read: the steady watch reads it then.
      watch: { steadyIntervalMs: 500 },
    });
    const said =
      /says it listens on http:\/\/10\.99\.91\.49:30001, but this host has no interface with 10\.99\.91\.49.*requests stay on the configured url/;
    const lines = () => hosts.session?.logLines ?? [];
    await waitFor(() => lines().some((l) => said.test(l)), { timeoutMs: 30_000 }).catch(() => undefined);
    const log = lines().join('\n');
    assert.deepEqual(j.verdict, [], `${j.verdict.join('\n')}\n${log}`);
    assert.ok(opened.length > 0, 'probes went through the tunnel');
    assert.deepEqual(
      opened.filter((o) => !o.startsWith('127.0.0.1:')),
      [],
      'a probe went elsewhere than the configured loopback',
    );
    assert.match(log, said);
    assert.equal(hosts.session?.session.client.baseUrl, hosts.session?.settings.servers[0]!.url);
  });
});
