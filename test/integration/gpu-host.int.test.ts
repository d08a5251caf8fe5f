/**
 * The simulated GPU host itself: real sshd, stand-ins, namespaces, cleanup.
 *   npx mocha --require tsx/cjs test/integration/gpu-host.int.test.ts
 */
import * as assert from 'assert';
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { Client } from 'ssh2';
import { startGpuHost, GpuHost } from '../gpu-host/harness';
import { sshClientOf, sshdLineClient } from '../gpu-host/execLog';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const MARKER = '-- kimi test: is journalctl -f following? ';
/**
 * Resolves once a `journalctl -f` (whose output so far is out()) prints what is appended to the
 * journal: markers are appended until one comes out (one appended before the follower's first
 * read may be swallowed by -n 0, so one is not enough).
 */
async function untilFollowing(host: GpuHost, out: () => string, timeoutMs = 10000): Promise<void> {
  let n = 0;
  await waitFor(
    'journalctl -f to follow',
    async () => {
      if (out().includes(MARKER)) return true;
      await host.appendJournal(`${MARKER}${n++}`);
      return false;
    },
    timeoutMs,
  );
}
/** What a follower printed after the last marker line. */
function afterMarkers(text: string): string {
  const i = text.lastIndexOf(MARKER);
  return i < 0 ? text : text.slice(text.indexOf('\n', i) + 1);
}

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
      try {
        cwd = fs.readlinkSync(`/proc/${n}/cwd`);
      } catch {
        /* */
      }
      if (cmd.includes(dir) || cwd.startsWith(dir)) hits.push(`${n}: ${cmd}`);
    } catch {
      /* gone */
    }
  }
  return hits;
}

