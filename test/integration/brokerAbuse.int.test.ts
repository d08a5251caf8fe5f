/**
 * The broker under abuse by a process of the same user: a real owner process (brokerPeer.ts, the
 * core as a window runs it, watching the simulated GPU host over SSH) and this test writing to
 * its socket what a misbehaving or hostile process would. Nothing runs after an invalid line,
 * even in the same write; a line that never ends and a peer that never reads cost the owner a
 * bounded amount of memory; a flood of connections that never say hello leaves a bounded number
 * of descriptors open, for a bounded time.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { FIRST_LINE_DEADLINE_MS, MAX_CONNECTIONS } from '../../src/broker/owner';
import { PROTOCOL_VERSION } from '../../src/broker/protocol';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { waitFor } from '../util/waitFor';
import { role, startPeer, type Peer } from './brokerPeerProcess';
import { serverEntry } from './simHost';

const MB = 1024 * 1024;
const HELLO = `${JSON.stringify({ t: 'hello', v: PROTOCOL_VERSION, pid: process.pid, focused: false })}\n`;
const exec = (id: number, command: string) =>
  `${JSON.stringify({ t: 'call', id, verb: 'exec', fields: { server: 'sim', command } })}\n`;

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}
const descriptors = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).length;

/** The highest value `read` gave while it ran (read every few milliseconds). */
function peakOf(read: () => number): { readonly peak: () => number; stop(): number } {
  let peak = read();
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, read());
    } catch {
      // The process is gone: its last figure stands.
    }
  }, 5);
  return {
    peak: () => peak,
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, read());
    },
  };
}

