/**
 * The broker under abuse by a process of the same user: a real owner process (brokerPeer.ts, the
 * core as a window runs it, watching the simulated GPU host over SSH) and this test writing to
 * its socket what a misbehaving or hostile process would. A command of its own never runs (only
 * an operation the owner builds); nothing runs after an invalid line, even in the same write; a line that never ends and a peer that never reads cost the owner a
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
/** An operation on the host by name (the owner builds its command). */
const op = (id: number, fields: Record<string, unknown>) =>
  `${JSON.stringify({ t: 'call', id, verb: 'host', fields: { server: 'sim', ...fields } })}\n`;
/** An operation that leaves its mark in the host's exec.log: `systemctl show -p MainPID,<Marker>`. */
const mark = (id: number, marker: string) => op(id, { op: 'unit-show', arg: `MainPID,${marker}` });

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

  /** A peer's message after its hello, and the owner's reply to call 1. */
  async function replyTo(
    message: string,
  ): Promise<{ ok: boolean; value?: { stdout: string }; error?: { message: string } }> {
    const socket = await connect(socketPath);
    sockets.push(socket);
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.write(HELLO + message);
    const reply = await waitFor(
      () =>
        text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { t: string; id?: number; ok: boolean; value?: { stdout: string } })
          .find((m) => m.t === 'reply' && m.id === 1),
      { message: `the reply to ${message.slice(0, 200)}: ${text.slice(0, 300)}`, timeoutMs: 30_000 },
    );
    socket.destroy();
    return reply;
  }
  /** A well-behaved peer's operation through the owner: its output. */
  const asPeer = async (message: string) => (await replyTo(message)).value?.stdout ?? '';
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
  /** How many times a mark was left on the host (exec.log: one line per stand-in run). */
  const ran = async (marker: string) => (await host.execLog()).filter((l) => l.includes(marker)).length;

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
    assert.match(await asPeer(mark(1, 'Warm')), /MainPID=/);
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    if (owner?.child.exitCode === null) owner.child.kill('SIGKILL');
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a command of its own is refused: the old exec verb and an operation its entry has not run nothing, said in the log', async () => {
    const from = owner.lines.length;
    const marker = path.join(host.stateDir, 'free-form');
    const freeForm = `${JSON.stringify({ t: 'call', id: 1, verb: 'exec', fields: { server: 'sim', command: `touch ${marker}; systemctl show -p FreeForm` } })}\n`;
    const socket = await connect(socketPath);
    sockets.push(socket);
    socket.resume();
    socket.write(HELLO + freeForm);
    await closed(socket);
    await ownerSaid(/invalid message/, from);
    // An operation this entry has not (a systemd unit has no compose file) and a value that is no number.
    const notOurs = await replyTo(op(1, { op: 'compose-write', stdin: 'services: {}' }));
    assert.equal(notOurs.ok, false);
    assert.match(String(notOurs.error?.message), /not an operation of sim/);
    const injected = await replyTo(op(1, { op: 'unit-journal-tail', arg: '5; touch /tmp/x' }));
    assert.match(String(injected.error?.message), /takes a whole number/);
    await ownerSaid(/refused a call of peer/, from);
    assert.equal(fs.existsSync(marker), false, 'the free-form command did not run');
    assert.equal(await ran('FreeForm'), 0);
    assert.ok(!(await host.execLog()).some((l) => / (compose|tee|docker) /.test(l)), 'no edit ran');
  });

  it('nothing after an invalid line runs, even in the same write; the log gets no forged line', async () => {
    const socket = await connect(socketPath);
    sockets.push(socket);
    socket.resume();
    const from = owner.lines.length;
    socket.write(`not json\n${HELLO}${mark(1, 'AfterInvalidLine')}`);
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
    await asPeer(mark(1, 'AfterTheAttack'));
    assert.equal(await ran('AfterTheAttack'), 1, 'an operation run through the owner leaves its mark');
    assert.equal(await ran('AfterInvalidLine'), 0, 'the operation after the invalid line did not run');
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
    // Each output of 7 MB (a tokenizer.json read), after a mark.
    const folder = path.join(host.stateDir, 'big-model');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'tokenizer.json'), Buffer.alloc(7 * MB, 'x'));
    const read = (id: number) => op(id, { op: 'model-read', arg: folder, file: 'tokenizer.json' });
    socket.write(
      HELLO + Array.from({ length: 25 }, (_, i) => mark(2 * i + 1, 'QueueAttack') + read(2 * i + 2)).join(''),
    );
    await ownerSaid(/reads nothing/, from);
    const grew = rss.stop() - before;
    const runs = await ran('QueueAttack');
    console.log(`      outputs made before the drop: ${runs}; owner RSS grew at most ${(grew / MB).toFixed(1)} MB`);
    assert.ok(grew < 50 * MB, `owner RSS grew ${(grew / MB).toFixed(1)} MB`);
    assert.ok(runs >= 1 && runs <= 3, `${runs} of the 25 pairs ran`);
    // A well-behaved peer's command runs after them: none of the dropped peer's waiting commands did.
    await asPeer(mark(1, 'AfterTheQueue'));
    assert.equal(await ran('AfterTheQueue'), 1);
    assert.equal(await ran('QueueAttack'), runs, 'no command of the dropped peer ran after the drop');
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
    assert.match(await asPeer(mark(1, 'AfterTheFlood')), /MainPID=/);
  });
});