// `gate`: the ticking begins once that file exists, or after 20 s (a "load" that takes much longer
// than a restart that does not wait for it).
const TICKER_UNIT = (restart: string, gate = '') => `[Unit]
Description=Ticker test unit

[Service]
Type=simple
Environment="GREETING=hello world" OTHER=x
ExecStart=/bin/sh -c 'echo "$GREETING"; n=0; \\
    while [ -n "${gate}" ] && [ ! -e "${gate}" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done; i=0; \\
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
    const shards = fs
      .readdirSync(host.modelPath)
      .filter((n) => n.endsWith('.safetensors'))
      .sort();
    assert.deepStrictEqual(
      shards,
      [1, 2, 3, 4].map((i) => `model-0000${i}-of-00004.safetensors`),
    );
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
    const r = await host.ssh(
      'command -v systemctl journalctl nvidia-smi sudo; echo "$KIMI_SIM_ROOT"; ls /etc/systemd/system',
    );
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepStrictEqual(
      lines.slice(0, 4),
      ['systemctl', 'journalctl', 'nvidia-smi', 'sudo'].map((n) => path.join(fixture, 'bin', n)),
    );
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
    assert.match(
      p.ExecStart,
      /^\{ path=\S+\/opt\/sglang\/bin\/python ; argv\[\]=\S+python -m sglang\.launch_server --model-path \S+ --served-model-name \/root\/models\/Kimi-K2\.6 --tp 8 --trust-remote-code --host 127\.0\.0\.1 --port \d+ ; ignore_errors=no ; start_time=\[n\/a\] ; stop_time=\[n\/a\] ; pid=0 ; code=\(null\) ; status=0\/0 \}$/,
    );
    const v = await host.ssh(`systemctl show -p ActiveState,SubState --value ${host.unit}`);
    assert.deepStrictEqual(v.stdout.trim().split('\n').sort(), ['dead', 'inactive']);
    const nf = parseShow((await host.ssh('systemctl show nosuch -p LoadState,ActiveState')).stdout);
    assert.deepStrictEqual(nf, { LoadState: 'not-found', ActiveState: 'inactive' });
    const cat = await host.ssh(`systemctl cat ${host.unitName}`);
    assert.ok(cat.stdout.startsWith(`# /etc/systemd/system/${host.unit}\n[Unit]`), cat.stdout);
  });

  it('drop-ins need daemon-reload; restart starts the unit; journal lines stream with -f -a', async () => {
    const gate = `/tmp/kimi-ticker-gate-${process.pid}-${Date.now()}`;
    await host.writeUnit(TICKER_UNIT('Restart=no', gate));
    // an edit through the real path inside the namespace, as the extension does it
    const edit = await host.ssh(
      `mkdir -p /etc/systemd/system/${host.unit}.d && printf '[Service]\\nEnvironment=EXTRA=1\\n' > /etc/systemd/system/${host.unit}.d/50-kimi.conf`,
    );
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
    const follower = spawn(
      'ssh',
      clientSshArgs(host, await knownHostsFile(host, true), `journalctl -u ${host.unitName} -f -a -n 0 -o cat`),
    );
    let followed = '';
    follower.stdout.setEncoding('utf8').on('data', (d: string) => {
      followed += d;
    });
    await untilFollowing(host, () => followed);

    // Type=simple: restart returns once the process is forked, not when its "load" (20 s unless the
    // gate opens) is over, however slow the machine
    const ticks = async () => (await host.journal()).filter((l) => /^tick \d+$/.test(l)).length;
    const ticksBefore = await ticks();
    const r = await host.ssh(`systemctl restart ${host.unitName}`);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(await ticks(), ticksBefore, 'restart returns at once, while the unit still loads');
    assert.strictEqual((await host.nsExec(`touch ${gate}`)).code, 0);
    p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,SubState,MainPID,ExecMainPID`)).stdout);
    assert.strictEqual(p.ActiveState, 'active');
    assert.strictEqual(p.SubState, 'running');
    assert.ok(Number(p.MainPID) > 1);
    assert.strictEqual(p.ExecMainPID, p.MainPID);
    assert.strictEqual(await host.mainPid(), Number(p.MainPID));

    await waitFor('followed lines', async () => /tick 2\n/.test(followed));
    follower.kill();
    await host.nsExec(`rm -f ${gate}`);
    followed = afterMarkers(followed);
    // stdout and stderr are separate pipes (as under journald): their relative order is not fixed.
    assert.match(followed, /^Started sglang-k26-ddtree\.service - Ticker test unit\.\n/);
    assert.match(followed, /^hello world$/m);
    assert.match(followed, /^tick 0$/m);
    assert.match(followed, /Multi-thread loading shards: {2}1% Completed \| 1\/64\r\n/, 'with -a the \\r stays');

    // without -a such lines are blobs, like real journalctl
    const plain = await host.ssh(`journalctl -u ${host.unitName} --no-pager -n 4`);
    assert.match(plain.stdout, /gpu-host sh\[\d+\]: \[\d+B blob data\]/);
    const json = await host.ssh(`journalctl -u ${host.unitName} -o json -n 30`);
    const entries = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const bin = entries.find((e) => Array.isArray(e.MESSAGE));
    assert.ok(bin, 'a byte-array MESSAGE');
    assert.match(Buffer.from(bin.MESSAGE).toString(), /Completed \| \d+\/64\r$/);
    assert.ok(entries.every((e) => /^\d{16}$/.test(e.__REALTIME_TIMESTAMP)));
    const since = await host.ssh(
      `journalctl -u ${host.unitName} --since "@${Math.floor(Date.now() / 1000) + 3600}" -q -o cat`,
    );
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
    const f = spawn('ssh', clientSshArgs(host, kh, `journalctl -u ${host.unit} -f -n 1`));
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
    const failed = await waitFor(
      'failed',
      async () => {
        const p = parseShow(
          (
            await host.ssh(
              `systemctl show ${host.unit} -p ActiveState,SubState,Result,ExecMainCode,ExecMainStatus,MainPID`,
            )
          ).stdout,
        );
        return p.ActiveState === 'failed' ? p : undefined;
      },
      3000,
    );
    assert.deepStrictEqual(failed, {
      ActiveState: 'failed',
      SubState: 'failed',
      Result: 'signal',
      ExecMainCode: '2',
      ExecMainStatus: '9',
      MainPID: '0',
    });
    const j = await host.journal();
    assert.ok(j.includes(`${host.unit}: Main process exited, code=killed, status=9/KILL`));
    assert.ok(j.includes(`${host.unit}: Failed with result 'signal'.`));
    const isFailed = await host.ssh(`systemctl is-failed ${host.unit}`);
    assert.strictEqual(isFailed.code, 0);
    assert.strictEqual(isFailed.stdout.trim(), 'failed');

    const rr = await host.ssh(
      `mkdir -p /etc/systemd/system/${host.unit}.d && printf '[Service]\\nRestart=on-failure\\nRestartSec=5\\n' > /etc/systemd/system/${host.unit}.d/60-restart.conf && systemctl daemon-reload && systemctl restart ${host.unit}`,
    );
    assert.strictEqual(rr.code, 0, rr.stderr);
    assert.strictEqual(
      parseShow((await host.ssh(`systemctl show ${host.unit} -p Restart`)).stdout).Restart,
      'on-failure',
    );
    const pid2 = await waitFor('MainPID', async () => (await host.mainPid()) || undefined);
    assert.notStrictEqual(pid2, pid1);
    await host.killServer('SIGSEGV');
    // RestartSec=5: the auto-restart state lasts long enough for a poll on a busy machine to see it
    const auto = await waitFor(
      'auto-restart',
      async () => {
        const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,SubState`)).stdout);
        return p.SubState === 'auto-restart' ? p : undefined;
      },
      15000,
    ).catch(async (e) => {
      throw new Error(`${e.message}\n${(await host.journal()).slice(-8).join('\n')}`);
    });
    assert.strictEqual(auto.ActiveState, 'activating');
    const back = await waitFor(
      'restarted',
      async () => {
        const p = parseShow((await host.ssh(`systemctl show ${host.unit} -p ActiveState,MainPID,NRestarts`)).stdout);
        return p.ActiveState === 'active' && p.NRestarts === '1' ? p : undefined;
      },
      30000,
    );
    assert.notStrictEqual(back.MainPID, String(pid2));
    assert.ok((await host.journal()).includes(`${host.unit}: Scheduled restart job, restart counter is at 1.`));
  });

  it('nvidia-smi reads gpu.json; sudo -n runs commands or fails like real sudo', async () => {
    let r = await host.ssh('nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits');
    assert.strictEqual(r.stdout.split('\n')[0], '0, 0, 81920');
    fs.writeFileSync(
      path.join(host.stateDir, 'gpu.json'),
      JSON.stringify({
        gpus: Array.from({ length: 8 }, (_, i) => ({ index: i, memoryUsedMiB: 1000 * i, memoryTotalMiB: 81920 })),
      }),
    );
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
    assert.ok(
      log.some((l) => / sudo -n systemctl restart sglang-k26-ddtree\.service$/.test(l)),
      log.slice(-3).join('\n'),
    );
    assert.ok(log.some((l) => / nvidia-smi --query-gpu=/.test(l)));
  });

  it('exec.log names the SSH connection of each stand-in, also one whose environment lost it (as sudo does)', async () => {
    // The last command keeps the session's shell as the parent of the one without SSH_CONNECTION, as sudo would be.
    const before = (await host.execEntries()).length;
    const cmd = `printf '%s\\n' "$SSH_CONNECTION"; systemctl is-active ${host.unit}; env -u SSH_CONNECTION systemctl is-enabled ${host.unit}; true`;
    const [first, second] = await Promise.all([host.ssh(cmd), host.ssh(cmd)]);
    const clients = [first!, second!].map((r) => sshClientOf(r.stdout.split('\n')[0]!));
    assert.notStrictEqual(clients[0], clients[1], 'two connections, two client ports');
    const ran = (await host.execEntries()).slice(before);
    for (const client of clients)
      assert.deepStrictEqual(
        ran.filter((e) => e.ssh === client).map((e) => `${e.name} ${e.args}`),
        [`systemctl is-active ${host.unit}`, `systemctl is-enabled ${host.unit}`],
        ran.map((e) => e.line).join('\n'),
      );
    for (const client of clients)
      assert.ok(
        host.sshdLog().some((l) => /Starting session: command/.test(l) && sshdLineClient(l) === client),
        `the sshd log names ${client}`,
      );
  });

  it('host key material: fingerprint, hashed known_hosts lines, encrypted client key, handshake count', async () => {
    const fp = (await run('ssh-keygen', ['-lf', path.join(fixture, 'ssh', 'ssh_host_ed25519_key.pub')])).split(' ')[1];
    assert.strictEqual(host.hostKeyFingerprint, fp);
    assert.match(host.hostPublicKey, /^ssh-ed25519 AAAA\S+$/);
    assert.match(host.knownHostsLine({ hashed: true }), /^\|1\|[A-Za-z0-9+/=]{28}\|[A-Za-z0-9+/=]{28} ssh-ed25519 /);
    assert.strictEqual(host.knownHostsLine(), `[127.0.0.1]:${host.sshPort} ${host.hostPublicKey}`);
    const pubFromEnc = await run('ssh-keygen', [
      '-y',
      '-P',
      host.encryptedKeyPassphrase,
      '-f',
      host.encryptedClientKeyPath,
    ]);
    assert.match(pubFromEnc, /^ssh-ed25519 /);
    const wrong = await runCode('ssh-keygen', ['-y', '-P', 'wrong', '-f', host.encryptedClientKeyPath]);
    assert.notStrictEqual(wrong, 0, 'the encrypted key really is encrypted');
    // a login with the client key through a hashed known_hosts entry counts as one handshake;
    // the harness's own ssh() logins are not counted
    const before = host.handshakes();
    const kh = await knownHostsFile(host, true);
    const out = await run('ssh', clientSshArgs(host, kh, 'echo ok'));
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
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    c.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    c.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')}: ${code} ${err}`)),
    );
  });
}

