/**
 * The Target operations per kind, over a fake transport that records the commands and answers
 * them: what each kind runs on the host, and the typed results it hands back.
 */
import { strict as assert } from 'node:assert';
import { TargetError, targetFor, type LogEntry, type TargetIo } from '../../src/target/target';
import type { ServerProfile } from '../../src/config/config';
import type { ExecResult, RemoteProcess } from '../../src/transport/transport';
import { shellLine } from '../../src/transport/shell';

type Answer = Partial<ExecResult> | undefined;

/** Answers each command with the first rule whose pattern it matches (exit 0, empty output by default). */
function fakeIo(
  rules: Array<[RegExp, Answer]> = [],
  streamed: { lines: string[]; stderr: string[] } = { lines: [], stderr: [] },
) {
  const commands: string[] = [];
  const io: TargetIo = {
    exec: async (request) => {
      const command = shellLine(request);
      commands.push(command);
      const answer = rules.find(([re]) => re.test(command))?.[1];
      return { stdout: '', stderr: '', code: 0, ...answer };
    },
    stream: async (request, onLine, onStderr) => {
      commands.push(shellLine(request));
      for (const line of streamed.lines) onLine(line);
      for (const line of streamed.stderr) onStderr?.(line);
      const process: RemoteProcess = { exited: Promise.resolve(0), kill: () => undefined };
      return process;
    },
  };
  return { io, commands };
}

const UNIT: ServerProfile = {
  name: 'k26',
  host: 'gpu1',
  unit: 'sglang-k26.service',
  url: 'http://127.0.0.1:30000',
  sudo: true,
} as ServerProfile;
const CONTAINER: ServerProfile = {
  ...UNIT,
  docker: { kind: 'container', name: 'sglang', label: 'container sglang' },
} as ServerProfile;
const COMPOSE: ServerProfile = {
  ...UNIT,
  sudo: false,
  docker: { kind: 'compose', file: '/srv/docker-compose.yml', service: 'sglang', label: 'compose service sglang' },
} as ServerProfile;

const SHOW = [
  'Id=sglang-k26.service',
  'LoadState=loaded',
  'ActiveState=active',
  'SubState=running',
  'MainPID=4242',
  'NRestarts=0',
  'Result=success',
  'ExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m sglang.launch_server --model-path /models/Kimi ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }',
].join('\n');

function journalLine(message: string, realtimeUs: number): string {
  return JSON.stringify({ MESSAGE: message, __REALTIME_TIMESTAMP: String(realtimeUs), _PID: '4242' });
}

describe('Target: a systemd unit', () => {
  it('restart: systemctl restart --no-block under sudo -n; ok', async () => {
    const { io, commands } = fakeIo();
    assert.deepEqual(await targetFor(UNIT).restart(io), { ok: true });
    assert.deepEqual(commands, ['sudo -n systemctl restart --no-block -- sglang-k26.service']);
  });

  it('restart refused by sudo: a TargetError of kind sudo-refused naming the command', async () => {
    const { io } = fakeIo([[/restart/, { code: 1, stderr: 'sudo: a password is required\n' }]]);
    const result = await targetFor(UNIT).restart(io);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.ok(result.error instanceof TargetError);
    assert.equal(result.error.kind, 'sudo-refused');
    assert.match(
      result.error.message,
      /^sudo asks for a password on gpu1: allow "systemctl restart sglang-k26.service"/,
    );
  });

  it("restart refused by polkit: access-denied; systemctl's own failure: failed", async () => {
    const denied = fakeIo([[/restart/, { code: 4, stderr: 'Failed to restart x: Access denied\n' }]]);
    const a = await targetFor({ ...UNIT, sudo: false }).restart(denied.io);
    assert.equal(!a.ok && a.error.kind, 'access-denied');
    const failed = fakeIo([[/restart/, { code: 5, stderr: 'Unit sglang-k26.service not found.\n' }]]);
    const b = await targetFor({ ...UNIT, sudo: false }).restart(failed.io);
    assert.equal(!b.ok && b.error.kind, 'failed');
    assert.equal(
      !b.ok && b.error.message,
      'systemctl restart sglang-k26.service failed: Unit sglang-k26.service not found.',
    );
  });

  it('readState: systemctl show -> the service status and its command line; model files are where they are', async () => {
    const { io, commands } = fakeIo([[/systemctl show/, { stdout: SHOW }]]);
    const state = await targetFor(UNIT).readState(io);
    assert.equal(commands.length, 1);
    assert.match(commands[0]!, /^TZ=UTC systemctl show --no-pager -p [A-Za-z,]*ExecStart sglang-k26.service$/);
    assert.equal(state.unit.activeState, 'active');
    assert.equal(state.unit.mainPid, 4242);
    assert.equal(state.unit.manager, undefined);
    assert.deepEqual(state.argv, ['/usr/bin/python3', '-m', 'sglang.launch_server', '--model-path', '/models/Kimi']);
    assert.equal(state.hostPath('/models/Kimi'), '/models/Kimi');
  });

  it('readState: systemctl show failing is a TargetError', async () => {
    const { io } = fakeIo([[/systemctl show/, { code: 1, stderr: 'Failed to connect to bus\n' }]]);
    await assert.rejects(
      targetFor(UNIT).readState(io),
      (e: unknown) => e instanceof TargetError && /Failed to connect to bus/.test(e.message),
    );
  });

  it('followLog: journalctl -f -o json, each entry parsed; stderr handed on', async () => {
    const entries: LogEntry[] = [];
    const stderr: string[] = [];
    const { io, commands } = fakeIo([], {
      lines: [journalLine('Load weight begin.', 1_700_000_000_000_000), 'not json'],
      stderr: ['Hint: You are currently not seeing messages from other users and the system.'],
    });
    const target = targetFor(UNIT);
    await target.followLog(io, 1_700_000_000_000, { onEntry: (e) => entries.push(e), onStderr: (l) => stderr.push(l) });
    assert.match(
      commands[0]!,
      /journalctl -u "\$1" -f -a -o json .* --since "\$2";.* sh sglang-k26\.service @1700000000$/s,
    );
    assert.deepEqual(
      entries.map((e) => [e.message, e.at]),
      [['Load weight begin.', 1_700_000_000_000]],
    );
    assert.equal(stderr.length, 1);
    assert.equal(target.logFollowEndsWithService, false);
  });

  it('tailLog: the last entries, and why the journal cannot be read', async () => {
    const { io, commands } = fakeIo([
      [
        /journalctl/,
        {
          stdout: journalLine('a', 1e15) + '\n' + journalLine('b', 2e15) + '\n',
          stderr: 'No journal files were opened due to insufficient permissions.\n',
          code: 1,
        },
      ],
    ]);
    const tail = await targetFor(UNIT).tailLog(io, 50);
    assert.equal(commands[0], 'journalctl -u sglang-k26.service -n 50 -a -o json --no-pager');
    assert.deepEqual(
      tail.entries.map((e) => e.message),
      ['a', 'b'],
    );
    assert.match(tail.problem ?? '', /not readable by this user/);
  });
});

