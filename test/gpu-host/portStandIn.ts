/**
 * A stand-in on the server's port for the tests: a tiny node HTTP server started
 * inside the simulated host (its pid namespace), outside the unit, that answers /health 200 "OK"
 * and HTML everywhere else, as a proxy or a gateway in front of nothing would.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GpuHost } from './harness';

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

export interface StandInProcess {
  readonly pid: number;
  requests(): number;
  stop(): Promise<void>;
}

/** Starts the stand-in inside the simulated host (its pid namespace), outside the unit. */
export async function startStandIn(host: GpuHost, dir: string): Promise<StandInProcess> {
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