const SIM_MAIN = path.resolve(__dirname, '..', 'gpu-host', 'sglang-sim', 'main.js');

describe('simulated GPU host with the SGLang simulator (default unit)', function () {
  this.timeout(180000);
  let host: GpuHost | undefined;
  before(function () {
    if (!fs.existsSync(SIM_MAIN)) this.skip();
  });
  after(async () => {
    if (host) await host.stop();
  });

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

// What journalctl prints to a user outside 'adm'/'systemd-journal' (systemd src/shared/journal-util.c).
const HINT =
  'Hint: You are currently not seeing messages from other users and the system.\n' +
  "      Users in groups 'adm', 'systemd-journal' can see all messages.\n" +
  '      Pass -q to turn off this notice.\n';
const NO_FILES = 'No journal files were opened due to insufficient permissions.\n';

interface Remote {
  proc: ChildProcess;
  out: string;
  err: string;
  exited: Promise<number | null>;
}

/**
 * The system ssh client's argv for a command as root with the test client key, the host key
 * checked against `knownHosts` (not the harness's own ssh(), whose logins are not counted).
 */
function clientSshArgs(host: GpuHost, knownHosts: string, command: string): string[] {
  return [
    '-F',
    '/dev/null',
    '-i',
    host.clientKeyPath,
    '-p',
    String(host.sshPort),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'BatchMode=yes',
    'root@127.0.0.1',
    command,
  ];
}

/** A command over the system ssh client with the test client key (not the harness's own ssh()). */
async function sshSpawn(host: GpuHost, command: string): Promise<Remote> {
  const kh = await knownHostsFile(host, false);
  const proc = spawn('ssh', clientSshArgs(host, kh, command));
  const r: Remote = {
    proc,
    out: '',
    err: '',
    exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))),
  };
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    r.out += d;
  });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    r.err += d;
  });
  return r;
}

