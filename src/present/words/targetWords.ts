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
