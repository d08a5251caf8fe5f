/**
 * Changing the server's command line on the GPU host: read the unit, plan, confirm the diff,
 * write a drop-in, daemon-reload, check that systemd now runs the new command line; and roll
 * back to the drop-in as it was: the systemd kind's `argsEdit` (./dropInEditor.ts), which the
 * parsers and the load advice both use.
 * No VS Code here: everything reaches the world through `ParserChangeDeps`.
 */
import {
  commandLine,
  isSudoRefusalText,
  normalizeUnit,
  privilegedCommand,
  type HostCommand,
} from '../../transport/shell';
import { engineLabels, type ArgvPlanner } from '../../engine/engine';
import { findServerInUnit, parseSystemctlCat, renderDropIn, type ParsedUnit } from './execStartSyntax';
import { DROP_IN_NAME, dropInLocation, privilegedArgv, sudoRefusalMessage } from './sudoers';
import { parseExecStartProperty, parseShow } from './systemd';
import { ParserChangeError, planOrRefuse, type ParserChangeDeps } from '../argsEdit';
import { hintMark } from '../../util/hintMark';
import {
  catShows,
  endedBy,
  laterDropIn,
  noServerCommand,
  notOurDropIn,
  noUnitFile,
  privilegedStepFailed,
  severalCommands,
  showReports,
  stepFailed,
  stepFailedWith,
  sudoWayOut,
  unexpectedDropIn,
  unitWarning,
  execStartOf,
  alreadySet,
  couldNotRestore,
  wroteFile,
  daemonReloadDone,
  execStartNotEffective,
  dropInRolledBack,
} from '../../present/words/targetWords';
import { dropInStep } from '../../present/words/editStepWords';

/** What `rollback` needs to restore the state before the change exactly. */
export interface RollbackPlan {
  readonly unit: string;
  readonly dropInPath: string;
  /** Content of the drop-in before the change; null when there was none. */
  readonly previousContent: string | null;
  /** Copy of the previous drop-in kept next to it (set when previousContent is not null). */
  readonly backupPath?: string;
  /** The `.d` directory did not exist before. */
  readonly createdDir: boolean;
}

export type EnableResult =
  | { readonly kind: 'already-set'; readonly argv: readonly string[] }
  | { readonly kind: 'cancelled' }
  | {
      readonly kind: 'changed';
      readonly rollback: RollbackPlan;
      readonly oldArgv: readonly string[];
      readonly newArgv: readonly string[];
      readonly diff: string;
    };

/** The first comment of every drop-in this flow writes. */
export const WRITTEN_BY = 'Written by Kimi Service';
const NO_PREVIOUS = 'Before it: no drop-in (roll back removes this file).';
const PREVIOUS_KEPT = 'Before it: the drop-in now kept in ';

/**
 * The drop-in says what was there before it, so a roll back asked later (another session, the
 * CLI, another machine) restores exactly that, from the host alone.
 */
function previousMarker(previousContent: string | null, backupPath: string): string {
  return previousContent === null ? NO_PREVIOUS : `${PREVIOUS_KEPT}${backupPath}`;
}

/** What a change reads of the unit: its files as systemd reads them, and where they are. */
export function unitReadCommands(unit: string): { readonly cat: HostCommand; readonly show: HostCommand } {
  return {
    cat: { argv: ['systemctl', 'cat', '--no-pager', '--', unit] },
    show: { argv: ['systemctl', 'show', '--no-pager', '-p', 'FragmentPath,DropInPaths,ExecStart', '--', unit] },
  };
}

/** Reads the drop-in folder's presence and the drop-in's text, without sudo (world-readable). */
export function readDropInCommand(dir: string, file: string): HostCommand {
  return {
    argv: [
      'sh',
      '-c',
      [
        'd=$1; f=$2',
        'if [ -d "$d" ]; then echo dir=yes; else echo dir=no; fi',
        'if [ -e "$f" ]; then echo file=yes; exec cat -- "$f"; else echo file=no; fi',
      ].join('\n'),
      'sh',
      dir,
      file,
    ],
  };
}

/** Reads the drop-in's backup (its size first) and the drop-in itself. */
export function readRollbackCommand(file: string, backup: string): HostCommand {
  return {
    argv: [
      'sh',
      '-c',
      [
        'f=$1; b=$2',
        'if [ -e "$b" ]; then echo backup=$(wc -c < "$b"); cat -- "$b"; else echo backup=no; fi',
        'if [ -e "$f" ]; then echo file=yes; exec cat -- "$f"; else echo file=no; fi',
      ].join('\n'),
      'sh',
      file,
      backup,
    ],
  };
}

async function run(deps: ParserChangeDeps, what: string, command: HostCommand): Promise<string> {
  const r = await deps.exec(command);
  if (r.code !== 0) throw new ParserChangeError(stepFailed(what, r.code ?? 'signal', r.stderr.trim().slice(0, 500)));
  return r.stdout;
}

/**
 * One privileged step, as the exact command a sudoers rule allows (see sudoers.ts), with
 * `input` on its stdin. A refusal by sudo names the command and the way to allow it.
 */
