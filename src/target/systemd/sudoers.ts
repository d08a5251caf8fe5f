/**
 * Least privilege: the exact commands the extension runs as root (with `sudo: true`), and the
 * sudoers lines that allow those and nothing more. Both come from here, so they cannot drift
 * apart: the restart, `daemon-reload`, and the parser drop-in's writes at fixed paths.
 * Pure: no VS Code, no I/O.
 */
import { createHash } from 'node:crypto';
import { normalizeUnit } from '../../transport/shell';
import { hintMark } from '../../util/hintMark';
import {
  sudoAsksPassword,
  sudoDoesNotAllow,
  sudoRulesFix,
  thisMachine,
  unitNameNeedsEscaping,
  userNameNeedsQuoting,
} from '../../present/words/targetWords';

/** The drop-in the "Enable parsers" flow writes (systemd reads `*.conf` of `UNIT.d/` in name order). */
export const DROP_IN_NAME = '50-kimi-parsers.conf';
/** Where administrators' unit files and drop-ins live (not the vendor's /usr/lib/systemd/system). */
export const SYSTEM_UNIT_DIR = '/etc/systemd/system';

/**
 * Where Debian 12 / Ubuntu install the programs the rules name (merged /usr: /bin is /usr/bin).
 * sudo looks the command up in its `secure_path` and compares the result with these paths.
 */
export const SUDOERS_PROGRAMS = {
  systemctl: '/usr/bin/systemctl',
  tee: '/usr/bin/tee',
  mkdir: '/usr/bin/mkdir',
  rm: '/usr/bin/rm',
} as const;

export interface DropInLocation {
  /** `/etc/systemd/system/UNIT.d` */
  readonly dir: string;
  /** `/etc/systemd/system/UNIT.d/50-kimi-parsers.conf` */
  readonly file: string;
  /** The previous drop-in is copied here before it is replaced (`.bak` is not read by systemd). */
  readonly backup: string;
}

/** The parser drop-in's paths for `unit` (normalized to `NAME.service`). */
export function dropInLocation(unit: string, unitDir: string = SYSTEM_UNIT_DIR): DropInLocation {
  const dir = `${unitDir}/${normalizeUnit(unit)}.d`;
  const file = `${dir}/${DROP_IN_NAME}`;
  return { dir, file, backup: `${file}.bak` };
}

/** Every privileged command, as argv (the program name without its path: sudo finds it in secure_path). */
export const privilegedArgv = {
  restart: (unit: string): string[] => ['systemctl', 'restart', '--no-block', '--', normalizeUnit(unit)],
  daemonReload: (): string[] => ['systemctl', 'daemon-reload'],
  mkdir: (dir: string): string[] => ['mkdir', '-p', '--', dir],
  /** Writes its stdin to `file` (stdout is thrown away by the caller's redirection). */
  tee: (file: string): string[] => ['tee', '--', file],
  rm: (file: string): string[] => ['rm', '-f', '--', file],
};

// Characters a unit name may have that need no escaping in a sudoers command argument
// (`\`, `:`, `,`, `=` would; sudo also globs `\`).
const SUDOERS_SAFE_UNIT = /^[A-Za-z0-9_.@-]+$/;
// A user name that needs no quoting in sudoers (POSIX portable names, and Samba's trailing `$`).
const SUDOERS_SAFE_USER = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}\$?$/;

function stemOf(unit: string): string {
  return unit.replace(/\.service$/, '');
}

/** A suffix that keeps two units apart when the readable form of their names is the same. */
function nameSuffix(stem: string): string {
  return /^[a-z0-9]+(-[a-z0-9]+)*$/.test(stem) ? '' : `_${createHash('sha256').update(stem).digest('hex').slice(0, 8)}`;
}

/**
 * The sudoers.d file for `unit`: `kimi-NAME` without `.service`, since sudo's `@includedir`
 * skips every file name with a dot in it.
 */
