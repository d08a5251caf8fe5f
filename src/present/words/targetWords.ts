/**
 * What the targets (systemd, docker, Slurm) say when reading or changing a server's command line
 * fails, and the steps a change logs: the step, what the host answered, and what is left as it
 * was, in the display language. Commands, files, directives and the host's own words stay as they are.
 */
import * as l10n from '@vscode/l10n';

/** A step on the host that exited non-zero; `exit` is its code or signal ("?" when neither). */
export function stepFailed(what: string, exit: string | number, stderr: string): string {
  return l10n.t('{0} failed (exit {1}): {2}', what, exit, stderr);
}

/** A privileged step refused, with the host's words and what the user can do. */
export function privilegedStepFailed(what: string, end: string, line: string, text: string, hint: string): string {
  return l10n.t('{0} failed ({1}): {2}: {3}', what, end, line, text) + hint;
}

/** How a command ended when not by an exit code. */
export function endedBy(code: number | null, signal: string | undefined): string {
  if (code !== null) return l10n.t('exit {0}', code);
  return signal !== undefined ? l10n.t('signal {0}', signal) : l10n.t('signal unknown');
}

/** A sudo refusal's way out (after the refusal, a space before it); `rulesHint` is where the sudoers rules are (a hint mark). */
export function sudoWayOut(rulesHint: string): string {
  return ` ${l10n.t('Set "sudo": true for this server and {0}, or connect as a user who may do this.', rulesHint)}`;
}

export function stepFailedWith(what: string, message: string): string {
  return l10n.t('{0} failed: {1}', what, message);
}

export function notWrittenBack(file: string): string {
  return l10n.t('{0} does not hold what was written (changed meanwhile?); the previous file was put back', file);
}

export function compareFailed(file: string, backup: string, stderr: string): string {
  return l10n.t('comparing {0} with {1} failed: {2}', file, backup, stderr);
}

export function loginHomeUnknown(host: string | undefined, stderr: string): string {
  return host !== undefined
    ? l10n.t("the login user's home on {0} is unknown: {1}", host, stderr)
    : l10n.t("the login user's home on the login node is unknown: {0}", stderr);
}

export function noTargetKind(server: string): string {
  return l10n.t('{0}: no target kind runs this server', server);
}

/** The unit's ExecStart holds no command of the engines named (`engines`: "SGLang or vLLM"). */
export function noServerCommand(unit: string, engines: string, first: string): string {
  return l10n.t('{0}: no {1} server command in ExecStart ({2})', unit, engines, first);
}

export function severalCommands(unit: string, count: number): string {
  return l10n.t('{0}: ExecStart has {1} commands; only a single command line can be rewritten', unit, count);
}

export function noUnitFile(unit: string): string {
  return l10n.t('{0}: systemd knows no unit file for it (FragmentPath is empty)', unit);
}

export function laterDropIn(source: string, ours: string): string {
  return l10n.t('ExecStart is set in {0}, which systemd reads after {1}; change that file instead', source, ours);
}

export function unexpectedDropIn(out: string): string {
  return l10n.t('unexpected output while reading the drop-in: {0}', out);
}

export function catShows(execStart: string): string {
  return l10n.t('systemctl cat shows ExecStart {0}', execStart);
}

export function showReports(argv: string): string {
  return l10n.t('systemctl show reports ExecStart argv {0}', argv);
}

export function notOurDropIn(file: string, marker: string): string {
  return l10n.t('{0} was not written by Kimi Service (no "{1}" line); it is left as it is', file, marker);
}

export function unitNameNeedsEscaping(unit: string): string {
  return l10n.t(
    'The unit name {0} has characters that sudoers would read specially (\\ : , =); write the rules by hand',
    JSON.stringify(unit),
  );
}

export function userNameNeedsQuoting(user: string): string {
  return l10n.t('The user name {0} would need quoting in sudoers; write the rules by hand', JSON.stringify(user));
}

export function unbalancedQuote(quote: string): string {
  return l10n.t('unbalanced {0} in ExecStart', quote);
}

export function emptyCommandLine(): string {
  return l10n.t('empty command line');
}

export function systemdPrefixExecutable(executable: string): string {
  return l10n.t('executable "{0}" starts with a systemd prefix character', executable);
}

// What a change of the command line logs, step by step.

export function unitWarning(warning: string): string {
  return l10n.t('unit: {0}', warning);
}