async function runPrivileged(
  deps: ParserChangeDeps,
  unit: string,
  what: string,
  argv: readonly string[],
  input?: string,
): Promise<void> {
  const line = privilegedCommand(argv, deps.sudo);
  let r;
  if (input === undefined) r = await deps.exec({ argv, sudo: deps.sudo });
  else r = await deps.exec({ argv, sudo: deps.sudo, discardStdout: true }, { stdin: input });
  if (r.code === 0) return;
  if (deps.sudo && isSudoRefusalText(r.stderr)) {
    const message = sudoRefusalMessage({
      host: deps.host,
      unit,
      action: commandLine(argv),
      command: line,
      stderr: r.stderr,
    });
    throw new ParserChangeError(stepFailedWith(what, message), true);
  }
  const text = r.stderr.trim().slice(0, 500);
  const hint =
    !deps.sudo && /permission denied|access denied|interactive authentication required/i.test(text)
      ? sudoWayOut(hintMark('install-sudoers-rules'))
      : '';
  throw new ParserChangeError(privilegedStepFailed(what, endedBy(r.code, r.signal ?? undefined), line, text, hint));
}

export async function readUnit(
  deps: ParserChangeDeps,
  unit: string,
): Promise<{ parsed: ParsedUnit; show: Record<string, string> }> {
  const cat = await run(deps, 'systemctl cat', unitReadCommands(unit).cat);
  const show = parseShow(await run(deps, 'systemctl show', unitReadCommands(unit).show));
  return { parsed: parseSystemctlCat(cat), show };
}

function serverCommandOf(parsed: ParsedUnit, unit: string): NonNullable<ReturnType<typeof findServerInUnit>> {
  const found = findServerInUnit(parsed);
  if (!found) {
    const first = parsed.commands[0]?.argv.join(' ') ?? '(none)';
    throw new ParserChangeError(noServerCommand(unit, engineLabels(), first.slice(0, 200)));
  }
  if (parsed.commands.length > 1) {
    throw new ParserChangeError(severalCommands(unit, parsed.commands.length));
  }
  return found;
}

/**
 * Reads the unit, plans the change, shows the diff (nothing is written without a yes), writes
 * the drop-in, daemon-reloads, and checks that the new command line took effect (else rolls
 * back). The caller restarts; on a failed start it calls `rollback`.
 */
export async function changeServerArgv(
  deps: ParserChangeDeps,
  unitName: string,
  planner: ArgvPlanner,
): Promise<EnableResult> {
  const unit = normalizeUnit(unitName);
  const where = dropInLocation(unit, deps.unitDir);
  const dropInPath = where.file;

  const { parsed, show } = await readUnit(deps, unit);
  for (const w of parsed.warnings) deps.log(unitWarning(w));
  if (!show.FragmentPath) throw new ParserChangeError(noUnitFile(unit));
  const { command, location } = serverCommandOf(parsed, unit);
  deps.log(execStartOf(unit, command.file, command.argv));
  const plan = planOrRefuse(planner, command.argv, location);
  const label = planner.label(location);
  if (plan.kind === 'unsupported') throw new ParserChangeError(plan.reason);
  if (plan.kind === 'already-set') {
    deps.log(alreadySet(label, ''));
    return { kind: 'already-set', argv: command.argv };
  }
  // Drop-ins are read in file-name order: one sorting after ours would still win.
  const source = command.file;
  if (source && source.includes('.d/') && source !== dropInPath && basename(source) > DROP_IN_NAME) {
    throw new ParserChangeError(laterDropIn(source, DROP_IN_NAME));
  }
  if (!(await deps.confirmDiff(plan.diff))) return { kind: 'cancelled' };

  // What is there now, read without sudo (unit files and drop-ins are world-readable).
  const out = await run(deps, dropInStep('read-current'), readDropInCommand(where.dir, dropInPath));
  const m = /^dir=(yes|no)\nfile=(yes|no)\n/.exec(out);
  if (!m) throw new ParserChangeError(unexpectedDropIn(out.slice(0, 200)));
  const previousContent = m[2] === 'yes' ? out.slice(m[0].length) : null;
  const text = renderDropIn(plan.newArgv, `${WRITTEN_BY}: ${label}\n${previousMarker(previousContent, where.backup)}`, {
    prefix: command.prefix,
    keepReferences: command.references,
  });
  const rollbackPlan: RollbackPlan = {
    unit,
    dropInPath,
    previousContent,
    ...(previousContent !== null ? { backupPath: where.backup } : {}),
    createdDir: m[1] === 'no',
  };
  // Each write is one exact command at a fixed path (sudoers.ts allows exactly these).
  if (rollbackPlan.createdDir)
    await runPrivileged(deps, unit, dropInStep('create-folder'), privilegedArgv.mkdir(where.dir));
  if (previousContent !== null)
    await runPrivileged(deps, unit, dropInStep('backup'), privilegedArgv.tee(where.backup), previousContent);
  try {
    await runPrivileged(deps, unit, dropInStep('write'), privilegedArgv.tee(dropInPath), text);
  } catch (e) {
    // tee may have truncated the file before it failed: put the previous one back (sudo allowed tee a moment ago).
    if (!(e instanceof ParserChangeError && e.sudoRefused)) {
      await restoreDropIn(deps, rollbackPlan).catch((e2: Error) => deps.log(couldNotRestore(dropInPath, e2.message)));
    }
    throw e;
  }
  deps.log(wroteFile(dropInPath, previousContent !== null ? where.backup : undefined));
  await runPrivileged(deps, unit, 'systemctl daemon-reload', privilegedArgv.daemonReload());
  deps.log(daemonReloadDone(false));

  try {
    await confirmEffective(deps, unit, plan.newArgv, command.references.length === 0);
  } catch (e) {
    deps.log(execStartNotEffective((e as Error).message));
    await rollback(deps, rollbackPlan);
    throw e;
  }
  return { kind: 'changed', rollback: rollbackPlan, oldArgv: command.argv, newArgv: plan.newArgv, diff: plan.diff };
}