export function sudoersFileName(unit: string): string {
  const stem = stemOf(normalizeUnit(unit));
  return `kimi-${stem.replace(/[^A-Za-z0-9_-]/g, '_')}${nameSuffix(stem)}`;
}

/** `sudo visudo -f /etc/sudoers.d/kimi-NAME`: checks the syntax before it saves. */
export function sudoersInstallCommand(unit: string): string {
  return `sudo visudo -f /etc/sudoers.d/${sudoersFileName(unit)}`;
}

/** `KIMI_NAME`: Cmnd_Alias names are global over every sudoers file, so each unit has its own. */
function aliasPrefix(stem: string): string {
  return `KIMI_${stem.toUpperCase().replace(/[^A-Z0-9]/g, '_')}${nameSuffix(stem).toUpperCase()}`;
}

/**
 * The sudoers lines that let `user` run, as root and without a password, exactly the commands
 * of `privilegedArgv` for `unit`, and nothing else. Throws for a user or unit name that would
 * need escaping in sudoers (write those rules by hand).
 */
export function sudoersRules(user: string, unitName: string): string {
  const unit = normalizeUnit(unitName);
  if (!SUDOERS_SAFE_UNIT.test(unit)) {
    throw new Error(unitNameNeedsEscaping(unit));
  }
  if (!SUDOERS_SAFE_USER.test(user)) {
    throw new Error(userNameNeedsQuoting(user));
  }
  const stem = stemOf(unit);
  const alias = aliasPrefix(stem);
  const where = dropInLocation(unit);
  const p = SUDOERS_PROGRAMS;
  const cmd = (program: string, argv: readonly string[]): string => [program, ...argv.slice(1)].join(' ');
  return [
    `# Kimi Service (VS Code): what ${user} may run as root for ${unit}, and nothing else.`,
    `# Install: ${sudoersInstallCommand(unit)}`,
    '# Restart the unit (the job is queued; the extension then watches the load):',
    `Cmnd_Alias ${alias}_RESTART = ${cmd(p.systemctl, privilegedArgv.restart(unit))}`,
    '# Reload unit files after the parser drop-in changed:',
    `Cmnd_Alias ${alias}_RELOAD = ${cmd(p.systemctl, privilegedArgv.daemonReload())}`,
    '# "Enable parsers" and its roll-back: the drop-in folder, the drop-in and its backup (contents on stdin), removing the drop-in:',
    `Cmnd_Alias ${alias}_DROPIN = ${cmd(p.mkdir, privilegedArgv.mkdir(where.dir))}, \\`,
    `    ${cmd(p.tee, privilegedArgv.tee(where.file))}, \\`,
    `    ${cmd(p.tee, privilegedArgv.tee(where.backup))}, \\`,
    `    ${cmd(p.rm, privilegedArgv.rm(where.file))}`,
    `${user} ALL=(root) NOPASSWD: ${alias}_RESTART, ${alias}_RELOAD, ${alias}_DROPIN`,
    '',
  ].join('\n');
}

export interface SudoRefusal {
  /** Host name as configured; undefined = this machine. */
  readonly host: string | undefined;
  readonly unit: string;
  /** What was asked, in words a sudoers rule is written in (`systemctl restart UNIT`). */
  readonly action: string;
  /** The exact command line that sudo refused. */
  readonly command: string;
  /** sudo's stderr. */
  readonly stderr: string;
}

/**
 * The message for a command sudo refused: names the command and the way to allow it
 * (the generated rules, and where they go).
 */
export function sudoRefusalMessage(r: SudoRefusal): string {
  const where = r.host ?? thisMachine();
  const said =
    r.stderr
      .trim()
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  const fix = sudoRulesFix(hintMark('copy-sudoers-rules'), sudoersInstallCommand(r.unit));
  if (/a password is required|a terminal is required|no tty present/i.test(said)) {
    return sudoAsksPassword(where, r.action, r.command, fix);
  }
  return sudoDoesNotAllow(where, r.action, said.slice(0, 300), r.command, fix);
}
