/**
 * The simulated GPU host itself: real sshd, stand-ins, namespaces, cleanup.
 *   npx mocha --require tsx/cjs test/integration/gpu-host.int.test.ts
 */
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startGpuHost, GpuHost } from '../gpu-host/harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 10000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined | false;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last as T;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

function parseShow(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** Host processes whose command line, cwd or executable mentions dir. */
function processesReferencing(dir: string): string[] {
  const hits: string[] = [];
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').replace(/\0/g, ' ');
      let cwd = '';
      try { cwd = fs.readlinkSync(`/proc/${n}/cwd`); } catch { /* */ }
      if (cmd.includes(dir) || cwd.startsWith(dir)) hits.push(`${n}: ${cmd}`);
    } catch { /* gone */ }
  }
  return hits;
}

const TICKER_UNIT = (restart: string) => `[Unit]
Description=Ticker test unit

[Service]
Type=simple
Environment="GREETING=hello world" OTHER=x
ExecStart=/bin/sh -c 'echo "$GREETING"; i=0; \\
    while true; do echo "tick $i"; printf "Multi-thread loading shards:  %%d%%%% Completed | %%d/64\\\\r\\\\n" $i $i; \\
    i=$((i+1)); sleep 0.2; done'
${restart}

[Install]
WantedBy=multi-user.target
`;