/** After daemon-reload: the unit as systemd now reads it runs `newArgv`. */
async function confirmEffective(
  deps: ParserChangeDeps,
  unit: string,
  newArgv: readonly string[],
  compareShow: boolean,
): Promise<void> {
  const { parsed, show } = await readUnit(deps, unit);
  const now = findServerInUnit(parsed)?.command.argv ?? [];
  if (now.join('\0') !== newArgv.join('\0')) {
    throw new ParserChangeError(catShows(now.join(' ').slice(0, 300)));
  }
  // show joins argv with spaces (no quoting) and expands specifiers: compare joined, without references
  const shown = show.ExecStart ? parseExecStartProperty(show.ExecStart).join(' ') : '';
  if (compareShow && shown !== '' && shown !== newArgv.join(' ')) {
    throw new ParserChangeError(showReports(shown.slice(0, 300)));
  }
}

/** The drop-in as it was: its previous content written back, or no drop-in. */
async function restoreDropIn(deps: ParserChangeDeps, plan: RollbackPlan): Promise<void> {
  if (plan.previousContent === null) {
    await runPrivileged(deps, plan.unit, dropInStep('remove'), privilegedArgv.rm(plan.dropInPath));
  } else {
    await runPrivileged(
      deps,
      plan.unit,
      dropInStep('restore'),
      privilegedArgv.tee(plan.dropInPath),
      plan.previousContent,
    );
  }
}

/**
 * Restores the drop-in as it was (content or absence) and daemon-reloads. The caller restarts.
 * A `.d` folder created by the change stays (empty): systemd ignores it, and removing it would
 * take one more sudo rule.
 */
export async function rollback(deps: ParserChangeDeps, plan: RollbackPlan): Promise<void> {
  await restoreDropIn(deps, plan);
  deps.log(dropInRolledBack(plan.dropInPath, plan.previousContent !== null));
  await runPrivileged(deps, plan.unit, 'systemctl daemon-reload', privilegedArgv.daemonReload());
  deps.log(daemonReloadDone(true));
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * The roll back of the drop-in on the host now, read from the host alone: undefined when there is
 * nothing to roll back (no drop-in, or the drop-in is already what its backup holds). A drop-in
 * this flow did not write is refused: it is somebody's own file.
 */
export async function findRollbackPlan(
  deps: Pick<ParserChangeDeps, 'exec' | 'unitDir'>,
  unitName: string,
): Promise<RollbackPlan | undefined> {
  const unit = normalizeUnit(unitName);
  const where = dropInLocation(unit, deps.unitDir);
  const out = await run(deps as ParserChangeDeps, dropInStep('read'), readRollbackCommand(where.file, where.backup));
  const head = /^backup=(no|\d+)\n/.exec(out);
  if (!head) throw new ParserChangeError(unexpectedDropIn(out.slice(0, 200)));
  let rest = out.slice(head[0].length);
  let backup: string | null = null;
  if (head[1] !== 'no') {
    const size = Number(head[1]);
    backup = Buffer.from(rest, 'utf8').subarray(0, size).toString('utf8');
    rest = rest.slice(backup.length);
  }
  const file = /^file=(yes|no)\n/.exec(rest);
  if (!file) throw new ParserChangeError(unexpectedDropIn(out.slice(0, 200)));
  if (file[1] === 'no') return undefined;
  const current = rest.slice(file[0].length);
  if (!current.includes(WRITTEN_BY)) {
    throw new ParserChangeError(notOurDropIn(where.file, WRITTEN_BY));
  }
  const saysNone = current.includes(NO_PREVIOUS);
  // Written before the marker existed: the backup, when there is one, is what came before.
  const previousContent = saysNone ? null : backup;
  if (previousContent !== null && previousContent === current) return undefined;
  return {
    unit,
    dropInPath: where.file,
    previousContent,
    ...(previousContent !== null ? { backupPath: where.backup } : {}),
    createdDir: false,
  };
}
