/**
 * A stand-in on the server's port (issue 29): another process of the host answers /health 200
 * "OK" and HTML on /v1/models while the weights still load. Its answers do not count: the load
 * stays `loading`, the stand-in is named with its pid and command, and the load becomes ready
 * once the server itself holds the port. A stand-in that keeps the port makes the server die
 * with "address already in use", told as the cause.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import type { LoadState, Verdict } from '../../src/monitor/loadState';
import { failureMessage } from '../../src/present/messages';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';

/** A tiny HTTP server that answers like a proxy in front of nothing; it counts its requests in a file. */
const STAND_IN_JS = `
const http = require('http');
const fs = require('fs');
const [port, countFile] = process.argv.slice(2);
let count = 0;
http.createServer((req, res) => {
  fs.writeFileSync(countFile, String(++count));
  if (req.url === '/health') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('OK'); return; }
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<html><body>gateway</body></html>');
}).listen(Number(port), '127.0.0.1');
`;

interface StandInProcess {
  readonly pid: number;
  requests(): number;
  stop(): Promise<void>;
}

/** Starts the stand-in inside the simulated host (its pid namespace), outside the unit. */
async function startStandIn(host: GpuHost, dir: string): Promise<StandInProcess> {
  const script = path.join(dir, 'stand-in.js');
  const countFile = path.join(dir, 'stand-in.count');
  fs.writeFileSync(script, STAND_IN_JS);
  const r = await host.nsExec(
    `${process.execPath} ${script} ${host.httpPort} ${countFile} </dev/null >${dir}/stand-in.log 2>&1 & echo $!`,
  );
  assert.equal(r.code, 0, r.stderr);
  const pid = Number(r.stdout.trim());
  assert.ok(pid > 0, r.stdout);
  return {
    pid,
    requests: () => (fs.existsSync(countFile) ? Number(fs.readFileSync(countFile, 'utf8')) : 0),
    stop: async () => {
      await host.nsExec(`kill ${pid}; while kill -0 ${pid} 2>/dev/null; do sleep 0.05; done`);
    },
  };
}

describe('a stand-in on the server port (simulated host, real SSH)', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  let standIn: StandInProcess | undefined;

  before(async () => {
    host = await startGpuHost({ shards: 12, shardBytes: 2 * 1024 * 1024, sim: { coldFiles: 'all' } });
  });
  afterEach(async () => {
    await standIn?.stop();
    standIn = undefined;
    test?.dispose();
    test = undefined;
  });
  after(async () => {
    await host?.stop();
  });

  it('stays loading while the stand-in answers, names it, and is ready once the server holds the port', async () => {
    // 24 MB at 1 MB/s: the weights take about 24 s, time for the stand-in to be seen and to leave.
    await host.configureSimulator({ fault: {}, readMBps: 1, warmReadMBps: 1, warmupSeconds: 1 });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const verdictsWhileStandIn = new Set<Verdict>();
    let standInUp = false;
    const watching = test.session.watch('restart', FAST_WATCH, {
      onState: (s) => {
        states.push(s);
        if (standInUp) verdictsWhileStandIn.add(s.verdict);
      },
    });
    // The old server is gone and the new one reads its weights: the port is free.
    await waitFor(() => states.at(-1)?.phase === 'loading weights' && (states.at(-1)?.shards?.done ?? 0) >= 1, {
      timeoutMs: 60_000,
      message: 'the new run reads its weights',
    });
    standIn = await startStandIn(host, test.dir);
    standInUp = true;
    const named = await waitFor(() => states.at(-1)?.standIn, { timeoutMs: 30_000, message: 'the stand-in named' });
    assert.equal(named.pid, standIn.pid);
    assert.equal(named.command, 'node');
    assert.equal(named.port, host.httpPort);
    // It answered /health (200 "OK") at least twice while named: neither answer counted.
    const before = standIn.requests();
    await waitFor(() => standIn!.requests() >= before + 2, { timeoutMs: 30_000, message: 'the stand-in asked' });
    const last = states.at(-1)!;
    assert.equal(last.verdict, 'loading', `while the stand-in answers: ${last.verdict}`);
    assert.equal(last.http, undefined);
    assert.ok(
      test.logLines.some((l) =>
        l.includes(`port ${host.httpPort} is answered by pid ${standIn!.pid} (node), not by ${host.unitName}`),
      ),
      test.logLines.join('\n'),
    );
    await standIn.stop();
    standIn = undefined;
    standInUp = false;
    const outcome = await watching;
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);
    assert.deepEqual([...verdictsWhileStandIn].sort(), ['loading'], 'the only verdict while the stand-in answered');
    assert.equal(outcome.state.standIn, undefined);
    assert.match(outcome.state.completion!.detail, /completion answered/);
    const firedUp = await host.firedUpAt();
    assert.ok(firedUp !== undefined && outcome.state.readyAt! >= firedUp - 50, 'ready only after the server said so');
  });

  it('a stand-in that keeps the port: the server dies of "address already in use", told as the cause with the holder', async () => {
    await host.configureSimulator({ fault: {}, readMBps: 8, warmReadMBps: 8, warmupSeconds: 1 });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const watching = test.session.watch('restart', FAST_WATCH, { onState: (s) => states.push(s) });
    await waitFor(() => states.at(-1)?.phase === 'loading weights', { timeoutMs: 60_000, message: 'weights' });
    standIn = await startStandIn(host, test.dir);
    const outcome = await watching;
    assert.equal(outcome.end, 'failed', `ended ${outcome.end}`);
    assert.ok(!states.some((s) => s.verdict === 'ready'), 'never ready');
    // Warm only by the server's own word (uvicorn's startup line comes before its bind), never by the stand-in's answers.
    const warm = states.find((s) => s.verdict === 'warming up');
    if (warm)
      assert.match(warm.lastSignal!.text, /Application startup complete|Uvicorn running/, warm.lastSignal!.text);
    const message = failureMessage(test.session.profile, outcome);
    assert.match(message, /address already in use/, message);
    assert.match(message, new RegExp(`port ${host.httpPort} is answered by pid ${standIn.pid} \\(node\\)`), message);
  });
});
