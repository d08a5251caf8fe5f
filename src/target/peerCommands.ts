/**
 * The commands the Target of a server and its command-line edit build for that entry, each
 * named, with at most one parameter: what the broker's owner builds itself when another window
 * asks for one of them by name (broker/hostOps.ts). Pure.
 */
import type { ServerProfile } from '../config/config';
import { normalizeUnit, type HostCommand } from '../transport/shell';
import { COMPOSE_BACKUP_SUFFIX } from './docker/composeParsers';
import { inspectCommand, logsTailCommand } from './docker/dockerTarget';
import { journalTailCommand } from './journalctl';
import { readDropInCommand, readRollbackCommand, unitReadCommands } from './systemd/argvChange';
import { dropInLocation, privilegedArgv } from './systemd/sudoers';
import { showCommand } from './systemd/systemd';

/** What a command's parameter is: a whole number, an absolute path, systemd property names (comma-joined). */
export type CommandParam = 'count' | 'path' | 'properties';

/** The Target's operations, by name (not every one exists for every kind of entry). */
export const TARGET_OPS = [
  'unit-show',
  'unit-cmdline',
  'unit-journal-tail',
  'unit-cat',
  'unit-show-paths',
  'drop-in-read',
  'drop-in-read-rollback',
  'daemon-reload',
  'drop-in-mkdir',
  'drop-in-remove',
  'drop-in-write',
  'drop-in-write-backup',
  'container-inspect',
  'container-logs-tail',
  'compose-read',
  'compose-backup',
  'compose-restore',
  'compose-touch',
  'compose-compare',
  'compose-backup-exists',
  'compose-write',
] as const;
export type TargetOp = (typeof TARGET_OPS)[number];

export interface CommandShape<Op extends string = TargetOp> {
  readonly op: Op;
  readonly param?: CommandParam;
  /** Takes its standard input (a file's new text). */
  readonly stdin?: true;
  build(value: string): HostCommand;
}

const fixed = (op: TargetOp, command: HostCommand, stdin?: true): CommandShape => ({
  op,
  build: () => command,
  ...(stdin ? { stdin } : {}),
});
const onHost = (op: TargetOp, build: (value: string) => HostCommand, param: CommandParam): CommandShape => ({
  op,
  build,
  param,
});

/** The commands the Target of `server` and its command-line edit build, for this entry alone. */
export function targetCommandShapes(server: ServerProfile): CommandShape[] {
  const sudo = server.sudo;
  const docker = server.docker;
  if (server.slurm) return [];
  if (docker) {
    const reads = [
      fixed('container-inspect', inspectCommand(docker, sudo)),
      onHost('container-logs-tail', (n) => logsTailCommand(docker, sudo, Number(n)), 'count'),
    ];
    if (docker.kind !== 'compose') return reads;
    const file = docker.file;
    const backup = `${file}${COMPOSE_BACKUP_SUFFIX}`;
    const edit: [TargetOp, string[]][] = [
      ['compose-read', ['cat', '--', file]],
      ['compose-backup', ['cp', '-p', '--', file, backup]],
      ['compose-restore', ['cp', '--', backup, file]],
      ['compose-touch', ['touch', '--', file]],
      ['compose-compare', ['cmp', '-s', '--', file, backup]],
      ['compose-backup-exists', ['test', '-e', backup]],
    ];
    return [
      ...reads,
      ...edit.map(([op, argv]) => fixed(op, { argv, sudo })),
      fixed('compose-write', { argv: ['tee', '--', file], sudo, discardStdout: true }, true),
    ];
  }
  const unit = normalizeUnit(server.unit);
  const where = dropInLocation(unit);
  const reads = unitReadCommands(unit);
  return [
    onHost('unit-show', (properties) => showCommand(unit, properties.split(',')), 'properties'),
    onHost('unit-cmdline', (pid) => ({ argv: ['cat', '--', `/proc/${Number(pid)}/cmdline`] }), 'count'),
    onHost('unit-journal-tail', (n) => journalTailCommand(unit, Number(n)), 'count'),
    fixed('unit-cat', reads.cat),
    fixed('unit-show-paths', reads.show),
    fixed('drop-in-read', readDropInCommand(where.dir, where.file)),
    fixed('drop-in-read-rollback', readRollbackCommand(where.file, where.backup)),
    fixed('daemon-reload', { argv: privilegedArgv.daemonReload(), sudo }),
    fixed('drop-in-mkdir', { argv: privilegedArgv.mkdir(where.dir), sudo }),
    fixed('drop-in-remove', { argv: privilegedArgv.rm(where.file), sudo }),
    fixed('drop-in-write', { argv: privilegedArgv.tee(where.file), sudo, discardStdout: true }, true),
    fixed('drop-in-write-backup', { argv: privilegedArgv.tee(where.backup), sudo, discardStdout: true }, true),
  ];
}