function connect(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

const closed = (socket: net.Socket) =>
  socket.destroyed ? Promise.resolve() : new Promise<void>((resolve) => socket.once('close', () => resolve()));

describe('broker: holds under abuse by a process of the same user', function () {
  this.timeout(90_000);
  let host: GpuHost;
  let dir: string;
  let socketPath: string;
  let owner: Peer;
  const sockets: net.Socket[] = [];

  /** A well-behaved peer's command through the owner: its output. */
  async function execAsPeer(command: string): Promise<string> {
    const socket = await connect(socketPath);
    sockets.push(socket);
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.write(HELLO + exec(1, command));
    const reply = await waitFor(
      () =>
        text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { t: string; id?: number; value?: { stdout: string } })
          .find((m) => m.t === 'reply' && m.id === 1),
      { message: `the reply to ${command}: ${text.slice(0, 300)}`, timeoutMs: 30_000 },
    );
    socket.destroy();
    return reply.value?.stdout ?? '';
  }
  const ownerSaid = (what: RegExp, from: number) =>
    owner.next((l) => typeof l.log === 'string' && what.test(l.log), `the owner logs ${what}`, from);
  /** An attacker's connection, with the owner's RSS before it and its peak from now on. */
  async function attack() {
    const pid = owner.child.pid!;
    const before = rssBytes(pid);
    const rss = peakOf(() => rssBytes(pid));
    const from = owner.lines.length;
    const socket = await connect(socketPath);
    sockets.push(socket);
    socket.on('error', () => undefined);
    return { before, rss, from, socket };
  }
  /** A command that leaves its mark on the host, and how many times a mark was left. */
  const marking = (marker: string) => `echo ${marker} >> '${path.join(host.stateDir, 'marks')}'`;
  const ran = (marker: string) => {
    try {
      return fs
        .readFileSync(path.join(host.stateDir, 'marks'), 'utf8')
        .split('\n')
        .filter((l) => l === marker).length;
    } catch {
      return 0;
    }
  };

  before(async () => {
    host = await startGpuHost({ shards: 1, shardBytes: 64 * 1024 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-broker-abuse-'));
    const brokerDir = path.join(dir, 'broker');
    socketPath = path.join(brokerDir, 'broker.sock');
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    const settingsFile = path.join(dir, 'settings.json');
    fs.writeFileSync(
      settingsFile,
      JSON.stringify({ servers: [serverEntry(host)], knownHostsFile, hostKeyPolicy: 'strict' }),
    );
    owner = startPeer(settingsFile, brokerDir);
    await owner.next(role('owner'), 'the process owns the broker');
    // The owner's SSH connection is up before any figure is taken.
    assert.equal((await execAsPeer('echo warm')).trim(), 'warm');
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    if (owner?.child.exitCode === null) owner.child.kill('SIGKILL');
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('nothing after an invalid line runs, even in the same write; the log gets no forged line', async () => {
    const socket = await connect(socketPath);
    sockets.push(socket);
    socket.resume();
    const from = owner.lines.length;
    socket.write(`not json\n${HELLO}${exec(1, marking('after-invalid-line'))}`);
    await closed(socket);
    // An unknown field's name of a megabyte with a newline in it, after a valid hello.
    const forged = await connect(socketPath);
    sockets.push(forged);
    forged.resume();
    forged.write(
      `${HELLO}${JSON.stringify({ t: 'focus', focused: true, [`x\nBroker: forged${'y'.repeat(MB)}`]: 1 })}\n`,
    );
    await closed(forged);
    const said = await ownerSaid(/unknown field/, from);
    assert.ok(String(said.log).length < 400, `the log line is cut: ${String(said.log).length} characters`);
    assert.ok(!String(said.log).includes('\n'), 'no line break of the peer reaches the log');
    // A command sent later by a well-behaved peer runs: the one after the invalid line would have run first.
    await execAsPeer(marking('after-the-attack'));
    assert.equal(ran('after-the-attack'), 1, 'a command run through the owner leaves its mark');
    assert.equal(ran('after-invalid-line'), 0, 'the command after the invalid line did not run');
  });

  it('a line that never ends (44 MB): dropped at the size limit, owner RSS grows < 50 MB', async () => {
    const { before, rss, from, socket } = await attack();
    socket.resume();
    const chunk = Buffer.alloc(MB, 'a');
    socket.write(HELLO);
    let written = 0;
    for (let i = 0; i < 44 && !socket.destroyed; i++) {
      written += chunk.length;
      if (!socket.write(chunk))
        await new Promise<void>((resolve) => {
          const done = () => {
            socket.removeListener('drain', done);
            socket.removeListener('close', done);
            resolve();
          };
          socket.once('drain', done);
          socket.once('close', done);
        });
    }
    await closed(socket);
    await ownerSaid(/a line over the size limit/, from);
    const grew = rss.stop() - before;
    console.log(
      `      written before the drop: ${written / MB} MB; owner RSS grew at most ${(grew / MB).toFixed(1)} MB`,
    );
    assert.ok(written < 44 * MB, 'the owner dropped the connection before the line ended');
    assert.ok(grew < 50 * MB, `owner RSS grew ${(grew / MB).toFixed(1)} MB`);
  });

  it('a peer that asks for 25 outputs of 7 MB and reads nothing: dropped, owner RSS grows < 50 MB, the rest never run', async () => {
    const { before, rss, from, socket } = await attack();
    socket.pause();
    const command = `${marking('queue-attack')}; head -c 7340032 /dev/zero | tr '\\0' x`;
    socket.write(HELLO + Array.from({ length: 25 }, (_, i) => exec(i + 1, command)).join(''));
    await ownerSaid(/reads nothing/, from);
    const grew = rss.stop() - before;
    const runs = ran('queue-attack');
    console.log(`      outputs made before the drop: ${runs}; owner RSS grew at most ${(grew / MB).toFixed(1)} MB`);
    assert.ok(grew < 50 * MB, `owner RSS grew ${(grew / MB).toFixed(1)} MB`);
    assert.ok(runs >= 1 && runs <= 2, `${runs} of the 25 commands ran`);
    // A well-behaved peer's command runs after them: none of the dropped peer's waiting commands did.
    await execAsPeer(marking('after-the-queue'));
    assert.equal(ran('after-the-queue'), 1);
    assert.equal(ran('queue-attack'), runs, 'no command of the dropped peer ran after the drop');
  });

  it('1000 connections that never say hello: descriptors stay bounded and are given back at the deadline', async () => {
    const pid = owner.child.pid!;
    const before = descriptors(pid);
    const fds = peakOf(() => descriptors(pid));
    const started = Date.now();
    const flood = await Promise.all(Array.from({ length: 1000 }, () => connect(socketPath).catch(() => undefined)));
    for (const socket of flood)
      if (socket) {
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.resume();
      }
    const connected = flood.filter((s) => s !== undefined).length;
    await waitFor(() => descriptors(pid) <= before + 2, {
      message: `the owner gives the descriptors back (${descriptors(pid)} open, ${before} before)`,
      timeoutMs: FIRST_LINE_DEADLINE_MS + 15_000,
    });
    const peak = fds.stop();
    console.log(
      `      ${connected} connected; owner descriptors: ${before} before, ${peak} at most, back after ${Date.now() - started} ms`,
    );
    assert.ok(peak <= before + MAX_CONNECTIONS + 16, `${peak - before} descriptors more at most`);
    assert.equal((await execAsPeer('echo after-the-flood')).trim(), 'after-the-flood');
  });
});
