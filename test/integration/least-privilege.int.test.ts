/**
 * Least privilege, for real: the simulated host's unprivileged login `kimi`, Debian's
 * real sudo, and exactly the sudoers lines `sudoersRules('kimi', unit)` generates (the ones
 * "Kimi Service: Copy sudoers rule" copies). As kimi with `sudo: true`: restart, enable the parsers
 * (drop-in writes through `sudo -n tee`), roll back; without the rule, a refusal that names the
 * command; outside `systemd-journal`, a watch that still reaches ready and says the journal is
 * not readable.
 */
import { forFront } from '../../src/present/hints';
import { shellLine } from '../../src/transport/shell';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { LocalTransport } from '../../src/transport/local/localTransport';
import {
  enableParsers,
  rollback,
  DROP_IN_NAME,
  ParserChangeError,
  type ParserChangeDeps,
} from '../../src/target/systemd/parserDropIn';
import { dropInLocation, sudoersRules } from '../../src/target/systemd/sudoers';
import { parseShow } from '../../src/target/systemd/systemd';
import { FAST_WATCH, loginAs, sessionForHost, type TestSession } from './simHost';
import { disposed } from '../util/disposed';

const USER = 'kimi';

describe('least privilege: kimi through the generated sudoers rules and the real sudo', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  const lines: string[] = [];

  const asKimi = (sudo = true): Promise<TestSession> => sessionForHost(host, { server: loginAs(host, USER, sudo) });
  const deps = (t: TestSession): ParserChangeDeps => ({
    sudo: t.session.profile.sudo,
    host: t.session.profile.host,
    exec: (command, options) =>
      t.session.transport.exec(shellLine(command), {
        timeoutMs: 30_000,
        ...(options?.stdin !== undefined ? { stdin: options.stdin } : {}),
      }),
    log: (line) => lines.push(line),
    confirmDiff: async () => true,
  });
  /** The unit as root sees it (no sudo involved). */
  const unitNow = async (): Promise<Record<string, string>> =>
    parseShow((await host.nsExec(`systemctl show -p MainPID,InvocationID,ActiveState ${host.unit}`)).stdout);
  const restartLines = async (): Promise<number> =>
    (await host.execLog()).filter((l) => / systemctl restart /.test(l)).length;
  const parsersOfServer = async (t: TestSession): Promise<{ reasoning: unknown; toolCall: unknown }> => {
    const info = await t.session.client.serverInfo();
    assert.ok(info.ok, JSON.stringify(info));
    const i = info.info as Record<string, unknown>;
    return { reasoning: i.reasoning_parser, toolCall: i.tool_call_parser };
  };

  before(async () => {
    host = await startGpuHost({ shards: 6, shardBytes: 1024 * 1024, users: [USER] });
    await host.addToGroup(USER, 'systemd-journal');
    await host.installSudoers(sudoersRules(USER, host.unit));
  });
  afterEach(() => (test = disposed(test)));
  after(() => host?.stop());

  it('the generated rules are all kimi may run as root; the rest is refused, and nothing works without sudo', async () => {
    const where = dropInLocation(host.unit);
    const listed = await host.ssh('sudo -n -l', { user: USER });
    assert.equal(listed.code, 0, listed.stderr);
    const allowed = /^\s*\(root\) NOPASSWD: (.*)$/m.exec(listed.stdout)?.[1].split(', ');
    assert.deepEqual(allowed, [
      `/usr/bin/systemctl restart --no-block -- ${host.unit}`,
      '/usr/bin/systemctl daemon-reload',
      `/usr/bin/mkdir -p -- ${where.dir}`,
      `/usr/bin/tee -- ${where.file}`,
      `/usr/bin/tee -- ${where.backup}`,
      `/usr/bin/rm -f -- ${where.file}`,
    ]);
    for (const command of [
      `sudo -n systemctl stop ${host.unit}`,
      `sudo -n systemctl restart ${host.unit}`,
      'sudo -n sh -c true',
      'echo x | sudo -n tee -- /etc/passwd',
      `echo x | sudo -n tee -a -- ${where.file}`,
      `sudo -n rm -f -- ${host.unitFilePath.replace(host.fixtureDir + '/etc', '/etc')}`,
    ]) {
      const r = await host.ssh(command, { user: USER });
      assert.equal(r.code, 1, `${command}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /sudo: a password is required/, command);
    }
    const plain = await host.ssh(
      `systemctl restart ${host.unit}; echo "rc=$?"; systemctl daemon-reload; echo "rc=$?"; echo x > ${where.file}`,
      { user: USER },
    );
    assert.match(plain.stderr, new RegExp(`Failed to restart ${host.unit.replace(/\./g, '\\.')}: Access denied`));
    assert.match(plain.stdout, /rc=4\nrc=1/);
    assert.match(plain.stderr, /Failed to reload daemon: Access denied/);
    assert.match(plain.stderr, /(Permission denied|Directory nonexistent|No such file)/);
    // the unit's state is readable by kimi, and not writable
    const state = path.join(host.stateDir, 'units', `${host.unit}.json`);
    const w = await host.ssh(`systemctl show -p LoadState ${host.unit}; echo '{}' > ${state}`, { user: USER });
    assert.match(w.stdout, /^LoadState=loaded$/m);
    assert.match(w.stderr, /Permission denied/);
  });

  it('Transport.exec feeds stdin, then end of file (SSH as kimi, and the local transport)', async () => {
    test = await asKimi();
    const text = 'line 1\nit\'s "quoted" $HOME `x`\n\u00e9\u4e2d\n';
    const r = await test.session.transport.exec('cat; echo "[rc=$?]"', { stdin: text, timeoutMs: 10_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${text}[rc=0]\n`);
    const local = new LocalTransport();
    try {
      assert.equal((await local.exec('cat', { stdin: text })).stdout, text);
      assert.equal((await local.exec('cat')).stdout, '', 'without the option: nothing to read, as before');
    } finally {
      local.dispose();
    }
  });

  it('restart as kimi with sudo: true reaches ready, through the exact restart rule', async () => {
    test = await asKimi();
    const before = await unitNow();
    const restarts = await restartLines();
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', outcome.message);
    assert.equal(outcome.state.journal?.readable, true, 'kimi is in systemd-journal');
    const after = await unitNow();
    assert.notEqual(after.InvocationID, before.InvocationID);
    assert.notEqual(after.MainPID, '0');
    const log = (await host.execLog()).filter((l) => / systemctl restart /.test(l));
    assert.equal(log.length, restarts + 1, 'one restart');
    assert.match(
      log[log.length - 1],
      new RegExp(` systemctl restart --no-block -- ${host.unit.replace(/\./g, '\\.')}$`),
    );
  });

  it('enable parsers as kimi: drop-in written as root through sudo tee, reload, restart, ready with the parsers; roll back restores', async () => {
    test = await asKimi();
    const where = dropInLocation(host.unit);
    const onDisk = (p: string) => path.join(host.fixtureDir, p); // /etc/systemd/system is the fixture's, bind-mounted
    const first = await enableParsers(deps(test), host.unitName, {
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(first.kind, 'changed');
    if (first.kind !== 'changed') return;
    const firstText = (await host.readDropIns())[DROP_IN_NAME];
    assert.match(firstText, /--tool-call-parser kimi_k2/);
    assert.match(firstText, /--reasoning-parser kimi_k2/);
    const st = fs.statSync(onDisk(where.file));
    assert.equal(st.uid, 0, 'written by root (sudo tee)');
    assert.equal(st.mode & 0o777, 0o644);
    assert.equal(first.rollback.createdDir, true);
    assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');
    assert.deepEqual(await parsersOfServer(test), { reasoning: 'kimi_k2', toolCall: 'kimi_k2' });

    // A second change keeps the first drop-in as the backup, and its roll-back writes it back.
    const second = await enableParsers(deps(test), host.unitName, {
      reasoningParser: 'deepseek-r1',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(second.kind, 'changed');
    if (second.kind !== 'changed') return;
    assert.equal(second.rollback.backupPath, where.backup);
    assert.equal(fs.readFileSync(onDisk(where.backup), 'utf8'), firstText);
    assert.match((await host.readDropIns())[DROP_IN_NAME], /--reasoning-parser deepseek-r1/);
    await rollback(deps(test), second.rollback);
    assert.equal((await host.readDropIns())[DROP_IN_NAME], firstText, 'the previous drop-in is back, byte for byte');
    assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');
    assert.deepEqual(await parsersOfServer(test), { reasoning: 'kimi_k2', toolCall: 'kimi_k2' });

    // Rolling back the first change removes the drop-in (sudo rm -f): the unit runs as before.
    await rollback(deps(test), first.rollback);
    assert.deepEqual(await host.readDropIns(), {});
    assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');
    assert.deepEqual(await parsersOfServer(test), { reasoning: null, toolCall: null });
  });

  it('without the rule: the restart is refused with the command and where the rules go, and nothing changed', async () => {
    await host.removeSudoers();
    try {
      test = await asKimi();
      const before = await unitNow();
      const restarts = await restartLines();
      const dropIns = await host.readDropIns();
      const outcome = await test.session.watch('restart', FAST_WATCH);
      assert.equal(outcome.end, 'failed');
      // The palette command in VS Code's words (the core marks the hint).
      const message = forFront(outcome.message ?? '', 'vscode');
      assert.match(
        message,
        /^sudo asks for a password on 127\.0\.0\.1: allow "systemctl restart sglang-k26-ddtree\.service" without a password\./,
      );
      assert.match(message, /Refused: sudo -n systemctl restart --no-block -- sglang-k26-ddtree\.service\./);
      assert.match(message, /"Kimi Service: Copy sudoers rule"/);
      assert.match(message, /sudo visudo -f \/etc\/sudoers\.d\/kimi-sglang-k26-ddtree/);
      assert.deepEqual(await unitNow(), before, 'same run, same process');
      assert.equal(await restartLines(), restarts, 'systemctl restart never ran');

      // The parser flow: refused at its first privileged step, which it names; nothing written.
      await assert.rejects(
        enableParsers(deps(test), host.unitName, { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' }),
        (e: Error) => {
          assert.ok(e instanceof ParserChangeError && e.sudoRefused, e.message);
          assert.match(
            e.message,
            /Refused: sudo -n (mkdir -p|tee) -- \/etc\/systemd\/system\/sglang-k26-ddtree\.service\.d/,
          );
          assert.match(forFront(e.message, 'vscode'), /"Kimi Service: Copy sudoers rule"/);
          return true;
        },
      );
      assert.deepEqual(await host.readDropIns(), dropIns);
      assert.deepEqual(await unitNow(), before);
    } finally {
      await host.installSudoers(sudoersRules(USER, host.unit));
    }
  });

  it('as kimi with sudo: false: the restart says Access denied and how to allow it', async () => {
    test = await asKimi(false);
    const before = await unitNow();
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'failed');
    assert.match(
      forFront(outcome.message ?? '', 'vscode'),
      /^Not allowed to restart sglang-k26-ddtree\.service: Failed to restart sglang-k26-ddtree\.service: Access denied \(systemctl restart --no-block -- sglang-k26-ddtree\.service\)\. Set "sudo": true .*"Kimi Service: Copy sudoers rule"/,
    );
    assert.deepEqual(await unitNow(), before);
  });

  it('as kimi outside systemd-journal: ready from HTTP and systemctl show, and the journal is said not readable', async () => {
    await host.removeFromGroup(USER, 'systemd-journal');
    try {
      const groups = await host.ssh('id -Gn', { user: USER });
      assert.ok(!/\bsystemd-journal\b/.test(groups.stdout), groups.stdout);
      test = await asKimi();
      const outcome = await test.session.watch('restart', FAST_WATCH);
      assert.equal(outcome.end, 'ready', outcome.message);
      assert.equal(outcome.state.journal?.readable, false);
      assert.match(outcome.state.journal?.detail ?? '', /systemd-journal/);
    } finally {
      await host.addToGroup(USER, 'systemd-journal');
    }
  });
});