function httpRequest(
  url: string,
  o: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; body: string; contentType?: string }> {
  return new Promise((resolve, reject) => {
    const data = o.body !== undefined ? JSON.stringify(o.body) : undefined;
    const req = http.request(
      url,
      {
        method: data ? 'POST' : 'GET',
        agent: false,
        headers: { ...(data ? { 'content-type': 'application/json' } : {}), ...o.headers },
      },
      (res) => {
        let b = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          b += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: b, contentType: res.headers['content-type'] }),
        );
      },
    );
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    req.end(data);
  });
}

function ssh2Connect(host: GpuHost): Promise<Client> {
  return new Promise((resolve, reject) => {
    const c = new Client();
    c.on('ready', () => resolve(c)).on('error', reject);
    c.connect({
      host: host.sshHost,
      port: host.sshPort,
      username: host.username,
      privateKey: fs.readFileSync(host.clientKeyPath),
      hostVerifier: (key: Buffer) => key.equals(Buffer.from(host.hostPublicKey.split(' ')[1], 'base64')),
      readyTimeout: 20000,
    });
  });
}

/** direct-tcpip to 127.0.0.1:port of the host: undefined when the channel opened, else the error. */
function tryForward(c: Client, port: number): Promise<(Error & { reason?: unknown }) | undefined> {
  return new Promise((resolve) => {
    c.forwardOut('127.0.0.1', 0, '127.0.0.1', port, (err, ch) => {
      if (err) {
        resolve(err);
        return;
      }
      ch.on('error', () => {
        /* closed under it */
      });
      ch.close();
      resolve(undefined);
    });
  });
}

function ssh2Exec(c: Client, command: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    c.exec(command, (err, ch) => {
      if (err) {
        reject(err);
        return;
      }
      let out = '';
      let code = -1;
      ch.on('data', (d: Buffer) => {
        out += d.toString();
      });
      ch.stderr.on('data', () => {
        /* */
      });
      ch.on('exit', (n: number) => {
        code = n;
      });
      ch.on('close', () => resolve({ code, out }));
    });
  });
}

