import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import * as net from 'node:net';
import fetch from 'node-fetch';
import { TunnelAgent } from '../../src/transport/httpAgent';
import { LocalTransport } from '../../src/transport/local/localTransport';
import { commandLine } from '../../src/transport/shell';
import type { TransportError } from '../../src/transport/transport';
import { waitFor } from '../util/waitFor';

function alive(pattern: string): boolean {
  try {
    return require('node:child_process').execFileSync('pgrep', ['-f', pattern]).toString().trim() !== '';
  } catch {
    return false;
  }
}

describe('LocalTransport', () => {
  let t: LocalTransport;
  beforeEach(() => (t = new LocalTransport()));
  afterEach(() => t.dispose());

  it('exec: stdout, stderr, exit code; quoted metacharacters stay text', async () => {
    assert.deepEqual(await t.exec('echo out; echo err >&2; exit 4'), { stdout: 'out\n', stderr: 'err\n', code: 4 });
    const r = await t.exec(commandLine(['printf', '%s', '$(echo pwned)']));
    assert.equal(r.stdout, '$(echo pwned)');
  });

  it('exec timeout kills the whole process group', async () => {
    const started = Date.now();
    await assert.rejects(
      t.exec('sleep 3081 & sleep 3082; wait', { timeoutMs: 200 }),
      (e: TransportError) => e.kind === 'command-timeout',
    );
    // well before the sleeps would have ended (51 min), however busy the machine
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
    // SIGKILL to the group is sent at the timeout; the processes are gone once the kernel has reaped them.
    await waitFor(() => !alive('[s]leep 308[12]'), { timeoutMs: 5000, message: 'no sleep left behind' });
  });

  it('stream: lines split on \\n, kill ends it; dispose kills what is left', async () => {
    const lines: string[] = [];
    const p = await t.stream("printf 'a\\rb\\nc'", (l) => lines.push(l));
    assert.equal(await p.exited, 0);
    assert.deepEqual(lines, ['a\rb', 'c']);
    const long = await t.stream('while true; do echo tick; sleep 0.05; done', () => undefined);
    long.kill();
    assert.equal(await long.exited, null);
    const orphan = await t.stream('sleep 3083', () => undefined);
    t.dispose();
    assert.equal(await orphan.exited, null);
    await waitFor(() => !alive('[s]leep 3083'), { timeoutMs: 5000, message: 'dispose to kill the orphan sleep' });
  });

  it('openStream is a local socket; refused has code ECONNREFUSED', async () => {
    const server = http.createServer((_q, res) => res.end('local ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { agent: new TunnelAgent(t.openStream) });
      assert.equal(await res.text(), 'local ok');
    } finally {
      await new Promise((r) => server.close(r));
    }
    await assert.rejects(t.openStream('127.0.0.1', port), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
  });
});
