/**
 * The operations the owner runs on a host for another window: a client finds the operation of a
 * line its own code built; the owner builds the line again from its own entry, and refuses an
 * operation the entry has not, or a value of the wrong kind.
 */
import { strict as assert } from 'node:assert';
import { buildHostOp, hostOpOf, type HostOpCall } from '../../src/broker/hostOps';
import type { ServerProfile } from '../../src/config/config';
import { listingCommand, readFileCommand } from '../../src/engine/tokenizer/modelFolder';
import { fsTypeCommand, residencyCommand, warmCancelCommand } from '../../src/host/pageCache';
import { measureResidencyCommand } from '../../src/monitor/forecast/warmCache';
import { inspectCommand, logsTailCommand, restartCommand } from '../../src/target/docker/dockerTarget';
import { journalTailCommand } from '../../src/target/journalctl';
import { readDropInCommand, unitReadCommands } from '../../src/target/systemd/argvChange';
import { dropInLocation, privilegedArgv } from '../../src/target/systemd/sudoers';
import { showCommand, UNIT_PROPERTIES } from '../../src/target/systemd/systemd';
import { shellLine } from '../../src/transport/shell';

const unitServer = { name: 'gpu1', unit: 'sglang.service', sudo: true } as ServerProfile;
const compose = { kind: 'compose', file: '/srv/k/compose.yaml', service: 'sglang', label: 'sglang' } as const;
const composeServer = { name: 'gpu2', unit: 'sglang', sudo: false, docker: compose } as unknown as ServerProfile;
const where = dropInLocation('sglang.service');

/** The line the owner builds for what a client found in `line`: the same line. */
function roundTrip(server: ServerProfile, line: string): HostOpCall {
  const call = hostOpOf(server, line);
  assert.ok(call, `an operation: ${line}`);
  const built = buildHostOp(server, call);
  assert.deepEqual(built, { line }, line);
  return call;
}

describe('broker: the operations on a host the owner runs for another window', () => {
  it("finds the Target's reads, the drop-in edit and the model-folder reads, and the owner builds the same line", () => {
    const lines = [
      shellLine(showCommand('sglang.service', [...UNIT_PROPERTIES, 'ExecStart'])),
      shellLine(showCommand('sglang.service', ['MainPID'])),
      shellLine({ argv: ['cat', '--', '/proc/4711/cmdline'] }),
      shellLine(journalTailCommand('sglang.service', 200)),
      shellLine(unitReadCommands('sglang.service').cat),
      shellLine(readDropInCommand(where.dir, where.file)),
      shellLine({ argv: privilegedArgv.tee(where.file), sudo: true, discardStdout: true }),
      shellLine({ argv: privilegedArgv.daemonReload(), sudo: true }),
      listingCommand("/models/it's here"),
      readFileCommand('/models/k2', 'tokenizer.json'),
      residencyCommand('/models/k2'),
      measureResidencyCommand('/models/a b'),
      fsTypeCommand('/models/k2'),
    ];
    for (const line of lines) roundTrip(unitServer, line);
    assert.deepEqual(roundTrip(unitServer, shellLine(journalTailCommand('sglang.service', 200))), {
      op: 'unit-journal-tail',
      arg: '200',
    });
    assert.deepEqual(roundTrip(unitServer, readFileCommand('/models/k2', 'tokenizer.json')), {
      op: 'model-read',
      arg: '/models/k2',
      file: 'tokenizer.json',
    });
    for (const line of [
      shellLine(inspectCommand(compose, false)),
      shellLine(logsTailCommand(compose, false, 500)),
      shellLine({ argv: ['tee', '--', compose.file], discardStdout: true }),
    ])
      roundTrip(composeServer, line);
  });

  it('finds no operation in a free shell string, another unit, a restart, sudo the entry has not, or any tail added', () => {
    const tail = shellLine(journalTailCommand('sglang.service', 200));
    const none: [ServerProfile, string][] = [
      [unitServer, 'echo hi'],
      [unitServer, `${tail}; rm -rf ~`],
      [unitServer, `${tail} && id`],
      [unitServer, shellLine(journalTailCommand('other.service', 200))],
      [unitServer, shellLine({ argv: privilegedArgv.restart('sglang.service'), sudo: true })],
      [unitServer, shellLine({ argv: privilegedArgv.tee('/etc/sudoers'), sudo: true, discardStdout: true })],
      [unitServer, readFileCommand('/models/k2', 'tokenizer.json').replace('/models/k2', "/m'; id; '")],
      [unitServer, `${listingCommand('/models/k2')}; id`],
      [unitServer, shellLine({ argv: ['cat', '--', '/proc/1/environ'] })],
      // The warm-up's cancel goes with its stream, on the client's own connection.
      [unitServer, warmCancelCommand(31337)],
      [composeServer, shellLine(restartCommand(compose, false))],
      [composeServer, shellLine({ argv: ['tee', '--', compose.file], sudo: true, discardStdout: true })],
      [composeServer, shellLine(journalTailCommand('sglang.service', 200))],
    ];
    for (const [server, line] of none) assert.equal(hostOpOf(server, line), undefined, line);
  });

  it("the owner builds from its own entry: an operation the entry has not, or a value not of the operation's kind, is refused", () => {
    const refused = (server: ServerProfile, call: HostOpCall & { stdin?: boolean }) => {
      const built = buildHostOp(server, call);
      return 'refused' in built ? built.refused : `built ${built.line}`;
    };
    assert.match(refused(unitServer, { op: 'compose-write' }), /not an operation of gpu1/);
    assert.match(refused(composeServer, { op: 'drop-in-write' }), /not an operation of gpu2/);
    assert.match(refused(unitServer, { op: 'unit-journal-tail', arg: '1; id' }), /whole number/);
    assert.match(refused(unitServer, { op: 'unit-journal-tail' }), /whole number/);
    assert.match(refused(unitServer, { op: 'unit-show', arg: 'MainPID;id' }), /properties/);
    assert.match(refused(unitServer, { op: 'model-list', arg: '/m\nid' }), /path/);
    assert.match(refused(unitServer, { op: 'model-read', arg: '/m' }), /not an operation/, 'a model file is named');
    assert.match(refused(unitServer, { op: 'unit-cat', stdin: true }), /takes no input/);
    assert.match(refused(unitServer, { op: 'unit-cat', arg: 'x' }), /takes no value/);
    // A path is one word, quoted by the owner's builder.
    assert.deepEqual(buildHostOp(unitServer, { op: 'fs-type', arg: "/m'; id; '" }), {
      line: fsTypeCommand("/m'; id; '"),
    });
  });
});