describe('Target: a unit that wraps docker run', () => {
  const WRAPPED = SHOW.replace(
    /argv\[\]=[^;]*;/,
    'argv[]=/usr/bin/docker run -d --name sg lmsysorg/sglang python3 -m sglang.launch_server --model-path /models/Kimi ;',
  );

  it('readState reads the container too; a detached one logs to docker logs, and that log ends with it', async () => {
    const { io, commands } = fakeIo([
      [/systemctl show/, { stdout: WRAPPED }],
      [/docker.* inspect/, { stdout: 'Error: No such object: sg\n' }],
    ]);
    const target = targetFor(UNIT);
    const state = await target.readState(io);
    assert.equal(commands.length, 2);
    assert.match(commands[1]!, /^sudo -n docker inspect --type container --format .* -- sg 2>&1$/);
    // Active unit, no container: the container is the service and it is gone.
    assert.equal(state.unit.activeState, 'failed');
    assert.equal(target.logFollowEndsWithService, true);
    await target.followLog(io, 0, { onEntry: () => undefined, onStderr: () => undefined });
    assert.match(commands[2]!, /docker logs --follow --timestamps .* -- sg/);
  });
});

describe('Target: a container and a compose service', () => {
  it('restart: docker restart NAME; the Docker socket refusing is access-denied', async () => {
    const ok = fakeIo();
    assert.deepEqual(await targetFor(CONTAINER).restart(ok.io), { ok: true });
    assert.deepEqual(ok.commands, ['sudo -n docker restart -- sglang']);
    const denied = fakeIo([
      [
        /restart/,
        {
          code: 1,
          stderr:
            'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock\n',
        },
      ],
    ]);
    const result = await targetFor({ ...CONTAINER, sudo: false }).restart(denied.io);
    assert.equal(!result.ok && result.error.kind, 'access-denied');
    assert.match(
      !result.ok ? result.error.message : '',
      /^docker restart sglang failed: the login user may not use Docker on gpu1/,
    );
  });

  it('a compose service restarts through compose, and names itself', async () => {
    const { io, commands } = fakeIo();
    const target = targetFor(COMPOSE);
    assert.equal(target.kind, 'compose');
    assert.equal(target.label, 'compose service sglang');
    assert.equal(target.argsEdit.how, 'compose-file');
    await target.restart(io);
    assert.match(commands[0]!, /dc -f "\$1" restart "\$2";.* sh \/srv\/docker-compose\.yml sglang$/s);
  });

  it('readState: a container that is not there is inactive; docker inspect refused is a TargetError', async () => {
    const missing = fakeIo([[/inspect/, { stdout: 'Error: No such object: sglang\n' }]]);
    const state = await targetFor(CONTAINER).readState(missing.io);
    assert.equal(state.unit.manager, 'docker');
    assert.notEqual(state.unit.activeState, 'active');
    const refused = fakeIo([
      [/inspect/, { stdout: 'permission denied while trying to connect to the Docker daemon socket\n' }],
    ]);
    await assert.rejects(
      targetFor({ ...CONTAINER, sudo: false }).readState(refused.io),
      (e: unknown) => e instanceof TargetError && e.kind === 'access-denied',
    );
  });

  it('followLog and tailLog: docker logs --timestamps, each line an entry', async () => {
    const entries: LogEntry[] = [];
    const { io, commands } = fakeIo(
      [[/docker logs/, { stdout: '2026-11-30T14:29:02.324652777Z Load weight begin.\n' }]],
      { lines: ['2026-11-30T14:29:03.000000000Z Capture cuda graph begin.'], stderr: [] },
    );
    const target = targetFor(CONTAINER);
    await target.followLog(io, 0, { onEntry: (e) => entries.push(e), onStderr: () => undefined });
    const tail = await target.tailLog(io, 10);
    assert.match(commands[0]!, /docker logs --follow --timestamps/);
    assert.match(commands[1]!, /docker logs --timestamps --tail 10/);
    assert.deepEqual(
      [...entries, ...tail.entries].map((e) => e.message),
      ['Capture cuda graph begin.', 'Load weight begin.'],
    );
    assert.equal(target.logFollowEndsWithService, true);
  });
});
