import { strict as assert } from 'node:assert';
import { shellLine, type HostCommand } from '../../src/transport/shell';
import { parseSettings } from '../../src/config/parseSettings';
import {
  containerServiceStatus,
  endedFromEvents,
  hostPathOf,
  logLineEntry,
  parseDockerTimeUs,
  parseInspect,
} from '../../src/target/docker/dockerInspect';
import {
  endEventsCommand,
  inspectCommand,
  logsFollowCommand,
  restartCommand,
} from '../../src/target/docker/dockerTarget';
import { wrappedContainer } from '../../src/target/docker/dockerRun';
import { ContainerReader } from '../../src/target/docker/containerReader';
import { wrappedServiceStatus } from '../../src/target/docker/dockerRunUnit';
import { exitDescription, hasRunningProcess } from '../../src/monitor/state/unitFailure';

function inspectLine(state: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    Id: 'a1b2c3d4e5f6a7b8',
    Name: '/sglang',
    State: {
      Status: 'running',
      Running: true,
      Paused: false,
      Restarting: false,
      OOMKilled: false,
      Dead: false,
      Pid: 4242,
      ExitCode: 0,
      StartedAt: '2026-11-30T14:29:02.324652777Z',
      FinishedAt: '0001-01-01T00:00:00Z',
      ...state,
    },
    RestartCount: 0,
    Path: 'python3',
    Args: ['-m', 'sglang.launch_server', '--model-path', '/models/Kimi'],
    Mounts: [{ Type: 'bind', Source: '/srv/models', Destination: '/models' }],
    RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
    ...extra,
  });
}

describe('docker targets in settings', () => {
  const base = { name: 'gpu', host: 'gpu1' };
  it('accepts a container and a compose service, labelled for messages', () => {
    const result = parseSettings({
      servers: [
        { ...base, container: 'sglang' },
        { ...base, name: 'b', compose: { file: '/srv/kimi/compose.yaml', service: 'sglang' } },
      ],
    });
    assert.ok(result.ok);
    assert.deepEqual(result.settings.servers[0]?.docker, {
      kind: 'container',
      name: 'sglang',
      label: 'container sglang',
    });
    assert.equal(result.settings.servers[0]?.unit, 'container sglang');
    assert.deepEqual(result.settings.servers[1]?.docker, {
      kind: 'compose',
      file: '/srv/kimi/compose.yaml',
      service: 'sglang',
      label: 'compose service sglang',
    });
  });
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['no unit, container or compose', base, /\.unit is missing: give "unit" \(systemd\), "container"/],
    ['unit and container', { ...base, unit: 'x', container: 'y' }, /give only one of/],
    [
      'container with shell metacharacters',
      { ...base, container: 'x; rm -rf /' },
      /\.container .*not a Docker container name/,
    ],
    ['container starting with a dash', { ...base, container: '-x' }, /not a Docker container name/],
    [
      'relative compose file',
      { ...base, compose: { file: 'compose.yaml', service: 's' } },
      /compose\.file .*absolute path/,
    ],
    [
      'compose service with a space',
      { ...base, compose: { file: '/a.yaml', service: 'a b' } },
      /compose\.service .*not a compose service name/,
    ],
    [
      'compose without service',
      { ...base, compose: { file: '/a.yaml' } },
      /kimiService\.servers\[0\]\.compose\.service is missing/,
    ],
  ];
  for (const [what, server, message] of bad) {
    it(`refuses ${what} with a clear message`, () => {
      const result = parseSettings({ servers: [server] });
      assert.ok(!result.ok);
      assert.match(result.errors.join('\n'), message);
    });
  }
});

