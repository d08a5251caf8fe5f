/**
 * Target conformance (the checklist of docs/backends.md): the same behavioural tests
 * for every target kind, on one simulated GPU host (real sshd, the systemd stand-in, a real
 * dockerd in the host's namespaces, a real Slurm cluster whose login node it is), each operation run as the host's unprivileged login `kimi`
 * through a real SSH connection: restart, readState, followLog, tailLog, argument edits with
 * their roll back, and the refusals (sudo, permission, a missing service). Root only arranges
 * the host (starts and stops what the kind runs, as an administrator would). A new kind is added
 * to KINDS with how the host runs it; it is done when it passes.
 */
import { forFront } from '../../src/present/hints';
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { CONTAINER_MODEL_DIR, dockerMissing, startDockerEngine, type DockerEngine } from '../gpu-host/docker';
import { slurmMissing, startSlurm, type SlurmCluster } from '../gpu-host/slurm';
import { loginAs, sessionForHost, type TestSession } from '../integration/simHost';
import { waitFor } from '../util/waitFor';
import {
  enableParsersOn,
  rollbackParsersOn,
  sudoersRules,
  targetFor,
  targetIo,
  TargetError,
  type ArgsChangeUi,
  type ArgsEditKind,
  type LogEntry,
  type Target,
  type TargetIo,
  type TargetState,
} from './targetSurface';

const USER = 'kimi';
/** The simulated host's unit (startGpuHost's default name). */
const UNIT = 'sglang-k26-ddtree.service';
const U = UNIT.replace(/\./g, '\\.');
const READY = 'The server is fired up and ready to roll!';
const CHOICE = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };
const FLAGS = ['--tool-call-parser', 'kimi_k2', '--reasoning-parser', 'kimi_k2'];
/** Long enough for a noisy 2-core machine; a condition, not a sleep. */
const SLOW = { timeoutMs: 90_000, intervalMs: 200 };

type Refusal = {
  readonly what: string;
  /** Server fields of the login that is refused. */
  readonly server: Record<string, unknown>;
  arrange?(): Promise<void>;
  undo?(): Promise<void>;
  readonly kind: TargetError['kind'];
  readonly message: RegExp;
};

/** Every Target['kind']: a kind added to target.ts fails the typecheck until it is named here and in KINDS. */
const COVERED = { systemd: true, container: true, compose: true, slurm: true } as const satisfies Record<
  Target['kind'],
  true
>;

interface Kind {
  readonly title: string;
  readonly kind: Target['kind'];
  readonly argsEdit: ArgsEditKind;
  readonly logFollowEndsWithService: boolean;
  /** A restart keeps the PID the host sees (a requeued job keeps its id): the run's invocation id tells the new run. */
  readonly restartKeepsPid?: boolean;
  readonly label: RegExp;
  /** The settings entry's fields that name it, and whether kimi reaches it through sudo. */
  readonly server: Record<string, unknown>;
  readonly sudo: boolean;
  /** As root: creates it, running. */
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** The server process's PID as root sees it on the host (0: none). */
  pid(): Promise<number>;
  /** As root, from outside the extension. */
  stop(): Promise<void>;
  start(): Promise<void>;
  readonly missing?: {
    readonly server: Record<string, unknown>;
    readonly restart: RegExp;
    arrange?(): Promise<void>;
    undo?(): Promise<void>;
  };
  readonly refusals: readonly Refusal[];
}