describe('simulated GPU host (harness)', function () {
  this.timeout(120000);
  let host: GpuHost;
  let fixture = '';

  before(async () => {
    host = await startGpuHost({ shards: 4, shardBytes: 1 << 20 });
    fixture = host.fixtureDir;
  });
  after(async () => {
    if (host) await host.stop();
    for (const h of ['h', 'p']) fs.rmSync(path.join(os.tmpdir(), `kimi-kh-${process.pid}-${h}`), { force: true });
  });

  it('lays out the fixture: stand-ins, model shards, default unit', async () => {
    for (const n of ['systemctl', 'journalctl', 'nvidia-smi', 'sudo']) {
      assert.ok(fs.statSync(path.join(fixture, 'bin', n)).mode & 0o111, `${n} executable`);
    }
    const shards = fs.readdirSync(host.modelPath).filter((n) => n.endsWith('.safetensors')).sort();
    assert.deepStrictEqual(shards, [1, 2, 3, 4].map((i) => `model-0000${i}-of-00004.safetensors`));
    const buf = fs.readFileSync(path.join(host.modelPath, shards[0]));
    const hlen = Number(buf.readBigUInt64LE(0));
    const header = JSON.parse(buf.subarray(8, 8 + hlen).toString('utf8'));
    const t = Object.entries(header).find(([k]) => k !== '__metadata__')![1] as { data_offsets: number[] };
    assert.strictEqual(8 + hlen + t.data_offsets[1], buf.length, 'header + data = file size');
    assert.ok(fs.existsSync(path.join(host.modelPath, 'config.json')));
    const unitText = fs.readFileSync(host.unitFilePath, 'utf8');
    assert.match(unitText, /ExecStart=.*\/opt\/sglang\/bin\/python -m sglang\.launch_server \\\n/);
    assert.match(unitText, new RegExp(`--port ${host.httpPort}\\n`));
    assert.strictEqual(host.serverUrl, `http://127.0.0.1:${host.httpPort}`);
  });

  it('puts the stand-ins first on the SSH session PATH and mounts the unit folder', async () => {
    const r = await host.ssh('command -v systemctl journalctl nvidia-smi sudo; echo "$KIMI_SIM_ROOT"; ls /etc/systemd/system');
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepStrictEqual(lines.slice(0, 4), ['systemctl', 'journalctl', 'nvidia-smi', 'sudo'].map((n) => path.join(fixture, 'bin', n)));
    assert.strictEqual(lines[4], host.stateDir);
    assert.ok(lines.includes(host.unit));
    // login shells too (Debian's /etc/profile resets PATH)
    const l = await host.ssh('bash -lc "command -v systemctl"');
    assert.strictEqual(l.stdout.trim(), path.join(fixture, 'bin', 'systemctl'));
    // the real /etc/systemd/system of this machine is untouched
    assert.ok(!fs.existsSync(path.join('/etc/systemd/system', host.unit)));
  });

  it('systemctl show/cat of the default unit look like real systemd', async () => {
    const r = await host.ssh(`systemctl show ${host.unitName} --no-pager`);
    const p = parseShow(r.stdout);
    assert.strictEqual(p.Id, host.unit);
    assert.strictEqual(p.LoadState, 'loaded');
    assert.strictEqual(p.ActiveState, 'inactive');
    assert.strictEqual(p.SubState, 'dead');
    assert.strictEqual(p.MainPID, '0');
    assert.strictEqual(p.FragmentPath, `/etc/systemd/system/${host.unit}`);
    assert.strictEqual(p.NeedDaemonReload, 'no');
    assert.match(p.ExecStart, /^\{ path=\S+\/opt\/sglang\/bin\/python ; argv\[\]=\S+python -m sglang\.launch_server --model-path \S+ --served-model-name \/root\/models\/Kimi-K2\.6 --tp 8 --trust-remote-code --host 127\.0\.0\.1 --port \d+ ; ignore_errors=no ; start_time=\[n\/a\] ; stop_time=\[n\/a\] ; pid=0 ; code=\(null\) ; status=0\/0 \}$/);
    const v = await host.ssh(`systemctl show -p ActiveState,SubState --value ${host.unit}`);
    assert.deepStrictEqual(v.stdout.trim().split('\n').sort(), ['dead', 'inactive']);
    const nf = parseShow((await host.ssh('systemctl show nosuch -p LoadState,ActiveState')).stdout);
    assert.deepStrictEqual(nf, { LoadState: 'not-found', ActiveState: 'inactive' });
    const cat = await host.ssh(`systemctl cat ${host.unitName}`);
    assert.ok(cat.stdout.startsWith(`# /etc/systemd/system/${host.unit}\n[Unit]`), cat.stdout);
  });

  it('drop-ins need daemon-reload; restart starts the unit; journal lines stream with -f -a', async () => {
    await host.writeUnit(TICKER_UNIT('Restart=no'));
    // an edit through the real path inside the namespace, as the extension does it
    const edit = await host.ssh(`mkdir -p /etc/systemd/system/${host.unit}.d && printf '[Service]\\nEnvironment=EXTRA=1\\n' > /etc/systemd/system/${host.unit}.d/50-kimi.conf`);
    assert.strictEqual(edit.code, 0, edit.stderr);
    assert.deepStrictEqual(await host.readDropIns(), { '50-kimi.conf': '[Service]\nEnvironment=EXTRA=1\n' });
    let p = parseShow((await host.ssh(`systemctl show ${host.unit} -p NeedDaemonReload,DropInPaths`)).stdout);
    assert.strictEqual(p.NeedDaemonReload, 'yes');
    assert.strictEqual(p.DropInPaths, '');
    await host.ssh('systemctl daemon-reload');
    p = parseShow((await host.ssh(`systemctl show ${host.unit} -p NeedDaemonReload,DropInPaths,Environment`)).stdout);
    assert.strictEqual(p.NeedDaemonReload, 'no');
    assert.strictEqual(p.DropInPaths, `/etc/systemd/system/${host.unit}.d/50-kimi.conf`);
    assert.match(p.Environment, /GREETING=hello world/);
    assert.match(p.Environment, /EXTRA=1/);

    // follow the journal from before the restart, like the extension
    const follower = spawn('ssh', ['-F', '/dev/null', '-i', host.clientKeyPath, '-p', String(host.sshPort),
      '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${await knownHostsFile(host, true)}`,
      '-o', 'BatchMode=yes', 'root@127.0.0.1', `journalctl -u ${host.unitName} -f -a -n 0 -o cat`]);
    let followed = '';
    follower.stdout.setEncoding('utf8').on('data', (d: string) => { followed += d; });
    await sleep(500);

    const t0 = Date.now();
    const r = await host.ssh(`systemctl restart ${host.unitName}`);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.ok(Date.now() - t0 < 3000, 'restart returns at once');
    p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,SubState,MainPID,ExecMainPID`)).stdout);
    assert.strictEqual(p.ActiveState, 'active');
    assert.strictEqual(p.SubState, 'running');
    assert.ok(Number(p.MainPID) > 1);
    assert.strictEqual(p.ExecMainPID, p.MainPID);
    assert.strictEqual(await host.mainPid(), Number(p.MainPID));

    await waitFor('followed lines', async () => /tick 2\n/.test(followed));
    follower.kill();
    // stdout and stderr are separate pipes (as under journald): their relative order is not fixed.
    assert.match(followed, /^Started sglang-k26-ddtree\.service - Ticker test unit\.\n/);
    assert.match(followed, /^hello world$/m);
    assert.match(followed, /^tick 0$/m);
    assert.match(followed, /Multi-thread loading shards: {2}1% Completed \| 1\/64\r\n/, 'with -a the \\r stays');

    // without -a such lines are blobs, like real journalctl
    const plain = await host.ssh(`journalctl -u ${host.unitName} --no-pager -n 4`);
    assert.match(plain.stdout, /gpu-host sh\[\d+\]: \[\d+B blob data\]/);
    const json = await host.ssh(`journalctl -u ${host.unitName} -o json -n 30`);
    const entries = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const bin = entries.find((e) => Array.isArray(e.MESSAGE));
    assert.ok(bin, 'a byte-array MESSAGE');
    assert.match(Buffer.from(bin.MESSAGE).toString(), /Completed \| \d+\/64\r$/);
    assert.ok(entries.every((e) => /^\d{16}$/.test(e.__REALTIME_TIMESTAMP)));
    const since = await host.ssh(`journalctl -u ${host.unitName} --since "@${Math.floor(Date.now() / 1000) + 3600}" -q -o cat`);
    assert.strictEqual(since.stdout, '');
  });

  it('a network drop (stopSshd) leaves the unit running; startSshd brings SSH back', async () => {
    const pid = await host.mainPid();
    assert.ok(pid > 0);
    await host.stopSshd();
    assert.ok(!host.sshdRunning());
    const down = await host.ssh('true');
    assert.notStrictEqual(down.code, 0, 'ssh fails while sshd is down');
    const alive = await host.nsExec(`kill -0 ${pid} && systemctl is-active ${host.unit}`);
    assert.strictEqual(alive.stdout.trim(), 'active');
    await host.startSshd();
    const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p MainPID,ActiveState`)).stdout);
    assert.strictEqual(p.MainPID, String(pid));
    assert.strictEqual(p.ActiveState, 'active');
  });

  it('journalctl -f exits when its SSH channel closes even when the journal is quiet', async () => {
    await host.ssh(`systemctl stop ${host.unit}`);
    const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,SubState,MainPID,Result`)).stdout);
    assert.deepStrictEqual(p, { ActiveState: 'inactive', SubState: 'dead', MainPID: '0', Result: 'success' });
    const j = await host.journal();
    assert.ok(j.includes('Stopping sglang-k26-ddtree.service - Ticker test unit...'));
    assert.ok(j.includes('Stopped sglang-k26-ddtree.service - Ticker test unit.'));
    const kh = await knownHostsFile(host, false);
    const f = spawn('ssh', ['-F', '/dev/null', '-i', host.clientKeyPath, '-p', String(host.sshPort), '-o', 'IdentitiesOnly=yes',
      '-o', `UserKnownHostsFile=${kh}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', 'root@127.0.0.1',
      `journalctl -u ${host.unit} -f -n 1`]);
    f.stdout.resume();
    const countFollowers = async () => (await host.nsExec('ps -eo args | grep -c "[j]ournalctl.js -u"')).stdout.trim();
    await waitFor('journalctl -f running', async () => (await countFollowers()) === '1');
    f.kill('SIGKILL'); // the client goes away without a word
    await waitFor('journalctl -f gone', async () => (await countFollowers()) === '0', 5000);
  });

  it('a crash (killServer) fails the unit; Restart=on-failure restarts it and counts NRestarts', async () => {
    await host.writeUnit(TICKER_UNIT('Restart=no'));
    await host.ssh(`systemctl start ${host.unit}`);
    const pid1 = await waitFor('MainPID', async () => (await host.mainPid()) || undefined);
    await host.killServer();
    const failed = await waitFor('failed', async () => {
      const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,SubState,Result,ExecMainCode,ExecMainStatus,MainPID`)).stdout);
      return p.ActiveState === 'failed' ? p : undefined;
    }, 3000);
    assert.deepStrictEqual(failed, { ActiveState: 'failed', SubState: 'failed', Result: 'signal', ExecMainCode: '2', ExecMainStatus: '9', MainPID: '0' });
    const j = await host.journal();
    assert.ok(j.includes(`${host.unit}: Main process exited, code=killed, status=9/KILL`));
    assert.ok(j.includes(`${host.unit}: Failed with result 'signal'.`));
    const isFailed = await host.ssh(`systemctl is-failed ${host.unit}`);
    assert.strictEqual(isFailed.code, 0);
    assert.strictEqual(isFailed.stdout.trim(), 'failed');

    const rr = await host.ssh(`mkdir -p /etc/systemd/system/${host.unit}.d && printf '[Service]\\nRestart=on-failure\\nRestartSec=1\\n' > /etc/systemd/system/${host.unit}.d/60-restart.conf && systemctl daemon-reload && systemctl restart ${host.unit}`);
    assert.strictEqual(rr.code, 0, rr.stderr);
    assert.strictEqual(parseShow((await host.ssh(`systemctl show ${host.unit} -p Restart`)).stdout).Restart, 'on-failure');
    const pid2 = await waitFor('MainPID', async () => (await host.mainPid()) || undefined);
    assert.notStrictEqual(pid2, pid1);
    await host.killServer('SIGSEGV');
    const auto = await waitFor('auto-restart', async () => {
      const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,SubState`)).stdout);
      return p.SubState === 'auto-restart' ? p : undefined;
    }, 3000).catch(async (e) => { throw new Error(`${e.message}\n${(await host.journal()).slice(-8).join('\n')}`); });
    assert.strictEqual(auto.ActiveState, 'activating');
    const back = await waitFor('restarted', async () => {
      const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,MainPID,NRestarts`)).stdout);
      return p.ActiveState === 'active' && p.NRestarts === '1' ? p : undefined;
    }, 5000);
    assert.notStrictEqual(back.MainPID, String(pid2));
    assert.ok((await host.journal()).includes(`${host.unit}: Scheduled restart job, restart counter is at 1.`));
  });

  it('nvidia-smi reads gpu.json; sudo -n runs commands or fails like real sudo', async () => {
    let r = await host.ssh('nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits');
    assert.strictEqual(r.stdout.split('\n')[0], '0, 0, 81920');
    fs.writeFileSync(path.join(host.stateDir, 'gpu.json'), JSON.stringify({ gpus: Array.from({ length: 8 }, (_, i) => ({ index: i, memoryUsedMiB: 1000 * i, memoryTotalMiB: 81920 })) }));
    r = await host.ssh('nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv');
    const lines = r.stdout.trim().split('\n');
    assert.strictEqual(lines[0], 'index, memory.used [MiB], memory.total [MiB]');
    assert.strictEqual(lines[8], '7, 7000 MiB, 81920 MiB');
    r = await host.ssh(`sudo -n systemctl is-active ${host.unit}`);
    assert.strictEqual(r.stdout.trim(), 'active');
    fs.writeFileSync(path.join(host.stateDir, 'sudo.json'), '{"requirePassword":true}');
    r = await host.ssh(`sudo -n systemctl restart ${host.unit}`);
    assert.strictEqual(r.code, 1);
    assert.strictEqual(r.stderr, 'sudo: a password is required\n');
    fs.unlinkSync(path.join(host.stateDir, 'sudo.json'));
    const log = await host.execLog();
    assert.ok(log.some((l) => / sudo -n systemctl restart sglang-k26-ddtree\.service$/.test(l)), log.slice(-3).join('\n'));
    assert.ok(log.some((l) => / nvidia-smi --query-gpu=/.test(l)));
  });

  it('host key material: fingerprint, hashed known_hosts lines, encrypted client key, handshake count', async () => {
    const fp = (await run('ssh-keygen', ['-lf', path.join(fixture, 'ssh', 'ssh_host_ed25519_key.pub')])).split(' ')[1];
    assert.strictEqual(host.hostKeyFingerprint, fp);
    assert.match(host.hostPublicKey, /^ssh-ed25519 AAAA\S+$/);
    assert.match(host.knownHostsLine({ hashed: true }), /^\|1\|[A-Za-z0-9+/=]{28}\|[A-Za-z0-9+/=]{28} ssh-ed25519 /);
    assert.strictEqual(host.knownHostsLine(), `[127.0.0.1]:${host.sshPort} ${host.hostPublicKey}`);
    const pubFromEnc = await run('ssh-keygen', ['-y', '-P', host.encryptedKeyPassphrase, '-f', host.encryptedClientKeyPath]);
    assert.match(pubFromEnc, /^ssh-ed25519 /);
    const wrong = await runCode('ssh-keygen', ['-y', '-P', 'wrong', '-f', host.encryptedClientKeyPath]);
    assert.notStrictEqual(wrong, 0, 'the encrypted key really is encrypted');
    // a login with the client key through a hashed known_hosts entry counts as one handshake;
    // the harness's own ssh() logins are not counted
    const before = host.handshakes();
    const kh = await knownHostsFile(host, true);
    const out = await run('ssh', ['-F', '/dev/null', '-i', host.clientKeyPath, '-p', String(host.sshPort), '-o', 'IdentitiesOnly=yes',
      '-o', `UserKnownHostsFile=${kh}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', 'root@127.0.0.1', 'echo ok']);
    assert.strictEqual(out.trim(), 'ok');
    await host.ssh('true');
    await waitFor('handshake logged', async () => host.handshakes() === before + 1);
    assert.ok(host.handshakes({ includeHarness: true }) > host.handshakes());
  });

  it('stop() leaves no process and no fixture behind', async () => {
    assert.ok(host.nsPids().length >= 3, 'init, sshd, supervisor and the unit are alive before stop');
    assert.ok(processesReferencing(fixture).length > 0);
    await host.stop();
    assert.deepStrictEqual(processesReferencing(fixture), []);
    assert.deepStrictEqual(host.nsPids(), []);
    assert.ok(!fs.existsSync(fixture));
    const leftovers = fs.readdirSync(os.tmpdir()).filter((n) => n === path.basename(fixture));
    assert.deepStrictEqual(leftovers, []);
  });
});

