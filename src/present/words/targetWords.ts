/**
 * What the targets (systemd, docker, Slurm) say when reading or changing a server's command line
 * fails: the step, what the host answered, and what is left as it was.
 */

/** A step on the host that exited non-zero; `exit` is its code or signal ("?" when neither). */
export function stepFailed(what: string, exit: string | number, stderr: string): string {
  return `${what} failed (exit ${exit}): ${stderr}`;
}

/** A privileged step refused, with the host's words and what the user can do. */
export function privilegedStepFailed(what: string, end: string, line: string, text: string, hint: string): string {
  return `${what} failed (${end}): ${line}: ${text}${hint}`;
}

/** How a command ended when not by an exit code. */
export function endedBy(code: number | null, signal: string | undefined): string {
  return code !== null ? `exit ${code}` : `signal ${signal ?? 'unknown'}`;
}

/** A sudo refusal's way out; `rulesHint` is where the sudoers rules are (a hint mark). */
export function sudoWayOut(rulesHint: string): string {
  return ` Set "sudo": true for this server and ${rulesHint}, or connect as a user who may do this.`;
}

export function stepFailedWith(what: string, message: string): string {
  return `${what} failed: ${message}`;
}

export function notWrittenBack(file: string): string {
  return `${file} does not hold what was written (changed meanwhile?); the previous file was put back`;
}

export function compareFailed(file: string, backup: string, stderr: string): string {
  return `comparing ${file} with ${backup} failed: ${stderr}`;
}

export function loginHomeUnknown(host: string | undefined, stderr: string): string {
  return `the login user's home on ${host ?? 'the login node'} is unknown: ${stderr}`;
}

export function noTargetKind(server: string): string {
  return `${server}: no target kind runs this server`;
}

/** The unit's ExecStart holds no command of the engines named (`engines`: "SGLang or vLLM"). */
export function noServerCommand(unit: string, engines: string, first: string): string {
  return `${unit}: no ${engines} server command in ExecStart (${first})`;
}

export function severalCommands(unit: string, count: number): string {
  return `${unit}: ExecStart has ${count} commands; only a single command line can be rewritten`;
}

export function noUnitFile(unit: string): string {
  return `${unit}: systemd knows no unit file for it (FragmentPath is empty)`;
}

export function laterDropIn(source: string, ours: string): string {
  return `ExecStart is set in ${source}, which systemd reads after ${ours}; change that file instead`;
}

export function unexpectedDropIn(out: string): string {
  return `unexpected output while reading the drop-in: ${out}`;
}

export function catShows(execStart: string): string {
  return `systemctl cat shows ExecStart ${execStart}`;
}

export function showReports(argv: string): string {
  return `systemctl show reports ExecStart argv ${argv}`;
}

export function notOurDropIn(file: string, marker: string): string {
  return `${file} was not written by Kimi Service (no "${marker}" line); it is left as it is`;
}

export function unitNameNeedsEscaping(unit: string): string {
  return `The unit name ${JSON.stringify(unit)} has characters that sudoers would read specially (\\ : , =); write the rules by hand`;
}

export function userNameNeedsQuoting(user: string): string {
  return `The user name ${JSON.stringify(user)} would need quoting in sudoers; write the rules by hand`;
}

export function unbalancedQuote(quote: string): string {
  return `unbalanced ${quote} in ExecStart`;
}

export const EMPTY_COMMAND_LINE = 'empty command line';

export function systemdPrefixExecutable(executable: string): string {
  return `executable "${executable}" starts with a systemd prefix character`;
}

// What a change of the command line logs, step by step.

export function unitWarning(warning: string): string {
  return `unit: ${warning}`;
}

export function execStartOf(unit: string, file: string | undefined, argv: readonly string[]): string {
  return `ExecStart of ${unit} (from ${file ?? 'unit'}): ${argv.join(' ')}`;
}

/** The change is there already; `where` is the file that holds it ("" when the unit says it). */
export function alreadySet(label: string, where: string): string {
  return `${label}: already set${where ? ` in ${where}` : ''}; nothing to change`;
}

export function alreadyIn(label: string, file: string): string {
  return `${label}: already in ${file}; nothing to change`;
}

export function couldNotRestore(file: string, error: string): string {
  return `could not restore ${file}: ${error}`;
}

/** A file written; `backup` is where the previous one is kept (none: there was none). */
export function wroteFile(file: string, backup: string | undefined): string {
  return `wrote ${file}${backup !== undefined ? ` (previous kept as ${backup})` : ''}`;
}

export function restoredFrom(file: string, backup: string): string {
  return `restored ${file} from ${backup}`;
}

/** A drop-in rolled back: the previous one written again, or ours removed (`hadPrevious` false). */
export function dropInRolledBack(file: string, hadPrevious: boolean): string {
  return hadPrevious ? `restored the previous ${file}` : `removed ${file}`;
}

export function daemonReloadDone(rollback: boolean): string {
  return rollback ? 'systemctl daemon-reload done (rollback)' : 'systemctl daemon-reload done';
}

export function execStartNotEffective(error: string): string {
  return `the new ExecStart did not take effect: ${error}; rolling back`;
}
