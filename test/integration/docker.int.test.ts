/**
 * SGLang in Docker, against a real sshd, a real dockerd inside the simulated GPU
 * host and the simulator in real containers: a container named in the settings, a compose
 * service, and a unit whose ExecStart runs `docker run`.
 */
import { shellLine } from '../../src/transport/shell';
import { strict as assert } from 'node:assert';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { CONTAINER_MODEL_DIR, dockerMissing, startDockerEngine, type DockerEngine } from '../gpu-host/docker';
import type { WatchOptions, WatchOutcome } from '../../src/monitor/watch/watchTypes';
import { FAST_WATCH, loginAs, serverEntry, sessionForHost, type TestSession, headlessFleet } from './simHost';
import { waitFor } from '../util/waitFor';
import type { ParserChangeDeps } from '../../src/target/argsEdit';
import { changeComposeCommand, rollbackCompose } from '../../src/target/docker/composeParsers';
import { parserPlanner } from '../../src/engine/engine';
import { expectedParsers } from '../../src/verify/serverVerification';
import { targetFor } from '../../src/target/target';

const STEADY: WatchOptions = { ...FAST_WATCH, steadyIntervalMs: 60_000 };

describe('docker: containers, compose services and units that run docker', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let engine: DockerEngine;
  let test: TestSession | undefined;

  before(async function () {
    const missing = dockerMissing();
    if (missing) throw new Error(`Docker is needed for these tests: ${missing}`);
    host = await startGpuHost({
      users: ['kimi'],
      shards: 4,
      shardBytes: 1024 * 1024,
      sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3 },
    });
    engine = await startDockerEngine(host);
  });
  afterEach(async () => {
    test?.dispose();
    test = undefined;
    await engine.docker('rm -f $(docker ps -aq) >/dev/null 2>&1; true');
    await host.configureSimulator({ fault: {}, crashExit: null, readMBps: 40, warmReadMBps: 40 });
  });
  after(async () => {
    await engine?.stop();
    await host?.stop();
  });

  const runContainer = async (name: string, extra: readonly string[] = []): Promise<void> => {
    const r = await engine.docker(`run -d ${[...engine.simRunArgs(name, extra), ...engine.simCommand()].join(' ')}`);
    assert.equal(r.code, 0, r.stderr);
  };
  const modelSizeSaid = (): Promise<unknown> => {
    const said = new RegExp(`Model ${host.modelPath}: 4 safetensors files`);
    return waitFor(() => test!.logLines.some((l) => said.test(l)), {
      timeoutMs: 30_000,
      message: `the model size (${said.source}) in the log:\n${test!.logLines.join('\n')}`,
    });
  };
  const ends = (): { list: WatchOutcome[]; listener: { onEnd: (o: WatchOutcome) => void } } => {
    const list: WatchOutcome[] = [];
    return { list, listener: { onEnd: (o) => void list.push(o) } };
  };

  it('a container: restarted with docker restart, ready, progress from its process tree and its volume; killed after ready is failed', async () => {
    await host.configureSimulator({ readMBps: 4, warmReadMBps: 4 });
    await runContainer('sg-plain');
    test = await sessionForHost(host, { server: { unit: undefined, container: 'sg-plain' } });
    const seen = ends();
    const first = await test.session.watch('restart', STEADY, seen.listener);
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    const pid = await engine.containerPid('sg-plain');
    assert.ok(pid > 0);
    assert.equal(first.state.mainPid, pid, 'the container PID is the one followed');
    assert.equal(first.state.restartedBy, 'us');
    const log = test.logLines.join('\n');
    assert.match(log, /\$ docker restart -- sg-plain/);
    // The model size is read from the host side of the volume (the sampler's first line, which may come after ready).
    await modelSizeSaid();
    assert.match(log, /docker logs --follow --timestamps/);
    assert.equal(first.state.phase, 'ready');
    assert.deepEqual(first.state.shards, { done: 4, total: 4 }, 'shard progress from docker logs');
    assert.ok(
      (first.state.io?.readBytes ?? 0) > 0,
      `bytes read by the container's process tree: ${JSON.stringify(first.state.io)}`,
    );
    assert.ok((first.state.gpu?.usedMiB ?? 0) > 0, 'GPU memory as for a unit');

    // The process dies (as a crash would); `docker kill` would be a stop on purpose.
    await host.nsExec(`kill -s KILL ${pid}`);
    const failed = await waitFor(() => seen.list.find((e) => e.end === 'failed'), {
      timeoutMs: 30_000,
      message: 'a failed end after ready',
    });
    assert.match(failed.state.failure!.summary, /killed by signal 9 after it was ready/);
  });

  it('after ready, docker restart by someone else is followed as a new load; docker stop is stopped, not failed', async () => {
    await runContainer('sg-other');
    test = await sessionForHost(host, { server: { unit: undefined, container: 'sg-other' } });
    const seen = ends();
    const verdicts: string[] = [];
    const first = await test.session.watch('restart', STEADY, {
      ...seen.listener,
      onState: (st) => void (verdicts[verdicts.length - 1] !== st.verdict && verdicts.push(st.verdict)),
    });
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    const oldPid = first.state.mainPid;
    verdicts.length = 0;
    const restarted = await engine.docker('restart sg-other');
    assert.equal(restarted.code, 0, restarted.stderr);
    const second = await waitFor(() => seen.list[1], { timeoutMs: 30_000, message: 'the new load ends' });
    assert.equal(second.end, 'ready', `${second.end}: ${second.message}; verdicts ${verdicts.join(' ')}`);
    assert.equal(second.state.restartedBy, 'someone else');
    assert.notEqual(second.state.mainPid, oldPid);
    assert.ok(!verdicts.includes('failed'), `verdicts: ${verdicts.join(' ')}`);

    const stopped = await engine.docker('stop sg-other');
    assert.equal(stopped.code, 0, stopped.stderr);
    const third = await waitFor(() => seen.list[2], { timeoutMs: 30_000, message: 'the stop is seen' });
    assert.equal(third.end, 'stopped', `${third.end}: ${third.message}; verdicts ${verdicts.join(' ')}`);
  });

  it('the fleet (every front) on a container: ready, and its log read from docker logs', async () => {
    const created = await engine.docker(
      `run -d ${[...engine.simRunArgs('sg-fleet'), ...engine.simCommand()].join(' ')}`,
    );
    assert.equal(created.code, 0, created.stderr);
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'kimi-docker-fleet-'));
    const knownHostsFile = path.join(dir, 'known_hosts');
    await fsp.writeFile(knownHostsFile, `${host.knownHostsLine()}\n`);
    const parsed = parseSettings({
      servers: [{ ...serverEntry(host), unit: undefined, container: 'sg-fleet' }],
      knownHostsFile,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
      watchAfterReady: false,
      verifyParsersWhenReady: false,
    });
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.errors.join('\n'));
    const log = (): void => undefined;
    const fleet = headlessFleet(parsed.settings, log);
    try {
      const server = parsed.settings.servers[0]!;
      // The container was just created: restarted anyway (the rule would follow its load).
      const restarted = await fleet.restart(server, { force: true });
      assert.equal(restarted.kind, 'restarted');
      const outcome = await restarted.outcome;
      assert.equal(outcome?.end, 'ready', `${outcome?.end}: ${outcome?.message}`);
      assert.equal(fleet.snapshot(server).state?.verdict, 'ready');
      const logs = await fleet.logs(server, 50);
      assert.equal(logs.journalError, undefined);
      assert.ok(
        logs.journal.some((l) => /The server is fired up and ready to roll!/.test(l)),
        `docker logs: ${logs.journal.slice(-5).join(' | ')}`,
      );
    } finally {
      fleet.dispose();
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it("the parser check reads the container's own flags (docker inspect), not a unit's ExecStart", async () => {
    const run = await engine.docker(
      `run -d ${[...engine.simRunArgs('sg-verify'), ...engine.simCommand(), '--tool-call-parser', 'kimi_k2', '--reasoning-parser', 'deepseek-r1'].join(' ')}`,
    );
    assert.equal(run.code, 0, run.stderr);
    test = await sessionForHost(host, { server: { unit: undefined, container: 'sg-verify' } });
    const ready = await test.session.watch('watch', FAST_WATCH);
    assert.equal(ready.end, 'ready', `${ready.end}: ${ready.message}`);
    const expected = await expectedParsers(test.session.transport, targetFor(test.session.profile), () => undefined);
    assert.deepEqual(expected, { reasoningParser: 'deepseek-r1', toolCallParser: 'kimi_k2', engine: 'sglang' });
  });

  it('a container over its memory limit: OOMKilled, said in words', async () => {
    await host.configureSimulator({ fault: { crashAt: 'weights', afterShards: 1 }, crashExit: 'memory' });
    await runContainer('sg-oom', ['--memory', '96m', '--memory-swap', '96m']);
    test = await sessionForHost(host, { server: { unit: undefined, container: 'sg-oom' } });
    const outcome = await test.session.watch('watch', FAST_WATCH);
    assert.equal(outcome.end, 'failed', `${outcome.end}: ${outcome.message}`);
    assert.match(outcome.message ?? '', /killed by signal 9 \(out of memory: the OOM killer\)/);
    const oom = await engine.docker("inspect --format '{{.State.OOMKilled}}' sg-oom");
    assert.equal(oom.stdout.trim(), 'true');
  });

  it('a container its restart policy brings back after each crash: a crash loop, not a load', async () => {
    await host.configureSimulator({ fault: { crashAt: 'init', exitCode: 3 } });
    await runContainer('sg-loop', ['--restart', 'on-failure:50']);
    test = await sessionForHost(host, { server: { unit: undefined, container: 'sg-loop' } });
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'failed', `${outcome.end}: ${outcome.message}`);
    assert.match(
      outcome.message ?? '',
      /the service crashed and Docker (is restarting|restarted) it \(exited with status 3; .*crash loop\)/,
    );
    assert.ok(
      outcome.state.failure!.lines.some((l) => /NCCL error/.test(l)),
      `the cause from docker logs: ${outcome.state.failure!.lines.join(' | ')}`,
    );
  });

  it('a compose service: restarted, ready; parsers enabled in its file and recreated with them, rolled back; a crash is failed', async () => {
    const file = path.join(host.fixtureDir, 'compose', 'docker-compose.yml');
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const command = engine.simCommand();
    await fsp.writeFile(
      file,
      [
        '# the SGLang server',
        'services:',
        '  sglang:',
        `    image: ${engine.image}`,
        '    network_mode: host',
        '    volumes:',
        `      - ${host.modelPath}:${CONTAINER_MODEL_DIR}:ro`,
        `      - ${host.stateDir}:${host.stateDir}`,
        '    environment:',
        `      KIMI_SIM_ROOT: ${host.stateDir}`,
        `    command: ${JSON.stringify(command)}`,
        '',
      ].join('\n'),
    );
    const up = await host.ssh(`docker-compose -f ${file} up -d 2>&1`);
    assert.equal(up.code, 0, up.stdout);
    test = await sessionForHost(host, { server: { unit: undefined, compose: { file, service: 'sglang' } } });
    const seen = ends();
    const first = await test.session.watch('restart', STEADY, seen.listener);
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    assert.match(test.logLines.join('\n'), /dc -f "\$1" restart "\$2".* sh \S+compose\S* sglang$/m);
    await modelSizeSaid();

    // Enable parsers: the compose file gets the flags, the restart recreates the service with them.
    const before = await fsp.readFile(file, 'utf8');
    const session = test.session;
    const deps: ParserChangeDeps = {
      sudo: false,
      log: () => undefined,
      exec: (command, options) =>
        session.transport.exec(shellLine(command), {
          timeoutMs: 30_000,
          ...(options?.stdin !== undefined ? { stdin: options.stdin } : {}),
        }),
      confirmDiff: async (diff) => {
        assert.match(
          diff,
          /^\+ +command: \[.*"--port","\d+","--tool-call-parser","kimi_k2","--reasoning-parser","kimi_k2"\]$/m,
        );
        return true;
      },
    };
    const changed = await changeComposeCommand(
      deps,
      file,
      'sglang',
      parserPlanner({ toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' }),
    );
    assert.equal(changed.kind, 'changed');
    assert.match(await fsp.readFile(file, 'utf8'), /^# the SGLang server\n/, 'the comment is kept');
    assert.equal(await fsp.readFile(`${file}.kimi-backup`, 'utf8'), before);
    const recreated = await test.session.watch('restart', FAST_WATCH);
    assert.equal(recreated.end, 'ready', `${recreated.end}: ${recreated.message}`);
    const args = await host.ssh(`docker inspect --format '{{json .Args}}' $(docker-compose -f ${file} ps -q sglang)`);
    assert.match(args.stdout, /"--tool-call-parser","kimi_k2","--reasoning-parser","kimi_k2"/);
    if (changed.kind === 'changed') await rollbackCompose(deps, changed.rollback);
    assert.equal(await fsp.readFile(file, 'utf8'), before);

    await host.configureSimulator({ fault: { crashAt: 'init', exitCode: 4 } });
    const again = await test.session.watch('restart', FAST_WATCH);
    assert.equal(again.end, 'failed', `${again.end}: ${again.message}`);
    assert.match(again.message ?? '', /exited with status 4/);
    const rolledBack = await host.ssh(
      `docker inspect --format '{{json .Args}}' $(docker-compose -f ${file} ps -q sglang)`,
    );
    assert.doesNotMatch(rolledBack.stdout, /--tool-call-parser/, 'the rolled-back file is recreated too');
    const down = await host.ssh(`docker-compose -f ${file} down 2>&1`);
    assert.equal(down.code, 0, down.stdout);
  });

  it("a container that does not exist: restart refused with Docker's words, a watch says it does not exist", async () => {
    test = await sessionForHost(host, { server: { unit: undefined, container: 'sg-none' } });
    const restart = await test.session.watch('restart', FAST_WATCH);
    assert.equal(restart.end, 'failed');
    assert.match(restart.message ?? '', /docker restart sg-none failed: .*No such container: sg-none/);
    const watched = await test.session.watch('watch', FAST_WATCH);
    assert.equal(watched.end, 'failed');
    assert.match(watched.message ?? '', /container sg-none does not exist \(docker inspect: no such container\)/);
  });

  it("a compose file that is not there: nothing restarted, compose's own words", async () => {
    const file = path.join(host.fixtureDir, 'compose', 'missing.yml');
    test = await sessionForHost(host, { server: { unit: undefined, compose: { file, service: 'sglang' } } });
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'failed');
    assert.match(
      outcome.message ?? '',
      new RegExp(
        `could not read compose service sglang before restarting it \\(docker inspect failed: .*${file.replace(/[.]/g, '\\.')}.*\\); nothing was restarted`,
      ),
    );
  });

  it('an unprivileged login: outside the docker group told how to get in; in it, restarted to ready', async () => {
    await runContainer('sg-user');
    const server = { unit: undefined, container: 'sg-user', ...loginAs(host, 'kimi', false) };
    test = await sessionForHost(host, { server });
    const refused = await test.session.watch('restart', FAST_WATCH);
    assert.equal(refused.end, 'failed');
    assert.match(
      refused.message ?? '',
      /may not use Docker .*add it to the docker group \(sudo usermod -aG docker USER/,
    );
    test.dispose();
    await host.addToGroup('kimi', 'docker');
    try {
      test = await sessionForHost(host, { server });
      const ready = await test.session.watch('restart', FAST_WATCH);
      assert.equal(ready.end, 'ready', `${ready.end}: ${ready.message}`);
      assert.equal(ready.state.mainPid, await engine.containerPid('sg-user'));
    } finally {
      await host.removeFromGroup('kimi', 'docker');
    }
  });

  it('an unprivileged login with "sudo": true: sudo -n docker, refused without a rule (said so), ready with one', async () => {
    await runContainer('sg-sudo');
    const server = { unit: undefined, container: 'sg-sudo', ...loginAs(host, 'kimi', true) };
    test = await sessionForHost(host, { server });
    const refused = await test.session.watch('restart', FAST_WATCH);
    assert.equal(refused.end, 'failed');
    assert.match(
      refused.message ?? '',
      /could not read container sg-sudo before restarting it \(docker inspect failed: sudo refused docker on .*a password is required.*allow the docker program that sudo finds/,
    );
    test.dispose();
    await host.installSudoers('kimi ALL=(root) NOPASSWD: /usr/bin/docker, /usr/local/bin/docker\n', 'kimi-docker');
    try {
      test = await sessionForHost(host, { server });
      const ready = await test.session.watch('restart', FAST_WATCH);
      assert.equal(ready.end, 'ready', `${ready.end}: ${ready.message}`);
      assert.match(test.logLines.join('\n'), /\$ sudo -n docker restart -- sg-sudo/);
    } finally {
      await host.removeSudoers();
    }
  });

  it('a unit whose ExecStart runs docker run: watched through its container, not as the docker client', async () => {
    const runArgs = [...engine.simRunArgs('sg-unit', ['--rm']), ...engine.simCommand()];
    await host.writeUnit(
      host.defaultUnitText.replace(/^ExecStart=.*(?:\\\n.*)*$/m, `ExecStart=/usr/bin/docker run ${runArgs.join(' ')}`),
    );
    try {
      test = await sessionForHost(host);
      const seen = ends();
      const first = await test.session.watch('restart', STEADY, seen.listener);
      assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
      const pid = await engine.containerPid('sg-unit');
      assert.equal(
        first.state.mainPid,
        pid,
        `the container PID, not the docker client (${await host.mainPid()}); the log:\n${test.logLines.join('\n')}`,
      );
      assert.notEqual(await host.mainPid(), pid);
      assert.match(test.logLines.join('\n'), /\$ TZ=UTC systemctl show/);
      await modelSizeSaid();

      await host.nsExec(`kill -s KILL ${pid}`);
      const failed = await waitFor(() => seen.list.find((e) => e.end === 'failed'), {
        timeoutMs: 30_000,
        message: 'a failed end after ready',
      });
      assert.match(failed.state.failure!.summary, /after it was ready/);
    } finally {
      await host.writeUnit(host.defaultUnitText);
    }
  });

  it('a unit whose docker run has no --name: watched as a unit, and told what to add', async () => {
    const runArgs = [
      ...engine.simRunArgs('unused', ['--rm']).filter((a, i, all) => a !== '--name' && all[i - 1] !== '--name'),
      ...engine.simCommand(),
    ];
    await host.writeUnit(
      host.defaultUnitText.replace(/^ExecStart=.*(?:\\\n.*)*$/m, `ExecStart=/usr/bin/docker run ${runArgs.join(' ')}`),
    );
    try {
      test = await sessionForHost(host);
      const alerts: string[] = [];
      const outcome = await test.session.watch('restart', FAST_WATCH, { onAlert: (a) => void alerts.push(a.message) });
      assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
      assert.ok(
        alerts.some((m) => /without `--name`: Kimi cannot tell which container to watch\. Add `--name NAME`/.test(m)),
        alerts.join(' | '),
      );
    } finally {
      await host.writeUnit(host.defaultUnitText);
      await engine.docker('rm -f $(docker ps -aq) >/dev/null 2>&1; true');
    }
  });

  it('a unit whose ExecStart runs docker run -d: the container is the service, not "exited with status 0"', async () => {
    const runArgs = [...engine.simRunArgs('sg-unit-d', ['-d', '--rm']), ...engine.simCommand()];
    await host.writeUnit(
      host.defaultUnitText.replace(/^ExecStart=.*(?:\\\n.*)*$/m, `ExecStart=/usr/bin/docker run ${runArgs.join(' ')}`),
    );
    try {
      test = await sessionForHost(host);
      const seen = ends();
      const first = await test.session.watch('restart', STEADY, seen.listener);
      assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
      assert.equal(first.state.mainPid, await engine.containerPid('sg-unit-d'));
      assert.match(
        test.logLines.join('\n'),
        /docker logs --follow --timestamps --since \S+ -- sg-unit-d/,
        'the output is in docker logs, not the journal',
      );
      assert.deepEqual(first.state.shards, { done: 4, total: 4 });

      await host.nsExec(`kill -s KILL ${await engine.containerPid('sg-unit-d')}`);
      const failed = await waitFor(() => seen.list.find((e) => e.end === 'failed'), {
        timeoutMs: 30_000,
        message: 'a failed end after ready',
      });
      assert.match(failed.state.failure!.summary, /killed by signal 9 after it was ready/);
    } finally {
      await host.writeUnit(host.defaultUnitText);
    }
  });
});
