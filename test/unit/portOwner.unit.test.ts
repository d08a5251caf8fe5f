import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { samplerCommand, SamplerReader } from '../../src/monitor/watch/sampler';
import { isPortForwarder, parsePortOwnerLine, runsContainerCli, standInText } from '../../src/host/portOwner';

describe('port owner: a unit that runs a container CLI', () => {
  it("docker, podman and nerdctl run the server outside the unit's tree; a python server does not", () => {
    assert.equal(runsContainerCli(['/usr/bin/docker', 'run', '--rm', 'img']), true);
    assert.equal(runsContainerCli(['podman', 'run', 'img']), true);
    assert.equal(runsContainerCli(['/usr/local/bin/nerdctl', 'run', 'img']), true);
    assert.equal(runsContainerCli(['/usr/bin/python3', '-m', 'sglang.launch_server']), false);
    assert.equal(runsContainerCli([]), false);
  });
});

describe('port owner: the sampler line', () => {
  it('reads the tree, another process, another user and an unreadable tree', () => {
    assert.deepEqual(parsePortOwnerLine('O 134433 t'), { inode: 134433, kind: 'unit' });
    assert.deepEqual(parsePortOwnerLine('O 77 p 4242 python3'), {
      inode: 77,
      kind: 'other',
      pid: 4242,
      command: 'python3',
    });
    // comm may hold spaces (prctl PR_SET_NAME); control bytes are dropped.
    assert.deepEqual(parsePortOwnerLine('O 77 p 4242 my proxy\u001b[31m'), {
      inode: 77,
      kind: 'other',
      pid: 4242,
      command: 'my proxy[31m',
    });
    assert.deepEqual(parsePortOwnerLine('O 77 p 4242 ?'), { inode: 77, kind: 'other', pid: 4242 });
    assert.deepEqual(parsePortOwnerLine('O 77 x'), { inode: 77, kind: 'other' });
    assert.deepEqual(parsePortOwnerLine('O 77 u'), { inode: 77, kind: 'unknown' });
    for (const line of ['O  t', 'O 77', 'O 77 p x y', 'S 1 0 0 0 0 -', 'O 77 t extra'])
      assert.equal(parsePortOwnerLine(line), undefined, line);
    // A round with 20 kB of garbage GPU text (the hostile host's nvidia-smi) is not looked into:
    // a trailing-space regex over it would take seconds (hostile.int saw the event loop stall).
    const started = process.hrtime.bigint();
    for (const line of [`S 1 0 0 0 0 - U0,1${' '.repeat(20_000)}x,2`, `O 1 p 2 ${' '.repeat(20_000)}x`])
      assert.equal(parsePortOwnerLine(line), undefined);
    assert.ok(process.hrtime.bigint() - started < 50_000_000n, 'linear, not quadratic');
  });

  it('names the stand-in as the user reads it; Docker’s proxy is a forwarder, not a stand-in', () => {
    assert.equal(
      standInText({ port: 30001, pid: 4242, command: 'python3', service: 'sglang-k26.service', since: 0 }),
      'port 30001 is answered by pid 4242 (python3), not by sglang-k26.service',
    );
    assert.match(standInText({ port: 30001, service: 'container kimi', since: 0 }), /another user.*container kimi/);
    assert.equal(isPortForwarder({ inode: 1, kind: 'other', pid: 9, command: 'docker-proxy' }), true);
    assert.equal(isPortForwarder({ inode: 1, kind: 'other', pid: 9, command: 'python3' }), false);
    assert.equal(isPortForwarder({ inode: 1, kind: 'unit' }), false);
  });

  it('the reader passes the owner line on, apart from the round', () => {
    const reader = new SamplerReader(() => undefined);
    assert.deepEqual(reader.read('O 5 p 12 node', 1), {
      signals: [],
      portOwner: { inode: 5, kind: 'other', pid: 12, command: 'node' },
    });
    assert.equal(reader.read('S 1 1 0 0 0 - L1', 2).listening, true);
  });
});

/** The inode of the socket listening on `port`, from this machine's /proc/net/tcp (the test's own reading). */
function listenInode(port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] === '0A' && f[1]?.endsWith(`:${hex}`)) return Number(f[9]);
  }
  return undefined;
}

/** The sampler's first lines for `mainPid`, watching `port`. */
function samplerLines(mainPid: number, port: number, count: number): Promise<string[]> {
  const command = samplerCommand({ mainPid, intervalMs: 100, listenPort: port });
  // No nvidia-smi on PATH: paced by sleep.
  const child = spawn('/bin/sh', ['-c', `( ${command} ) | head -n ${count}`], { env: { PATH: '/usr/bin:/bin' } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', () => resolve(out.trim().split('\n'))));
}

function listening(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

describe('port owner: the sampler on this machine’s /proc', function () {
  this.timeout(20_000);
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  it('a socket of the watched process: the tree holds it (one owner line, then rounds)', async () => {
    const server = net.createServer();
    const port = await listening(server);
    try {
      const lines = await samplerLines(process.pid, port, 3);
      const inode = listenInode(port);
      assert.ok(inode !== undefined && inode > 0);
      assert.equal(lines[0], `O ${inode} t`);
      for (const line of lines.slice(1)) assert.match(line, /^S 1 \d+ \d+ \d+ \d+ - L1 C/);
    } finally {
      server.close();
    }
  });

  it('a socket of a process outside the tree: named with its pid and command', async () => {
    // The stand-in: another process that listens; the "unit" is a sleep that holds nothing.
    const standIn = spawn(
      process.execPath,
      ['-e', "require('net').createServer().listen(0,'127.0.0.1',function(){console.log(this.address().port)})"],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const unit = spawn('sleep', ['60']);
    children.push(standIn, unit);
    const port = await new Promise<number>((resolve) =>
      standIn.stdout!.once('data', (d: Buffer) => resolve(Number(d))),
    );
    const lines = await samplerLines(unit.pid!, port, 2);
    const inode = listenInode(port);
    const comm = fs.readFileSync(`/proc/${standIn.pid}/comm`, 'utf8').trim();
    assert.equal(lines[0], `O ${inode} p ${standIn.pid} ${comm}`);
    assert.deepEqual(parsePortOwnerLine(lines[0]!), { inode, kind: 'other', pid: standIn.pid, command: comm });
    assert.match(lines[1]!, / L1/);
  });

  it('nothing listens: no owner line, L0', async () => {
    const server = net.createServer();
    const port = await listening(server);
    await new Promise((resolve) => server.close(resolve));
    const lines = await samplerLines(process.pid, port, 2);
    for (const line of lines) assert.match(line, /^S 1 .* L0/);
  });
});
