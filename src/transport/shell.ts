/**
 * Everything that turns names into text for a POSIX shell on the GPU host.
 * Every string that reaches a remote shell passes through `quote` or `commandLine`; a Target's
 * requests (`HostCommand`) become shell text in `shellLine` alone.
 */
import { isValidAbsolutePath } from '../config/names';
import { UnsafeArgumentError } from './errors';

/** POSIX single-quote quoting: safe for any byte string except NUL. */
export function quote(arg: string): string {
  if (arg !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return singleQuoted(arg);
}

/** Always single-quoted, even a word that needs no quotes (a script a reader compares by eye). */
export function singleQuoted(arg: string): string {
  if (arg.includes('\0')) throw new UnsafeArgumentError('Cannot quote a string containing NUL');
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Quotes each argument and joins them: the result runs `argv` exactly, nothing else. */
export function commandLine(argv: readonly string[]): string {
  if (argv.length === 0) throw new UnsafeArgumentError('Empty command line');
  return argv.map(quote).join(' ');
}

// The name and path rules live with the settings they validate; the shell's callers use them here too.
export { isValidAbsolutePath, isValidUnitName, normalizeUnit } from '../config/names';

export function assertAbsolutePath(p: string, what = 'path'): string {
  if (!isValidAbsolutePath(p))
    throw new UnsafeArgumentError(`Invalid ${what}: ${JSON.stringify(p)} (must be absolute, without NUL or newline)`);
  return p;
}

/**
 * A privileged command as sudo sees it: `argv` quoted word by word, prefixed with `sudo -n` when
 * asked. No `sh -c`: sudo sees the program and its arguments themselves, so a narrow sudoers rule
 * (`/usr/bin/systemctl restart --no-block -- UNIT`, see target/systemd/sudoers.ts) can allow exactly this.
 * `-n` never prompts: a sudo that wants a password fails at once (see `isSudoRefusalText`).
 * Without sudo the same command runs as is. Shell redirections may follow (the caller's shell
 * applies them, not sudo).
 */
export function privilegedCommand(argv: readonly string[], sudo: boolean): string {
  const line = commandLine(argv);
  return sudo ? `sudo -n ${line}` : line;
}

/**
 * A command for the host as a request, not as shell text: its words, and what the shell around
 * them does. `shellLine` turns it into the one line a remote shell runs, so this file is the one
 * place a Target's command is quoted. A compound command (a compose lookup, a fallback between
 * two programs) is `['sh', '-c', SCRIPT, 'sh', ...values]`: the script is constant text, the
 * values reach it as `$1`, `$2`, ... and are never spliced into it.
 */
export interface HostCommand {
  readonly argv: readonly string[];
  /** Run as `sudo -n ARGV...` (see privilegedCommand): what a narrow sudoers rule allows. */
  readonly sudo?: boolean;
  /** Variables set for the command alone (`TZ=UTC systemctl show ...`); not with sudo, which resets them. */
  readonly env?: Readonly<Record<string, string>>;
  /** Its stderr joins its stdout (`2>&1`): the tools that say their errors there (docker inspect). */
  readonly stderrToStdout?: boolean;
  /** Its stdout is dropped (`>/dev/null`): a `tee` that writes a file from stdin. */
  readonly discardStdout?: boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The shell line that runs `command` exactly; throws on a NUL or an environment name a shell would misread. */
export function shellLine(command: HostCommand): string {
  const env = Object.entries(command.env ?? {});
  if (env.length > 0 && command.sudo) throw new Error('sudo resets the environment: no env with sudo');
  const assignments = env.map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new Error(`Invalid environment name: ${JSON.stringify(name)}`);
    return `${name}=${quote(value)} `;
  });
  return `${assignments.join('')}${privilegedCommand(command.argv, command.sudo === true)}${
    command.discardStdout ? ' >/dev/null' : ''
  }${command.stderrToStdout ? ' 2>&1' : ''}`;
}

/** True when stderr says `sudo -n` refused because it needs a password. */
export function isSudoPasswordError(stderr: string): boolean {
  return /sudo: (a password is required|a terminal is required|no tty present)/i.test(stderr);
}

/**
 * True when sudo itself refused to run the command: it wants a password (`-n`), or the sudoers
 * rules do not allow it (`Sorry, user kimi is not allowed to execute '...' as root on host.`).
 */
export function isSudoRefusalText(stderr: string): boolean {
  return (
    isSudoPasswordError(stderr) ||
    /^Sorry, user \S+ is not allowed to execute /im.test(stderr) ||
    /^\S+ is not in the sudoers file/im.test(stderr)
  );
}

/**
 * Wraps a command so its first stdout line is the pid of the process that runs it, which is
 * also its process group (sshd starts each session with setsid). OpenSSH refuses "signal"
 * channel requests for root sessions, so killing the group by pid is the way that works.
 */
export function announcePid(cmd: string): string {
  return `echo "$$"; exec sh -c ${quote(cmd)}`;
}

/**
 * Like `announcePid`, for a command that runs until stopped (a follow, the sampler): it also ends
 * itself, its whole process group, when its stdin reaches EOF. Ending the channel (or losing the
 * connection: sshd closes the channel) then stops it without a second command, and nothing is
 * left running on the host after a network drop. A watchdog subshell holds the channel's stdin;
 * the command itself reads /dev/null. The command is exec'ed, not run as a child: the same
 * process (and group), and the watchdog is no job of its shell (a `wait` in it does not wait for
 * the watchdog). Its exit status is the command's.
 */
export function announcePidEndingWithStdin(cmd: string): string {
  const script =
    'exec 3<&0 </dev/null; (while read -r line <&3; do :; done; kill -s TERM 0) >/dev/null 2>&1 & exec 3<&-; exec sh -c "$1"';
  return `echo "$$"; exec sh -c ${quote(script)} sh ${quote(cmd)}`;
}

/** `kill -s SIG -- -PGID`: the whole process group started by `announcePid` (dash and bash both take this form). */
export function killGroupCommand(pgid: number, signal: 'TERM' | 'KILL'): string {
  if (!Number.isInteger(pgid) || pgid <= 1) throw new UnsafeArgumentError(`Invalid process group: ${pgid}`);
  return `kill -s ${signal} -- -${pgid} 2>/dev/null; true`;
}