describe('docker commands', () => {
  it('quotes names and asks for only the fields it reads', () => {
    const cmd = shellLine(inspectCommand({ kind: 'container', name: 'sglang', label: '' }, false));
    assert.match(cmd, /^docker inspect --type container --format '\{"Id":/);
    assert.doesNotMatch(cmd, /Env/);
    assert.equal(
      shellLine(restartCommand({ kind: 'container', name: 'sglang', label: '' }, true)),
      'sudo -n docker restart -- sglang',
    );
    const request = restartCommand(
      { kind: 'compose', file: "/srv/it's/compose.yaml", service: 'sglang', label: '' },
      false,
    );
    // The file and the service are the script's $1 and $2, never spliced into it.
    assert.deepEqual(request.argv.slice(0, 2), ['sh', '-c']);
    assert.deepEqual(request.argv.slice(3), ['sh', "/srv/it's/compose.yaml", 'sglang']);
    const script = request.argv[2]!;
    assert.doesNotMatch(script, /compose\.yaml|sglang/);
    assert.match(
      script,
      /then dc -f "\$1" restart "\$2"; else dc -f "\$1" up -d --force-recreate --no-deps "\$2"; fi$/,
    );
    assert.match(script, /find "\$1" -newermt/, 'recreated when the file is newer than the container');
    assert.match(script, /docker compose version .*docker-compose "\$@"/);
    assert.match(shellLine(request), / sh '\/srv\/it'\\''s\/compose\.yaml' sglang$/);
  });
  it('follows the logs with timestamps from the start, stderr included', () => {
    assert.equal(
      shellLine(logsFollowCommand({ kind: 'container', name: 'sglang', label: '' }, false, 1764512942324)),
      'docker logs --follow --timestamps --since 1764512942.324 -- sglang 2>&1',
    );
  });
});

describe('docker inspect -> unit status', () => {
  it('reads times with nanoseconds and treats the zero time as unset', () => {
    assert.equal(
      parseDockerTimeUs('2026-11-30T14:29:02.324652777Z'),
      Date.UTC(2026, 10, 30, 14, 29, 2) * 1000 + 324652,
    );
    assert.equal(parseDockerTimeUs('0001-01-01T00:00:00Z'), undefined);
  });
  it('a running container is active with its PID and a run key that changes on each start', () => {
    const a = containerServiceStatus(parseInspect(inspectLine({})), 'container sglang');
    assert.equal(a.activeState, 'active');
    assert.equal(a.mainPid, 4242);
    assert.ok(hasRunningProcess(a));
    const b = containerServiceStatus(
      parseInspect(inspectLine({ StartedAt: '2026-11-30T14:31:00Z' })),
      'container sglang',
    );
    assert.notEqual(a.invocationId, b.invocationId);
  });
  it('an OOM-killed container failed, killed by signal 9', () => {
    const unit = containerServiceStatus(
      parseInspect(
        inspectLine({
          Status: 'exited',
          Running: false,
          Pid: 0,
          ExitCode: 137,
          OOMKilled: true,
          FinishedAt: '2026-11-30T14:30:00Z',
        }),
      ),
      'c',
    );
    assert.equal(unit.activeState, 'failed');
    assert.equal(unit.result, 'oom-kill');
    assert.equal(exitDescription(unit), 'killed by signal 9 (out of memory: the OOM killer)');
  });
  it('exit 1 fails; exit 0 and docker stop (SIGTERM, 143) are clean stops', () => {
    const exited = (code: number) =>
      containerServiceStatus(
        parseInspect(
          inspectLine({ Status: 'exited', Running: false, Pid: 0, ExitCode: code, FinishedAt: '2026-11-30T14:30:00Z' }),
        ),
        'c',
      );
    assert.equal(exited(1).activeState, 'failed');
    assert.equal(exitDescription(exited(1)), 'exited with status 1');
    assert.equal(exited(0).activeState, 'inactive');
    assert.equal(exited(143).activeState, 'inactive');
  });
  it('a container its restart policy brings back is a crash loop (auto-restart) with its count', () => {
    const unit = containerServiceStatus(
      parseInspect(
        inspectLine(
          {
            Status: 'restarting',
            Running: true,
            Restarting: true,
            Pid: 0,
            ExitCode: 3,
            FinishedAt: '2026-11-30T14:30:00Z',
          },
          { RestartCount: 4 },
        ),
      ),
      'c',
    );
    assert.equal(unit.subState, 'auto-restart');
    assert.equal(unit.nRestarts, 4);
    assert.equal(unit.activeState, 'activating');
    assert.equal(exitDescription(unit), 'exited with status 3');
  });
  it('no such container is not-found; another error is an error', () => {
    assert.deepEqual(parseInspect('Error: No such object: sglang\n'), { kind: 'missing' });
    assert.equal(containerServiceStatus(parseInspect('Error: No such object: sglang'), 'c').loadState, 'not-found');
    const denied = parseInspect(
      'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock',
    );
    assert.equal(denied.kind, 'error');
  });
  it('maps the model path through the volume that holds it', () => {
    const found = parseInspect(inspectLine({}));
    assert.ok(found.kind === 'found');
    assert.deepEqual(found.container.argv, ['python3', '-m', 'sglang.launch_server', '--model-path', '/models/Kimi']);
    assert.equal(hostPathOf('/models/Kimi', found.container.mounts), '/srv/models/Kimi');
    assert.equal(hostPathOf('/models', found.container.mounts), '/srv/models');
    assert.equal(hostPathOf('/modelsX/a', found.container.mounts), undefined);
    assert.equal(
      hostPathOf('/a/b', [
        { source: '/x', destination: '/a' },
        { source: '/y', destination: '/a/b' },
      ]),
      '/y',
    );
  });
  it('reads docker logs --timestamps lines, tqdm carriage returns kept', () => {
    const e = logLineEntry('2026-11-30T14:29:02.324652777Z Loading safetensors checkpoint shards:  50% 1/2\r');
    assert.equal(e?.message, 'Loading safetensors checkpoint shards:  50% 1/2\r');
    assert.equal(e?.at, Date.UTC(2026, 10, 30, 14, 29, 2, 324));
    assert.equal(logLineEntry('Error: No such container: x'), undefined);
  });
});

describe('a unit that runs docker run', () => {
  it('finds the container name, foreground or detached', () => {
    assert.deepEqual(
      wrappedContainer([
        '/usr/bin/docker',
        'run',
        '--rm',
        '--name',
        'sglang',
        '-v',
        '/m:/m',
        'img',
        'python3',
        '--model-path',
        '/m',
      ]),
      { kind: 'container', container: { name: 'sglang', detached: false } },
    );
    assert.deepEqual(wrappedContainer(['docker', 'container', 'run', '-dit', '--name=sg', 'img']), {
      kind: 'container',
      container: { name: 'sg', detached: true },
    });
    assert.deepEqual(wrappedContainer(['docker', 'start', '-a', 'sg']), {
      kind: 'container',
      container: { name: 'sg', detached: false },
    });
    assert.equal(wrappedContainer(['python3', '-m', 'sglang.launch_server'])?.kind, undefined);
    assert.equal(wrappedContainer(['docker', 'run', 'img'])?.kind, 'unnamed');
  });
  const unit = {
    loadState: 'loaded',
    activeState: 'active',
    subState: 'running',
    mainPid: 100,
    nRestarts: 0,
    result: 'success',
    dropInPaths: [],
    needDaemonReload: false,
    id: 'sg.service',
    invocationId: 'inv1',
  };
  it('foreground: the unit state, with the container PID for the sampler', () => {
    const s = wrappedServiceStatus(unit, parseInspect(inspectLine({})), { name: 'sglang', detached: false });
    assert.equal(s.mainPid, 4242);
    assert.equal(s.invocationId, 'inv1');
  });
  it('foreground, the container not started yet (or a leftover of an earlier run): starting, no PID to follow', () => {
    const started = { ...unit, execMainStartedAt: Date.parse('2026-11-30T14:00:00Z') };
    const fg = { name: 'sglang', detached: false };
    for (const inspect of [
      { kind: 'missing' } as const,
      parseInspect(inspectLine({ Status: 'created', Running: false, Pid: 0, StartedAt: '0001-01-01T00:00:00Z' })),
      parseInspect(
        inspectLine({ Status: 'exited', Running: false, Pid: 0, StartedAt: '2026-11-30T13:00:00Z', ExitCode: 0 }),
      ),
    ]) {
      const s = wrappedServiceStatus(started, inspect, fg);
      assert.equal(s.activeState, 'activating', JSON.stringify(inspect));
      assert.equal(s.mainPid, 0);
    }
    const ended = parseInspect(
      inspectLine({ Status: 'exited', Running: false, Pid: 0, StartedAt: '2026-11-30T14:00:01Z', ExitCode: 1 }),
    );
    assert.equal(
      wrappedServiceStatus(started, ended, fg).mainPid,
      100,
      'its own container ended: the client is the unit',
    );
  });
  it('detached with RemainAfterExit: the container is the service, not "exited with status 0"', () => {
    const remain = { ...unit, subState: 'exited', mainPid: 0, execMainCode: 'exited', execMainStatus: 0 };
    const running = wrappedServiceStatus(remain, parseInspect(inspectLine({})), { name: 'sglang', detached: true });
    assert.ok(hasRunningProcess(running));
    assert.equal(running.mainPid, 4242);
    const crashed = wrappedServiceStatus(
      remain,
      parseInspect(
        inspectLine({ Status: 'exited', Running: false, Pid: 0, ExitCode: 1, FinishedAt: '2026-11-30T14:30:00Z' }),
      ),
      { name: 'sglang', detached: true },
    );
    assert.equal(crashed.activeState, 'failed');
    assert.equal(exitDescription(crashed), 'exited with status 1');
  });
});

describe('a container removed on exit (--rm)', () => {
  const running = parseInspect(inspectLine({}));
  const last = running.kind === 'found' ? running.container : undefined;
  it('ended as its die event says, the same run (not a new one)', () => {
    assert.ok(last);
    const events = [
      JSON.stringify({
        status: 'oom',
        id: 'a1b2',
        Type: 'container',
        Action: 'oom',
        Actor: { ID: 'a1b2', Attributes: { name: 'sglang' } },
        time: 1764513000,
      }),
      JSON.stringify({
        status: 'die',
        id: 'a1b2',
        Type: 'container',
        Action: 'die',
        Actor: { ID: 'a1b2', Attributes: { exitCode: '137', name: 'sglang' } },
        time: 1764513000,
      }),
    ].join('\n');
    const ended = containerServiceStatus(
      { kind: 'found', container: endedFromEvents(last, events) },
      'container sglang',
    );
    assert.equal(ended.activeState, 'failed');
    assert.equal(exitDescription(ended), 'killed by signal 9 (out of memory: the OOM killer)');
    assert.equal(ended.result, 'oom-kill');
    assert.equal(ended.invocationId, containerServiceStatus(running, 'container sglang').invocationId);
    const clean = containerServiceStatus(
      { kind: 'found', container: endedFromEvents(last, events.split('\n')[1]!.replace('"137"', '"0"')) },
      'c',
    );
    assert.equal(clean.activeState, 'inactive');
  });
  it('a stop event: stopped on purpose, not failed, even killed after the stop timeout', () => {
    assert.ok(last);
    const events = ['stop', 'die']
      .map((Action) => JSON.stringify({ Action, Actor: { Attributes: { exitCode: '137' } }, time: 1764513000 }))
      .join('\n');
    const stopped = containerServiceStatus({ kind: 'found', container: endedFromEvents(last, events) }, 'c');
    assert.equal(stopped.activeState, 'inactive');
    assert.equal(stopped.stopRequested, true);
  });
  it('the stop and die of the run before (a restart) do not count', () => {
    assert.ok(last);
    const before = (last.startedAtUs! - 5000) * 1000;
    const events = ['stop', 'die']
      .map((Action) =>
        JSON.stringify({
          Action,
          Actor: { Attributes: { exitCode: '143' } },
          time: Math.floor(before / 1e9),
          timeNano: before,
        }),
      )
      .join('\n');
    const ended = containerServiceStatus({ kind: 'found', container: endedFromEvents(last, events) }, 'c');
    assert.equal(ended.stopRequested, undefined);
    assert.equal(ended.activeState, 'failed');
  });
  it('no event left: failed, the status unknown', () => {
    assert.ok(last);
    const ended = containerServiceStatus({ kind: 'found', container: endedFromEvents(last, '') }, 'c');
    assert.equal(ended.activeState, 'failed');
    assert.equal(exitDescription(ended), 'ended (container removed, exit status unknown)');
  });
  it('asks only for that container, up to now', () => {
    const events = endEventsCommand('a1b2c3d4e5f6', 1764512942324, false);
    assert.deepEqual(events.argv.slice(3), ['sh', '1764512942.324', 'a1b2c3d4e5f6']);
    assert.match(
      events.argv[2]!,
      /^docker events --since "\$1" --filter "container=\$2" --filter event=die --filter event=oom --filter event=kill --filter event=stop --format '\{\{json \.\}\}' --until "\$\(date \+%s\.%N\)" 2>&1$/,
    );
    assert.throws(() => endEventsCommand('x; rm -rf /', 0, false));
  });
});

describe('ContainerReader', () => {
  const config = { kind: 'container', name: 'sglang', label: 'container sglang' } as const;
  it('a container seen running, then gone (or removed after it ended): its die event, once; a container never seen: missing', async () => {
    const commands: string[] = [];
    const answers = [
      inspectLine({}),
      'Error: No such object: sglang',
      JSON.stringify({ Action: 'die', Actor: { Attributes: { exitCode: '3' } }, time: 1764513000 }),
      'Error: No such object: sglang',
    ];
    const exec = async (request: HostCommand) => {
      const command = shellLine(request);
      commands.push(command);
      return { stdout: answers.shift() ?? '', stderr: '', code: 0 };
    };
    const reader = new ContainerReader(false);
    assert.equal((await reader.read(exec, config)).kind, 'found');
    const gone = await reader.read(exec, config);
    assert.ok(gone.kind === 'found' && gone.container.exitCode === 3 && !gone.container.running);
    const again = await reader.read(exec, config);
    assert.ok(again.kind === 'found' && again.container.exitCode === 3);
    assert.equal(commands.filter((c) => c.includes('docker events')).length, 1, 'the events are read once');
    const removal = [
      inspectLine({}),
      inspectLine({ Status: 'removing', Running: false, Pid: 0, ExitCode: 137, FinishedAt: '2026-11-30T14:30:00Z' }),
      '',
      'Error: No such object: sglang',
      JSON.stringify({ Action: 'die', Actor: { Attributes: { exitCode: '137' } }, time: 1764513000 }),
    ];
    const removed = new ContainerReader(false);
    const execRemoval = async () => ({ stdout: removal.shift() ?? '', stderr: '', code: 0 });
    await removed.read(execRemoval, config);
    const removing = await removed.read(execRemoval, config);
    assert.equal(removing.kind === 'found' && containerServiceStatus(removing, 'c').activeState, 'deactivating');
    const after = await removed.read(execRemoval, config);
    assert.equal(
      after.kind === 'found' && containerServiceStatus(after, 'c').activeState,
      'failed',
      'gone after its removal (--rm): ended as its die event says, not stopping for ever',
    );
    const loop = [
      inspectLine({}),
      inspectLine({ StartedAt: '2026-11-30T14:31:00.5Z', Pid: 4300 }, { RestartCount: 2 }),
      JSON.stringify({ Action: 'die', Actor: { Attributes: { exitCode: '3' } }, time: 1764513060 }),
    ];
    const looping = new ContainerReader(false);
    const execLoop = async () => ({ stdout: loop.shift() ?? '', stderr: '', code: 0 });
    await looping.read(execLoop, config);
    const back = await looping.read(execLoop, config);
    assert.ok(back.kind === 'found');
    assert.equal(
      exitDescription(containerServiceStatus(back, 'c')),
      'exited with status 3',
      'brought back by its policy between two reads: the crash is the run before (Docker reset ExitCode)',
    );
    assert.equal(containerServiceStatus(back, 'c').nRestarts, 2);
    assert.equal(
      (
        await new ContainerReader(false).read(
          async () => ({ stdout: 'Error: No such object: sglang', stderr: '', code: 1 }),
          config,
        )
      ).kind,
      'missing',
    );
  });
});