describe('simulated GPU host: journal access, slow stop, API key, TCP forwarding', function () {
  this.timeout(180000);
  let host: GpuHost | undefined;
  const remotes: Remote[] = [];
  before(async function () {
    if (!fs.existsSync(SIM_MAIN)) this.skip();
    host = await startGpuHost({ shards: 4, shardBytes: 1 << 20 });
  });
  afterEach(async () => {
    for (const r of remotes.splice(0))
      if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill('SIGKILL');
    if (host) await host.setJournalAccess('allowed');
    if (host) await host.configureSimulator({ stopHold: false });
  });
  after(async () => {
    if (host) await host.stop();
  });

  const h = (): GpuHost => host!;
  const PROPS =
    'ActiveState,SubState,MainPID,InvocationID,ExecMainStartTimestamp,ExecMainStartTimestampMonotonic,Result,Job';
  const show = async (): Promise<Record<string, string>> =>
    parseShow((await h().ssh(`systemctl show ${h().unit} -p ${PROPS}`)).stdout);
  /** The unit active again under a main process other than `oldPid`. */
  const activeAgain = (what: string, oldPid: string | undefined): Promise<Record<string, string>> =>
    waitFor(
      what,
      async () => {
        const p = await show();
        return p.ActiveState === 'active' && p.MainPID !== oldPid ? p : undefined;
      },
      60000,
    );
  const follow = async (command: string): Promise<Remote> => {
    const r = await sshSpawn(h(), command);
    remotes.push(r);
    return r;
  };
  /** ns pid of the last `systemctl restart UNIT` (exec.log has every stand-in's pid). */
  const lastRestartPid = async (): Promise<number> => {
    const line = (await h().execLog()).reverse().find((l) => l.endsWith(` systemctl restart ${h().unit}`));
    assert.ok(line, 'systemctl restart in exec.log');
    return Number(line.split(' ')[1]);
  };
  const gone = async (nsPid: number): Promise<boolean> =>
    /^\s*(Z.*)?$/.test((await h().nsExec(`ps -o stat= -p ${nsPid}`)).stdout);

  it('journal access "denied-hint": journalctl prints the hint and none of the unit\'s lines; -f keeps following, silent', async () => {
    const host = h();
    assert.strictEqual((await host.ssh(`systemctl restart ${host.unit}`)).code, 0);
    await host.setJournalAccess('denied-hint');
    const r = await host.ssh(`journalctl -u ${host.unitName} -n 20 --no-pager`);
    assert.deepStrictEqual([r.code, r.stdout, r.stderr], [0, '-- No entries --\n', HINT]);
    const q = await host.ssh(`journalctl -q -u ${host.unit} -a -o cat`);
    assert.deepStrictEqual([q.code, q.stdout, q.stderr], [0, '', ''], '-q: no hint, no "-- No entries --"');

    // a follower started now never gets the unit's lines; one started with access does
    const denied = await follow(`journalctl -u ${host.unit} -f -a -o cat`);
    await waitFor('the hint', async () => denied.err === HINT);
    await host.setJournalAccess('allowed');
    const allowed = await follow(`journalctl -u ${host.unit} -f -a -n 0 -o cat`);
    await untilFollowing(host, () => allowed.out);
    assert.strictEqual((await host.ssh(`systemctl restart ${host.unit}`)).code, 0);
    // both poll the same files as often: once the allowed one has the load's lines, the denied one had its chances
    await waitFor(
      'the allowed follower to see the load',
      async () => /^Started sglang-k26-ddtree[\s\S]*Load weight begin/m.test(allowed.out),
      30000,
    );
    assert.strictEqual(denied.out, '');
    assert.strictEqual(denied.err, HINT);
    assert.strictEqual(denied.proc.exitCode, null, 'the denied journalctl -f keeps running');
    const followers = (await host.nsExec('ps -eo args | grep -c "[j]ournalctl.js -u"')).stdout.trim();
    assert.strictEqual(followers, '2');
  });

  it('journal access "denied-no-files": journalctl fails at once (exit 1, with or without -f); systemctl status warns', async () => {
    const host = h();
    await host.setJournalAccess('denied-no-files');
    for (const cmd of [`journalctl -u ${host.unit} -f -a -n 0 -o cat`, `journalctl -u ${host.unitName} --no-pager`]) {
      const r = await host.ssh(cmd);
      assert.deepStrictEqual([r.code, r.stdout, r.stderr], [1, '', HINT + NO_FILES], cmd);
    }
    const q = await host.ssh(`journalctl -q -u ${host.unit} -f`);
    assert.deepStrictEqual([q.code, q.stdout, q.stderr], [1, '', NO_FILES], '-q drops the hint, not the error');
    const st = await host.ssh(`systemctl status ${host.unit} --no-pager`);
    assert.match(st.stdout, /\n\nWarning: some journal files were not opened due to insufficient permissions\.\n$/);
    assert.ok(!/ gpu-host \S+\[\d+\]: /.test(st.stdout), `no journal lines: ${st.stdout}`);
    await host.setJournalAccess('allowed');
    const ok = await host.ssh(`journalctl -u ${host.unit} -n 1 -o cat`);
    assert.deepStrictEqual([ok.code, ok.stderr], [0, '']);
    assert.notStrictEqual(ok.stdout, '');
  });

  it('slow stop: deactivating/stop-sigterm with the old MainPID; --no-block returns at once; a killed systemctl restart still restarts', async () => {
    const host = h();
    await host.setStopDelay(0);
    // a stop that takes DELAY, under TimeoutStopSec
    const DELAY = 5000;
    await host.writeUnit(host.defaultUnitText.replace(/^TimeoutStopSec=.*$/m, 'TimeoutStopSec=30'));
    assert.strictEqual((await host.ssh(`systemctl restart ${host.unit}`)).code, 0);
    const first = await show();
    assert.strictEqual(first.ActiveState, 'active');
    assert.match(first.InvocationID, /^[0-9a-f]{32}$/);
    assert.strictEqual(first.Job, '');

    // --no-block: the job is queued and begun, systemctl returns without waiting for the stop, which
    // is held until the state below has been read (however slow the machine), then takes DELAY
    await host.setStopDelay(DELAY);
    await host.configureSimulator({ stopHold: true });
    const nb = await host.ssh(`systemctl restart --no-block ${host.unit}`);
    assert.deepStrictEqual([nb.code, nb.stdout, nb.stderr], [0, '', '']);
    const stopping = await show();
    assert.deepStrictEqual(
      [
        stopping.ActiveState,
        stopping.SubState,
        stopping.MainPID,
        stopping.InvocationID,
        stopping.ExecMainStartTimestamp,
      ],
      ['deactivating', 'stop-sigterm', first.MainPID, first.InvocationID, first.ExecMainStartTimestamp],
    );
    assert.match(stopping.Job, /^\d+$/, 'a job is running');
    assert.strictEqual((await host.nsExec(`kill -0 ${first.MainPID} && echo alive`)).stdout.trim(), 'alive');
    await host.configureSimulator({ stopHold: false });
    const second = await activeAgain('the new main process', first.MainPID);
    assert.notStrictEqual(second.InvocationID, first.InvocationID);
    assert.match(second.InvocationID, /^[0-9a-f]{32}$/);
    assert.ok(Number(second.ExecMainStartTimestampMonotonic) > Number(first.ExecMainStartTimestampMonotonic));
    assert.strictEqual(second.Result, 'success');
    await waitFor('the job to end', async () => (await show()).Job === '');
    // systemd's messages, in order; the new process started only after the old one had exited (DELAY later)
    const j = await host.journalEntries();
    const at = (msg: string, from = 0) => j.findIndex((e, i) => i >= from && e.pid === 1 && e.msg.startsWith(msg));
    const stopIdx = j.map((e) => e.msg).lastIndexOf(`Stopping ${host.unit} - SGLang Kimi K2.6 (DDTree)...`);
    const deact = at(`${host.unit}: Deactivated successfully.`, stopIdx);
    const stopped = at(`Stopped ${host.unit}`, stopIdx);
    const started = at(`Started ${host.unit}`, stopIdx);
    assert.ok(
      stopIdx >= 0 && stopIdx < deact && deact < stopped && stopped < started,
      `${stopIdx} ${deact} ${stopped} ${started}`,
    );
    assert.ok((j[started].t - j[stopIdx].t) / 1000 >= DELAY - 200, 'the start waited for the stop');

    // a blocking restart whose client is killed mid-stop: the job goes on, like systemd's (the stop
    // held until that has been seen)
    await host.configureSimulator({ stopHold: true });
    const client = await follow(`systemctl restart ${host.unit}`);
    await waitFor('deactivating', async () => (await show()).ActiveState === 'deactivating', 20000);
    const pid = await waitFor('the systemctl client in exec.log', async () => lastRestartPid().catch(() => undefined));
    assert.strictEqual((await host.nsExec(`kill -KILL ${pid}`)).code, 0);
    client.proc.kill('SIGKILL'); // and the SSH client: the channel closes
    await client.exited;
    const killedAt = Date.now();
    await waitFor('the systemctl client gone', async () => gone(pid));
    assert.strictEqual((await show()).ActiveState, 'deactivating', 'the stop goes on');
    await host.configureSimulator({ stopHold: false });
    const third = await activeAgain('the restart to finish anyway', second.MainPID);
    assert.notStrictEqual(third.InvocationID, second.InvocationID);
    const lastStart = (await host.journalEntries())
      .filter((e) => e.pid === 1 && e.msg.startsWith(`Started ${host.unit}`))
      .pop()!;
    assert.ok(lastStart.t / 1000 > killedAt, 'started after its client was gone');

    // a blocking restart returns once the old process has exited and the new one is forked
    await host.setStopDelay(1500);
    const t1 = Date.now();
    const rb = await host.ssh(`systemctl restart ${host.unit}`);
    const blockedMs = Date.now() - t1;
    assert.strictEqual(rb.code, 0, rb.stderr);
    assert.ok(blockedMs >= 1400, `restart returned after ${blockedMs} ms, before the old process had exited`);
    const fourth = await show();
    assert.deepStrictEqual([fourth.ActiveState, fourth.SubState], ['active', 'running']);
    assert.notStrictEqual(fourth.MainPID, third.MainPID);
    assert.notStrictEqual(fourth.InvocationID, third.InvocationID);

    // TimeoutStopSec=, then SIGKILL (Result=timeout), and the restart still starts the unit
    await host.writeUnit(host.defaultUnitText.replace(/^TimeoutStopSec=.*$/m, 'TimeoutStopSec=1'));
    assert.strictEqual(
      parseShow((await host.ssh(`systemctl show ${host.unit} -p TimeoutStopUSec`)).stdout).TimeoutStopUSec,
      '1s',
    );
    await host.setStopDelay(120000);
    const t2 = Date.now();
    const rk = await host.ssh(`systemctl restart ${host.unit}`);
    assert.strictEqual(rk.code, 0, rk.stderr);
    assert.ok(Date.now() - t2 < 30000);
    const msgs = await host.journal();
    assert.ok(msgs.includes(`${host.unit}: State 'stop-sigterm' timed out. Killing.`));
    assert.ok(msgs.includes(`${host.unit}: Killing process ${fourth.MainPID} (python) with signal SIGKILL.`));
    assert.ok(msgs.includes(`${host.unit}: Main process exited, code=killed, status=9/KILL`));
    assert.ok(msgs.includes(`${host.unit}: Failed with result 'timeout'.`));
    const fifth = await show();
    assert.strictEqual(fifth.ActiveState, 'active');
    assert.notStrictEqual(fifth.MainPID, fourth.MainPID);
    await host.writeUnit(host.defaultUnitText);
    assert.strictEqual(
      parseShow((await host.ssh(`systemctl show ${host.unit} -p TimeoutStopUSec`)).stdout).TimeoutStopUSec,
      '5s',
    );

    // a stop during a restart's stop replaces the restart job: its client reads "canceled", the unit stays down
    // (a stop that takes 4 s, under the unit's TimeoutStopSec=5: on a busy machine the second ssh
    // must still arrive while it lasts)
    await host.setStopDelay(4000);
    const restarting = await follow(`systemctl restart ${host.unit}`);
    await waitFor('deactivating', async () => (await show()).ActiveState === 'deactivating', 20000);
    const st = await host.ssh(`systemctl stop ${host.unit}`);
    assert.strictEqual(st.code, 0, st.stderr);
    assert.strictEqual(await restarting.exited, 1);
    assert.strictEqual(restarting.err, `Job for ${host.unit} canceled.\n`);
    const down = await show();
    assert.deepStrictEqual([down.ActiveState, down.SubState, down.MainPID, down.Job], ['inactive', 'dead', '0', '']);
    await host.setStopDelay(0);
  });

  it("a restart's start shows activating (start) with no MainPID until its main process exists, never inactive", async () => {
    const host = h();
    await host.setStopDelay(0);
    await host.writeUnit(host.defaultUnitText);
    assert.strictEqual((await host.ssh(`systemctl restart ${host.unit}`)).code, 0);
    const first = await show();
    assert.strictEqual(first.ActiveState, 'active');
    const runtimeFile = path.join(host.stateDir, 'units', `${host.unit}.json`);
    const runtime = () => JSON.parse(fs.readFileSync(runtimeFile, 'utf8')) as { supervisorPid?: number };
    const oldSupervisor = runtime().supervisorPid;
    assert.ok(oldSupervisor, 'the running unit has its supervisor');
    // The unit's EnvironmentFile= is a FIFO: the new run's supervisor (PID 1's side of the start)
    // waits on it after it took the unit over and before it forks the main process, until written.
    const gate = path.join(host.fixtureDir, 'start-gate.env');
    assert.strictEqual(spawnSync('mkfifo', [gate]).status, 0, 'mkfifo');
    try {
      await host.writeUnit(
        host.defaultUnitText.replace(/^TimeoutStopSec=.*$/m, (line) => `${line}\nEnvironmentFile=${gate}`),
      );
      assert.strictEqual((await host.ssh(`systemctl restart --no-block ${host.unit}`)).code, 0);
      await waitFor('the new run taken over by its supervisor', async () => {
        const pid = runtime().supervisorPid;
        return pid !== undefined && pid !== 0 && pid !== oldSupervisor;
      });
      const between = await show();
      assert.deepStrictEqual(
        [between.ActiveState, between.SubState, between.MainPID, between.InvocationID],
        ['activating', 'start', '0', first.InvocationID],
        'systemd never shows a restart as inactive between its stop and its new main process',
      );
      await fs.promises.writeFile(gate, 'START_GATE=open\n');
      const next = await waitFor('the new main process', async () => {
        const p = await show();
        return p.ActiveState === 'active' && p.MainPID !== first.MainPID ? p : undefined;
      });
      assert.notStrictEqual(next.InvocationID, first.InvocationID);
    } finally {
      // A supervisor still waiting on the gate is let go (no reader: nothing waits for one).
      try {
        const fd = fs.openSync(gate, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
        fs.writeSync(fd, 'START_GATE=open\n');
        fs.closeSync(fd);
      } catch {
        /* no reader */
      }
      await host.writeUnit(host.defaultUnitText);
      fs.rmSync(gate, { force: true });
    }
  });

  it('--api-key in ExecStart: 401 {"error":"Unauthorized"} without the Bearer key, 200 with it, /health open', async () => {
    const host = h();
    const KEY = 'sk-kimi-sim-5f0c7a3e';
    await host.writeUnit(
      host.defaultUnitText.replace(`--port ${host.httpPort}`, `--port ${host.httpPort} --api-key ${KEY}`),
    );
    const t0 = Date.now();
    assert.strictEqual((await host.ssh(`systemctl restart ${host.unit}`)).code, 0);
    // the warm-up requests of the server itself carry the key: it gets ready
    await waitFor(
      'fired up',
      async () => {
        const t = await host.firedUpAt();
        return t !== undefined && t >= t0 - 1000;
      },
      120000,
    );
    const url = host.serverUrl;
    const no = await httpRequest(`${url}/v1/models`);
    assert.deepStrictEqual([no.status, no.body, no.contentType], [401, '{"error":"Unauthorized"}', 'application/json']);
    assert.strictEqual(
      (await httpRequest(`${url}/v1/models`, { headers: { authorization: 'Bearer nope' } })).status,
      401,
    );
    assert.strictEqual(
      (await httpRequest(`${url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).status,
      200,
    );
    const chat = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 };
    assert.strictEqual((await httpRequest(`${url}/v1/chat/completions`, { body: chat })).status, 401);
    const ok = await httpRequest(`${url}/v1/chat/completions`, {
      body: chat,
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.strictEqual(ok.status, 200, ok.body);
    assert.ok(JSON.parse(ok.body).choices.length === 1);
    for (const open of ['/health', '/health_generate']) {
      const r = await httpRequest(`${url}${open}`);
      assert.strictEqual(r.status, 200, `${open} needs no key`);
    }
    assert.ok((await host.journal()).some((l) => /"GET \/v1\/models HTTP\/1\.1" 401 Unauthorized/.test(l)));
    await host.writeUnit(host.defaultUnitText);
  });

  it('TCP forwarding denied: direct-tcpip is "administratively prohibited", exec still works (and curl is there)', async () => {
    const host = h();
    await host.setTcpForwarding(false);
    const c = await ssh2Connect(host);
    try {
      const err = await tryForward(c, host.sshPort);
      assert.ok(err, 'forwardOut refused');
      // OpenSSH answers SSH2_OPEN_ADMINISTRATIVELY_PROHIBITED (1) with the text "open failed"
      // (its ssh client prints "administratively prohibited: open failed")
      assert.strictEqual(err.reason, 1, err.message);
      assert.strictEqual(err.message, '(SSH) Channel open failure: open failed');
      const e = await ssh2Exec(c, 'echo ok');
      assert.deepStrictEqual(e, { code: 0, out: 'ok\n' });
      // the host's own curl reaches the server (the extension's fallback), when this machine has curl
      const hasCurl = (await ssh2Exec(c, 'command -v curl')).code === 0;
      if (hasCurl) {
        const cr = await ssh2Exec(c, `curl -s -o /dev/null -w '%{http_code}' ${host.serverUrl}/health`);
        assert.match(cr.out, /^(200|503)$/);
      }
    } finally {
      c.end();
    }
    await host.setTcpForwarding(true);
    const c2 = await ssh2Connect(host);
    try {
      assert.strictEqual(await tryForward(c2, host.sshPort), undefined, 'allowed again for new connections');
    } finally {
      c2.end();
    }
    assert.ok(host.sshdRunning());
  });
});