async function knownHostsFile(host: GpuHost, hashed: boolean): Promise<string> {
  const f = path.join(os.tmpdir(), `kimi-kh-${process.pid}-${hashed ? 'h' : 'p'}`);
  fs.writeFileSync(f, `${host.knownHostsLine({ hashed })}\n`);
  return f;
}

function runCode(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: 'ignore' });
    c.on('close', (code) => resolve(code ?? 1));
  });
}
function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    c.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
    c.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')}: ${code} ${err}`))));
  });
}

const SIM_MAIN = path.resolve(__dirname, '..', 'gpu-host', 'sglang-sim', 'main.js');

describe('simulated GPU host with the SGLang simulator (default unit)', function () {
  this.timeout(180000);
  let host: GpuHost | undefined;
  before(function () { if (!fs.existsSync(SIM_MAIN)) this.skip(); });
  after(async () => { if (host) await host.stop(); });

  it('restart over SSH runs the simulator from ExecStart and the journal says when it is ready', async () => {
    host = await startGpuHost({ shards: 4, shardBytes: 1 << 20 });
    const r = await host.ssh(`systemctl restart ${host.unitName}`);
    assert.strictEqual(r.code, 0, r.stderr);
    const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,MainPID`)).stdout);
    assert.strictEqual(p.ActiveState, 'active');
    const ready = await waitFor('fired up', async () => host!.firedUpAt(), 150000);
    assert.ok(ready > Date.now() - 160000 && ready <= Date.now());
    const j = (await host.ssh(`journalctl -u ${host.unitName} -a -o cat --no-pager`)).stdout;
    assert.match(j, /python -m sglang|Load weight|loading shards|Started sglang-k26-ddtree/);
    assert.match(j, /The server is fired up and ready to roll!/);
  });
});
