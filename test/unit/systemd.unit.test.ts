import { strict as assert } from 'node:assert';
import { exitDescription, hasRunningProcess } from '../../src/monitor/state/unitFailure';
import { shellLine } from '../../src/transport/shell';
import {
  UNIT_PROPERTIES,
  parseExecStartProperty,
  parseShow,
  parseSystemdTimestamp,
  showCommand,
  toServiceStatus,
} from '../../src/target/systemd/systemd';

const RUNNING = `Id=sglang-k26-ddtree.service
LoadState=loaded
ActiveState=active
SubState=running
MainPID=2403371
ExecMainPID=2403371
ExecMainStatus=0
ExecMainCode=0
ExecMainStartTimestamp=Mon 2026-11-30 05:40:12 UTC
ExecMainExitTimestamp=
NRestarts=0
Result=success
FragmentPath=/etc/systemd/system/sglang-k26-ddtree.service
DropInPaths=/etc/systemd/system/sglang-k26-ddtree.service.d/10-parsers.conf /etc/systemd/system/sglang-k26-ddtree.service.d/20-env.conf
NeedDaemonReload=no
ActiveEnterTimestamp=Mon 2026-11-30 05:40:12 UTC
InvocationID=5f0c7a3e1d2b4c8f9a0b1c2d3e4f5a6b
ControlGroup=/system.slice/sglang-k26-ddtree.service
Environment=A=b=c
`;

describe('systemd: show', () => {
  it('command lists the properties and quotes the unit', () => {
    assert.equal(
      shellLine(showCommand('sglang-k26-ddtree.service')),
      `TZ=UTC systemctl show --no-pager -p ${UNIT_PROPERTIES.join(',')} sglang-k26-ddtree.service`,
    );
    assert.match(shellLine(showCommand('a;rm -rf /')), / 'a;rm -rf \/'$/);
    assert.throws(() => showCommand('x', ['Id;ls']));
  });

  it('parses Key=Value with "=" inside values', () => {
    const p = parseShow(RUNNING);
    assert.equal(p['Environment'], 'A=b=c');
    assert.equal(p['ExecMainExitTimestamp'], '');
    assert.equal(p['MainPID'], '2403371');
  });

  it('a running unit', () => {
    const s = toServiceStatus(parseShow(RUNNING));
    assert.deepEqual(s, {
      loadState: 'loaded',
      activeState: 'active',
      subState: 'running',
      mainPid: 2403371,
      nRestarts: 0,
      result: 'success',
      execMainStatus: 0,
      execMainStartedAt: Date.UTC(2026, 10, 30, 5, 40, 12),
      fragmentPath: '/etc/systemd/system/sglang-k26-ddtree.service',
      dropInPaths: [
        '/etc/systemd/system/sglang-k26-ddtree.service.d/10-parsers.conf',
        '/etc/systemd/system/sglang-k26-ddtree.service.d/20-env.conf',
      ],
      needDaemonReload: false,
      id: 'sglang-k26-ddtree.service',
      invocationId: '5f0c7a3e1d2b4c8f9a0b1c2d3e4f5a6b',
      controlGroup: '/system.slice/sglang-k26-ddtree.service',
      activeEnteredAt: Date.UTC(2026, 10, 30, 5, 40, 12),
      execMainPid: 2403371,
    });
    assert.equal(hasRunningProcess(s), true);
  });

  it('a crashed unit (failed, exit status 1)', () => {
    const s = toServiceStatus(
      parseShow(
        'ActiveState=failed\nSubState=failed\nMainPID=0\nExecMainStatus=1\nExecMainCode=1\nResult=exit-code\nNRestarts=0\nExecMainExitTimestamp=Mon 2026-11-30 05:42:00 UTC\nNeedDaemonReload=yes\n',
      ),
    );
    assert.equal(s.execMainCode, 'exited');
    assert.equal(s.execMainExitedAt, Date.UTC(2026, 10, 30, 5, 42, 0));
    assert.equal(s.needDaemonReload, true);
    assert.equal(exitDescription(s), 'exited with status 1');
    assert.equal(hasRunningProcess(s), false);
    assert.equal(s.activeState, 'failed');
  });

  it('killed by a signal, auto-restart (crash loop)', () => {
    const s = toServiceStatus(
      parseShow(
        'ActiveState=activating\nSubState=auto-restart\nMainPID=0\nExecMainStatus=9\nExecMainCode=2\nResult=signal\nNRestarts=3\n',
      ),
    );
    assert.equal(exitDescription(s), 'killed by signal 9');
    assert.equal(s.nRestarts, 3);
    assert.deepEqual([s.activeState, s.subState], ['activating', 'auto-restart']);
    assert.equal(hasRunningProcess(s), false);
    const dumped = toServiceStatus(
      parseShow('ActiveState=failed\nSubState=failed\nExecMainStatus=11\nExecMainCode=dumped\nResult=core-dump\n'),
    );
    assert.equal(exitDescription(dumped), 'killed by signal 11 (core dumped)');
    const word = toServiceStatus(parseShow('ExecMainStatus=15\nExecMainCode=killed\n'));
    assert.equal(exitDescription(word), 'killed by signal 15');
    assert.equal(
      toServiceStatus(parseShow('ActiveState=activating\nSubState=auto-restart-queued\nResult=exit-code\n')).subState,
      'auto-restart-queued',
    );
  });

  it('stopped and starting units', () => {
    const stopped = toServiceStatus(parseShow('ActiveState=inactive\nSubState=dead\nMainPID=0\nResult=success\n'));
    assert.equal(hasRunningProcess(stopped), false);
    assert.deepEqual([stopped.activeState, stopped.result], ['inactive', 'success']);
    const starting = toServiceStatus(parseShow('ActiveState=activating\nSubState=start\nMainPID=42\nResult=success\n'));
    assert.equal(hasRunningProcess(starting), true);
    assert.deepEqual([starting.activeState, starting.result], ['activating', 'success']);
  });

  it('timestamps', () => {
    assert.equal(parseSystemdTimestamp('Mon 2026-11-30 05:40:12 UTC'), Date.UTC(2026, 10, 30, 5, 40, 12));
    assert.equal(parseSystemdTimestamp('Mon 2026-11-30 05:40:12.250000 UTC'), Date.UTC(2026, 10, 30, 5, 40, 12, 250));
    assert.equal(parseSystemdTimestamp('Mon 2026-11-30 06:40:12 +0100'), Date.UTC(2026, 10, 30, 5, 40, 12));
    assert.equal(parseSystemdTimestamp('@1795930812'), 1795930812000);
    assert.equal(parseSystemdTimestamp(''), undefined);
    assert.equal(parseSystemdTimestamp('n/a'), undefined);
    assert.equal(parseSystemdTimestamp('Mon 2026-11-30 06:40:12 CET'), undefined);
  });
});