describe('target conformance: every target kind, the same tests, as the unprivileged login', function () {
  this.timeout(300_000);
  let host: GpuHost;
  let docker: DockerEngine;
  let composeDir: string;
  let slurm: SlurmCluster | undefined;

  before(async () => {
    const missing = dockerMissing();
    if (missing) throw new Error(`Docker is needed for these tests: ${missing}`);
    const noSlurm = slurmMissing();
    if (noSlurm) throw new Error(`Slurm is needed for these tests: ${noSlurm}`);
    host = await startGpuHost({
      users: [USER],
      shards: 4,
      shardBytes: 1024 * 1024,
      sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3 },
    });
    assert.equal(host.unit, UNIT);
    docker = await startDockerEngine(host);
    await host.addToGroup(USER, 'systemd-journal');
    await host.addToGroup(USER, 'docker');
    await unitRules();
    // kimi edits the compose file (no sudo): a folder of its own, as a user's checkout would be.
    composeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-conformance-compose-'));
    const id = (flag: string) => Number(spawnSync('id', [flag, USER], { encoding: 'utf8' }).stdout.trim());
    fs.chownSync(composeDir, id('-u'), id('-g'));
    fs.chmodSync(composeDir, 0o755);
  });
  after(async () => {
    await slurm?.stop();
    await docker?.stop();
    await host?.stop();
    if (composeDir) fs.rmSync(composeDir, { recursive: true, force: true });
  });

  const root = async (command: string): Promise<string> => {
    const r = await host.nsExec(command);
    assert.equal(r.code, 0, `${command}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const unitPid = async (): Promise<number> =>
    Number(/^MainPID=(\d+)$/m.exec(await root(`systemctl show -p MainPID ${host.unit}`))?.[1] ?? 0);
  const unitWith = async (execStart: string | undefined): Promise<void> =>
    host.writeUnit(
      execStart === undefined
        ? host.defaultUnitText
        : host.defaultUnitText.replace(/^ExecStart=.*(?:\\\n.*)*$/m, `ExecStart=${execStart}`),
    );
  const unitRules = (): Promise<void> => host.installSudoers(sudoersRules(USER, host.unit), 'kimi-unit');
  /** What a unit that runs docker needs besides its own rules: `sudo -n docker inspect` (docs/docker.md). */
  const dockerRule = (): Promise<void> =>
    host.installSudoers(`${USER} ALL=(root) NOPASSWD: /usr/bin/docker, /usr/local/bin/docker\n`, 'kimi-docker');
  const sudoRules = (withDocker: boolean): Refusal[] => [
    {
      what: 'sudo without a rule for the command',
      server: { sudo: true },
      arrange: () => host.removeSudoers(),
      undo: async () => {
        await unitRules();
        if (withDocker) await dockerRule();
      },
      kind: 'sudo-refused',
      message: new RegExp(
        `^sudo asks for a password on 127\\.0\\.0\\.1: allow "systemctl restart ${U}" without a password\\. Refused: sudo -n systemctl restart --no-block -- ${U}\\. "Kimi Service: Copy sudoers rule" .*sudo visudo -f /etc/sudoers\\.d/kimi-sglang-k26-ddtree`,
      ),
    },
    {
      what: 'no sudo, and the manager refuses the login (polkit)',
      server: { sudo: false },
      kind: 'access-denied',
      message: new RegExp(
        `^Not allowed to restart ${U}: Failed to restart ${U}: Access denied \\(systemctl restart --no-block -- ${U}\\)\\. Set "sudo": true .*"Kimi Service: Copy sudoers rule"`,
      ),
    },
  ];
  const dockerRules = (restart: string): Refusal[] => [
    {
      what: 'outside the docker group',
      server: { sudo: false },
      arrange: () => host.removeFromGroup(USER, 'docker'),
      undo: () => host.addToGroup(USER, 'docker'),
      kind: 'access-denied',
      message: /may not use Docker .*docker group/,
    },
    {
      what: 'sudo without a rule for docker',
      server: { sudo: true },
      kind: 'sudo-refused',
      message: new RegExp(`^${restart} failed: sudo refused docker on .*a password is required`),
    },
  ];
  const containerRun = (name: string, extra: readonly string[] = []): string =>
    [...docker.simRunArgs(name, extra), ...docker.simCommand()].join(' ');
  const composeFile = (): string => path.join(composeDir, 'docker-compose.yml');
  const JOB = 'conf-sg';
  const cluster = (): SlurmCluster => slurm ?? assert.fail('the Slurm cluster is not running');
  const jobDir = (): string => path.join(cluster().dir, 'jobs', JOB);
  const jobScript = (): string => path.join(jobDir(), 'serve.sbatch');
  /** The running job's id as root's squeue sees it (0: none runs). */
  const jobPid = async (): Promise<number> =>
    Number(cluster().run(['squeue', '-h', '-n', JOB, '-t', 'RUNNING', '-o', '%i']).stdout.trim().split('\n')[0]) || 0;
  /** sbatch as the login user, through its SSH login, as the user would. */
  const submitJob = async (): Promise<void> => {
    const r = await host.ssh(`cd '${jobDir()}' && sbatch --parsable -J ${JOB} serve.sbatch`, { user: USER });
    assert.equal(r.code, 0, `sbatch: ${r.stderr}${r.stdout}`);
  };

  const KINDS: Kind[] = [
    {
      title: 'a systemd unit',
      kind: 'systemd',
      argsEdit: 'systemd-drop-in',
      logFollowEndsWithService: false,
      label: /^sglang-k26-ddtree\.service$/,
      server: {},
      sudo: true,
      setUp: () => root(`systemctl start ${host.unit}`).then(() => undefined),
      tearDown: () => root(`systemctl stop ${host.unit}`).then(() => undefined),
      pid: unitPid,
      stop: () => root(`systemctl stop ${host.unit}`).then(() => undefined),
      start: () => root(`systemctl start ${host.unit}`).then(() => undefined),
      missing: {
        // The rules for it are installed (the unit was removed after): systemctl itself answers.
        server: { unit: 'sglang-none' },
        restart: /sglang-none\.service.*not (found|loaded)/i,
        arrange: () => host.installSudoers(sudoersRules(USER, 'sglang-none.service'), 'kimi-none'),
        undo: async () => {
          await host.removeSudoers();
          await unitRules();
        },
      },
      refusals: sudoRules(false),
    },
    {
      title: 'a docker container',
      kind: 'container',
      argsEdit: 'by-hand',
      logFollowEndsWithService: true,
      label: /^container conf-sg$/,
      server: { unit: undefined, container: 'conf-sg' },
      sudo: false,
      setUp: () => docker.docker(`run -d ${containerRun('conf-sg')}`).then((r) => assert.equal(r.code, 0, r.stderr)),
      tearDown: () => docker.docker('rm -f conf-sg').then(() => undefined),
      pid: () => docker.containerPid('conf-sg'),
      stop: () => docker.docker('stop conf-sg').then((r) => assert.equal(r.code, 0, r.stderr)),
      start: () => docker.docker('start conf-sg').then((r) => assert.equal(r.code, 0, r.stderr)),
      missing: { server: { unit: undefined, container: 'conf-none' }, restart: /No such container: conf-none/ },
      refusals: dockerRules('docker restart conf-sg'),
    },
    {
      title: 'a compose service',
      kind: 'compose',
      argsEdit: 'compose-file',
      logFollowEndsWithService: true,
      label: /^compose service sglang$/,
      get server() {
        return { unit: undefined, compose: { file: composeFile(), service: 'sglang' } };
      },
      sudo: false,
      async setUp() {
        const file = composeFile();
        fs.writeFileSync(
          file,
          [
            '# the SGLang server',
            'services:',
            '  sglang:',
            `    image: ${docker.image}`,
            '    network_mode: host',
            '    volumes:',
            `      - ${host.modelPath}:${CONTAINER_MODEL_DIR}:ro`,
            `      - ${host.stateDir}:${host.stateDir}`,
            '    environment:',
            `      KIMI_SIM_ROOT: ${host.stateDir}`,
            `    command: ${JSON.stringify(docker.simCommand())}`,
            '',
          ].join('\n'),
        );
        const { uid, gid } = fs.statSync(composeDir);
        fs.chownSync(file, uid, gid);
        await root(`docker-compose -f ${file} up -d 2>&1`);
      },
      tearDown: () => root(`docker-compose -f ${composeFile()} down 2>&1`).then(() => undefined),
      // By compose's label (docker itself): docker-compose v1 takes seconds a call on a busy machine.
      pid: async () => {
        const id = (await root('docker ps -q --filter label=com.docker.compose.service=sglang')).trim();
        return id ? docker.containerPid(id) : 0;
      },
      stop: () => root(`docker-compose -f ${composeFile()} stop sglang 2>&1`).then(() => undefined),
      start: () => root(`docker-compose -f ${composeFile()} start sglang 2>&1`).then(() => undefined),
      missing: {
        server: { unit: undefined, compose: { file: '/srv/kimi-conformance/missing.yml', service: 'sglang' } },
        restart: /missing\.yml/,
      },
      refusals: dockerRules('docker compose restart sglang'),
    },
    {
      title: 'a unit whose ExecStart runs docker run',
      kind: 'systemd',
      argsEdit: 'systemd-drop-in',
      logFollowEndsWithService: false,
      label: /^sglang-k26-ddtree\.service$/,
      server: {},
      sudo: true,
      async setUp() {
        await dockerRule();
        await unitWith(`/usr/bin/docker run ${containerRun('conf-unit', ['--rm'])}`);
        await root(`systemctl start ${host.unit}`);
      },
      async tearDown() {
        await root(`systemctl stop ${host.unit}`);
        await unitWith(undefined);
        await host.removeSudoers();
        await unitRules();
      },
      pid: () => docker.containerPid('conf-unit'),
      stop: () => root(`systemctl stop ${host.unit}`).then(() => undefined),
      start: () => root(`systemctl start ${host.unit}`).then(() => undefined),
      refusals: sudoRules(true),
    },
    {
      title: 'a Slurm batch job (the host is its login node)',
      kind: 'slurm',
      argsEdit: 'batch-script',
      logFollowEndsWithService: true,
      restartKeepsPid: true,
      label: /^Slurm job conf-sg$/,
      get server() {
        return { unit: undefined, slurm: { job: JOB, script: jobScript() } };
      },
      sudo: false,
      async setUp() {
        slurm = await startSlurm(host);
        const dir = cluster().userDir(USER, JOB);
        const simDir = path.join(dir, 'sim');
        fs.mkdirSync(simDir);
        // The simulator reads sim.json at its start: the host's (configureSimulator), copied into a folder the job may write.
        fs.writeFileSync(
          jobScript(),
          [
            '#!/bin/sh',
            `#SBATCH --output=${dir}/%x-%j.out`,
            '#SBATCH --time=30',
            `cp ${host.stateDir}/sim.json ${simDir}/sim.json`,
            `export KIMI_SIM_ROOT=${simDir}`,
            `exec ${path.join(host.fixtureDir, 'opt', 'sglang', 'bin', 'python')} -m sglang.launch_server \\`,
            `  --model-path ${host.modelPath} --tp 8 --host 127.0.0.1 --port ${host.httpPort}`,
            '',
          ].join('\n'),
          { mode: 0o755 },
        );
        const own = cluster().run(['chown', '-R', `${USER}:`, dir]);
        assert.equal(own.status, 0, own.stderr);
        await submitJob();
      },
      async tearDown() {
        await slurm?.stop();
        slurm = undefined;
      },
      pid: jobPid,
      stop: async () => {
        const r = cluster().run(['scancel', '-n', JOB]);
        assert.equal(r.status, 0, r.stderr);
      },
      start: submitJob,
      missing: {
        server: { unit: undefined, slurm: { job: 'conf-none', script: '/srv/kimi-conformance/missing.sbatch' } },
        restart: /missing\.sbatch/,
      },
      // No privilege of Kimi's: the login user's own jobs (docs/slurm.md); nothing for sudo or a group to refuse.
      refusals: [],
    },
  ];

  it('every kind of Target covered: a kind added to target.ts without an entry in KINDS fails', () => {
    assert.deepEqual([...new Set(KINDS.map((k) => k.kind))].sort(), Object.keys(COVERED).sort());
  });

  for (const spec of KINDS) {
    describe(spec.title, () => {
      let test: TestSession;
      let target: Target;
      let io: TargetIo;
      const others: TestSession[] = [];

      const sessionAs = async (server: Record<string, unknown>): Promise<TestSession> => {
        const t = await sessionForHost(host, {
          server: { ...loginAs(host, USER, spec.sudo), ...spec.server, ...server },
        });
        await t.session.transport.connect();
        return t;
      };
      const state = (): Promise<TargetState> => target.readState(io);
      /** Active, with the PID the host sees (and not the run of `previous`): the state of a running server. */
      const running = async (previous?: TargetState): Promise<TargetState> => {
        const isNew = (s: TargetState): boolean =>
          previous === undefined ||
          (spec.restartKeepsPid
            ? s.unit.invocationId !== previous.unit.invocationId
            : s.unit.mainPid !== previous.unit.mainPid);
        let seen = '';
        try {
          return await waitFor(
            async () => {
              const s = await state();
              const pid = await spec.pid();
              seen = `${s.unit.activeState}/${s.unit.subState} pid ${s.unit.mainPid}, the host's ${pid}${s.note ? `; ${s.note}` : ''}`;
              return s.unit.activeState === 'active' && pid > 0 && s.unit.mainPid === pid && isNew(s) ? s : undefined;
            },
            { ...SLOW, message: `${spec.title} running with the host's PID` },
          );
        } catch (error) {
          throw new Error(`${(error as Error).message}; last seen: ${seen}`);
        }
      };
      const follow = async (since: number) => {
        const entries: LogEntry[] = [];
        const stderr: string[] = [];
        const process = await target.followLog(io, since, {
          onEntry: (e) => void entries.push(e),
          onStderr: (l) => void stderr.push(l),
        });
        let ended: number | null | undefined;
        void process.exited.then((code) => {
          ended = code;
        });
        return { entries, stderr, process, ended: () => ended };
      };
      const readyLines = (entries: readonly LogEntry[]) => entries.filter((e) => e.message.includes(READY));

      before(async () => {
        await spec.setUp();
        test = await sessionAs({});
        target = targetFor(test.session.profile);
        io = targetIo(test.session.transport, 60_000);
        // Up (whatever PID it reports: that is the first test's to judge).
        await waitFor(async () => {
          const s = await state();
          return s.unit.activeState === 'active' && s.unit.mainPid > 0;
        }, SLOW);
      });
      afterEach(() => {
        for (const t of others.splice(0)) t.dispose();
      });
      after(async () => {
        test?.dispose();
        await host.configureSimulator({ fault: {}, crashExit: null });
        await spec.tearDown();
      });

      it(`is a ${spec.kind} target: its label, how its log follow ends, how its arguments are edited`, () => {
        assert.equal(target.kind, spec.kind);
        assert.match(target.label, spec.label);
        assert.equal(target.logFollowEndsWithService, spec.logFollowEndsWithService);
        assert.equal(target.argsEdit.how, spec.argsEdit);
      });

      it("readState: active, the PID the host sees, the engine's command line, the model path on the host", async () => {
        const s = await running();
        assert.equal(s.unit.subState, 'running');
        const modelPath = s.argv[s.argv.indexOf('--model-path') + 1];
        assert.ok(s.argv.includes('sglang.launch_server') && modelPath, s.argv.join(' '));
        assert.equal(s.hostPath(modelPath!), host.modelPath);
      });

      it('restart: taken by the manager, then a new process runs (new PID, new invocation)', async () => {
        const before = await running();
        const restarted = await target.restart(io);
        assert.deepEqual(restarted, { ok: true });
        const after = await running(before);
        if (!spec.restartKeepsPid) assert.notEqual(after.unit.mainPid, before.unit.mainPid);
        if (before.unit.invocationId !== undefined) assert.notEqual(after.unit.invocationId, before.unit.invocationId);
      });

      it('readState of a crash: failed, its exit status, no PID; a restart brings it back', async () => {
        await host.configureSimulator({ fault: { crashAt: 'init', exitCode: 3 } });
        try {
          assert.deepEqual(await target.restart(io), { ok: true });
          const failed = await waitFor(
            async () => {
              const s = await state();
              return s.unit.activeState === 'failed' ? s : undefined;
            },
            { ...SLOW, message: 'the crash read as failed' },
          );
          assert.equal(failed.unit.mainPid, 0);
          assert.equal(failed.unit.execMainStatus, 3, JSON.stringify(failed.unit));
        } finally {
          await host.configureSimulator({ fault: {} });
        }
        assert.deepEqual(await target.restart(io), { ok: true });
        await running();
      });

      it(`followLog: the new run's lines arrive as they are written; the follow ${spec.logFollowEndsWithService ? 'ends when the service stops' : 'outlives a stop and sees the next start'}`, async () => {
        const before = await running();
        const since = Date.now() - 1000;
        assert.deepEqual(await target.restart(io), { ok: true });
        await running(before);
        const f = await follow(since);
        try {
          const ready = await waitFor(() => readyLines(f.entries)[0], { ...SLOW, message: 'the ready line followed' });
          assert.ok(ready.at >= since - 2000 && ready.at <= Date.now() + 2000, `at ${ready.at}, since ${since}`);
          assert.ok(!f.entries.some((e) => e.at < since - 2000), 'nothing of before the restart');
          await spec.stop();
          if (spec.logFollowEndsWithService) {
            await waitFor(() => f.ended() !== undefined, { ...SLOW, message: 'the follow ends with the service' });
          } else {
            await spec.start();
            await waitFor(() => readyLines(f.entries).length >= 2, { ...SLOW, message: "the next run's ready line" });
            assert.equal(f.ended(), undefined);
          }
        } finally {
          f.process.kill();
          await f.process.exited;
        }
        if (spec.logFollowEndsWithService) await spec.start();
        await running();
      });

      it('tailLog: the last lines, oldest first, the ready line among them, no problem', async () => {
        await running();
        const tail = await waitFor(
          async () => {
            const t = await target.tailLog(io, 200);
            return readyLines(t.entries).length > 0 ? t : undefined;
          },
          { ...SLOW, message: 'the ready line in the tail' },
        );
        assert.equal(tail.problem, undefined);
        assert.ok(tail.entries.length <= 200);
        assert.ok(
          tail.entries.every((e, i) => i === 0 || e.at >= tail.entries[i - 1]!.at),
          'oldest first',
        );
      });

      if (spec.argsEdit === 'by-hand') {
        it('argsEdit by hand: the exact command to re-create it with the flags; nothing changed, nothing to roll back', async () => {
          const before = await running();
          const ui: ArgsChangeUi = { confirm: async () => assert.fail('nothing to confirm'), log: () => undefined };
          const outcome = await enableParsersOn(test.session, CHOICE, ui);
          assert.equal(outcome.kind, 'manual');
          if (outcome.kind === 'manual')
            assert.ok(outcome.advice.includes([...before.argv, ...FLAGS].join(' ')), outcome.advice);
          const rolled = await rollbackParsersOn(test.session, ui);
          assert.equal(rolled.kind, 'nothing');
          const after = await running();
          assert.equal(after.unit.mainPid, before.unit.mainPid, 'not restarted');
          assert.deepEqual(after.argv, before.argv);
        });
      } else {
        it(`argsEdit (${spec.argsEdit}): a declined diff writes nothing; an accepted one runs with the flags after a restart; rolled back, without`, async () => {
          const before = await running();
          assert.ok(!before.argv.includes('--tool-call-parser'), before.argv.join(' '));
          const diffs: string[] = [];
          const declined = await enableParsersOn(test.session, CHOICE, {
            confirm: async (c) => {
              diffs.push(c.diff);
              return false;
            },
            log: () => undefined,
          });
          assert.equal(declined.kind, 'cancelled');
          assert.equal(diffs.length, 1);
          assert.match(diffs[0]!, /--tool-call-parser.*kimi_k2/);
          assert.equal(
            (await rollbackParsersOn(test.session, { confirm: async () => false, log: () => undefined })).kind,
            'nothing',
          );

          const changed = await enableParsersOn(test.session, CHOICE, {
            confirm: async () => true,
            log: () => undefined,
          });
          assert.equal(changed.kind, 'changed');
          assert.deepEqual(await target.restart(io), { ok: true });
          const withFlags = await running(before);
          assert.deepEqual(withFlags.argv.slice(-FLAGS.length), FLAGS, withFlags.argv.join(' '));
          assert.equal(
            (await enableParsersOn(test.session, CHOICE, { confirm: async () => true, log: () => undefined })).kind,
            'already-set',
          );

          const rolled = await rollbackParsersOn(
            test.session,
            { confirm: async () => true, log: () => undefined },
            changed.kind === 'changed' ? changed.rollback : undefined,
          );
          assert.equal(rolled.kind, 'rolled-back');
          assert.deepEqual(await target.restart(io), { ok: true });
          const after = await running(withFlags);
          assert.deepEqual(after.argv, before.argv);
        });
      }

      for (const refusal of spec.refusals) {
        it(`refused (${refusal.what}): restart says so in the user's words (${refusal.kind}), and nothing was restarted`, async () => {
          const before = await running();
          await refusal.arrange?.();
          try {
            const t = await sessionAs(refusal.server);
            others.push(t);
            const refused = targetFor(t.session.profile);
            const result = await refused.restart(targetIo(t.session.transport, 60_000)).catch((e: unknown) => {
              if (e instanceof TargetError) return { ok: false as const, error: e };
              throw e;
            });
            assert.equal(result.ok, false);
            if (!result.ok) {
              assert.equal(result.error.kind, refusal.kind, result.error.message);
              assert.match(forFront(result.error.message, 'vscode'), refusal.message);
            }
          } finally {
            await refusal.undo?.();
          }
          assert.equal((await running()).unit.mainPid, before.unit.mainPid);
        });
      }

      if (spec.missing) {
        const missing = spec.missing;
        it('missing (no such unit or container): restart fails naming it; readState says not found or why', async () => {
          await missing.arrange?.();
          try {
            const t = await sessionAs(missing.server);
            others.push(t);
            const gone = targetFor(t.session.profile);
            const tio = targetIo(t.session.transport, 60_000);
            const result = await gone.restart(tio);
            assert.equal(result.ok, false);
            if (!result.ok) {
              assert.equal(result.error.kind, 'failed', result.error.message);
              assert.match(result.error.message, missing.restart);
            }
            const read = await gone.readState(tio).then(
              (s) => s.unit.loadState,
              (e: unknown) => (e instanceof TargetError ? e.message : String(e)),
            );
            assert.ok(read === 'not-found' || missing.restart.test(read), read);
          } finally {
            await missing.undo?.();
          }
        });
      }
    });
  }
});