export function execStartOf(unit: string, file: string | undefined, argv: readonly string[]): string {
  return file !== undefined
    ? l10n.t('ExecStart of {0} (from {1}): {2}', unit, file, argv.join(' '))
    : l10n.t('ExecStart of {0} (from unit): {1}', unit, argv.join(' '));
}

/** The change is there already; `where` is the file that holds it ("" when the unit says it). */
export function alreadySet(label: string, where: string): string {
  return where
    ? l10n.t('{0}: already set in {1}; nothing to change', label, where)
    : l10n.t('{0}: already set; nothing to change', label);
}

export function alreadyIn(label: string, file: string): string {
  return l10n.t('{0}: already in {1}; nothing to change', label, file);
}

export function couldNotRestore(file: string, error: string): string {
  return l10n.t('could not restore {0}: {1}', file, error);
}

/** A file written; `backup` is where the previous one is kept (none: there was none). */
export function wroteFile(file: string, backup: string | undefined): string {
  return backup !== undefined ? l10n.t('wrote {0} (previous kept as {1})', file, backup) : l10n.t('wrote {0}', file);
}

export function restoredFrom(file: string, backup: string): string {
  return l10n.t('restored {0} from {1}', file, backup);
}

/** A drop-in rolled back: the previous one written again, or ours removed (`hadPrevious` false). */
export function dropInRolledBack(file: string, hadPrevious: boolean): string {
  return hadPrevious ? l10n.t('restored the previous {0}', file) : l10n.t('removed {0}', file);
}

export function daemonReloadDone(rollback: boolean): string {
  return rollback ? l10n.t('systemctl daemon-reload done (rollback)') : l10n.t('systemctl daemon-reload done');
}

export function execStartNotEffective(error: string): string {
  return l10n.t('the new ExecStart did not take effect: {0}; rolling back', error);
}

/** systemctl refused a restart for lack of rights: `said` its first line, `rulesHint` where the sudoers rules are (a hint mark). */
export function notAllowedToRestart(unit: string, said: string, command: string, rulesHint: string): string {
  return l10n.t(
    'Not allowed to restart {0}: {1} ({2}). Set "sudo": true for this server and {3}, or connect as a user who may restart it.',
    unit,
    said,
    command,
    rulesHint,
  );
}

/** `said`: the end of systemctl's words, or undefined when it said nothing. */
export function unitRestartFailed(unit: string, said: string | undefined): string {
  return l10n.t('systemctl restart {0} failed: {1}', unit, said ?? l10n.t('no message'));
}

/** What the systemd kind finds on a host, and where a server's command line is read. */
export function systemdDiscoveryWhat(): string {
  return l10n.t('systemd unit');
}

export function systemdDiscoveryWhere(): string {
  return l10n.t('its ExecStart');
}

/** The machine the extension runs on, where a host is named otherwise. */
export function thisMachine(): string {
  return l10n.t('this machine');
}

/** How to allow a command sudo refused: `rulesHint` where the rules are (a hint mark), `install` the command that installs them. */
export function sudoRulesFix(rulesHint: string, install: string): string {
  return l10n.t('{0} (install them with {1}), or connect as a user who may run it.', rulesHint, install);
}

/** sudo wants a password for `action` on `where`; `command` the refused command line. */
export function sudoAsksPassword(where: string, action: string, command: string, fix: string): string {
  return l10n.t(
    'sudo asks for a password on {0}: allow "{1}" without a password. Refused: {2}. {3}',
    where,
    action,
    command,
    fix,
  );
}

/** sudo does not allow `action` on `where`; `said` its first line. */
export function sudoDoesNotAllow(where: string, action: string, said: string, command: string, fix: string): string {
  return l10n.t('sudo on {0} does not allow "{1}" ({2}). Refused: {3}. {4}', where, action, said, command, fix);
}

/** Why a Slurm job needs no sudoers rule. */
export function slurmNeedsNoRule(label: string): string {
  return l10n.t(
    "{0} needs no sudoers rule: squeue, scontrol, scancel and sbatch act on the login user's own jobs.",
    label,
  );
}

/** journalctl's hint that the login user may not read the journal; `said` its words. */
export function journalNotReadable(said: string): string {
  return l10n.t('the journal is not readable by this user ({0})', said);
}

/** journalctl ended with an error; `said` its words, when it said any. */
export function journalctlExited(status: number, said: string | undefined): string {
  return said
    ? l10n.t('journalctl exited with status {0}: {1}', status, said)
    : l10n.t('journalctl exited with status {0}', status);
}