describe('systemd: ExecStart', () => {
  const argv =
    '/opt/sglang/bin/python -m sglang.launch_server --model-path /root/models/Kimi-K2.6 --tp 8 --port 30001 --tool-call-parser kimi_k2 --reasoning-parser kimi_k2';
  const prop = `{ path=/opt/sglang/bin/python ; argv[]=${argv} ; ignore_errors=no ; start_time=[Mon 2026-11-30 05:40:12 UTC] ; stop_time=[n/a] ; pid=2403371 ; code=(null) ; status=0/0 }`;

  it('systemctl show form', () => {
    const a = parseExecStartProperty(prop);
    assert.deepEqual(a, argv.split(' '));
  });

  it('ExecStartEx form (flags=) and an argv holding " ; "', () => {
    const ex =
      '{ path=/bin/sh ; argv[]=/bin/sh -c a ; b ; flags= ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }';
    assert.deepEqual(parseExecStartProperty(ex), ['/bin/sh', '-c', 'a', ';', 'b']);
  });

  it('a quoted word is one argument; quotes inside a word stay', () => {
    const q = `{ path=/x ; argv[]=/x --served-model-name "Kimi K2.6" --json-model-override-args {"a":1} 'b c' ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }`;
    assert.deepEqual(parseExecStartProperty(q), [
      '/x',
      '--served-model-name',
      'Kimi K2.6',
      '--json-model-override-args',
      '{"a":1}',
      'b c',
    ]);
  });

  it('a bare command line', () => {
    assert.deepEqual(parseExecStartProperty('/usr/bin/foo --bar  baz'), ['/usr/bin/foo', '--bar', 'baz']);
    assert.deepEqual(parseExecStartProperty(''), []);
  });
});
