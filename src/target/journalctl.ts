/**
 * systemd's journal as a Target's log: the follow and tail commands (`journalctl -o json`), one
 * JSON entry -> a LogEntry, and what journalctl's complaints mean. The text of each entry is
 * then read by the engine's grammar (engine/). Pure: commands are built (as HostCommands), not run.
 */
import type { HostCommand } from '../transport/shell';
import type { LogEntry } from './targetTypes';
import { journalctlExited, journalNotReadable } from '../present/words/targetWords';

/**
 * journalctl prints __CURSOR, _BOOT_ID (and, since systemd 254, __SEQNUM, __SEQNUM_ID) with every
 * entry whatever --output-fields says: about 200 of a line's ~300 bytes, none of it read here.
 * One sed drops them before the line crosses the network. A shell `read` loop reads a pipe one
 * byte per system call (a 10 MB line: seconds of the host's CPU), as does `sed -u`, and mawk holds
 * lines until its buffer fills (or, interactive, is quadratic on long lines): sed reads blocks and
 * stdbuf makes it write each line at once. LC_ALL=C: bytes, whatever the host's locale. A value
 * holds no quote; `"k":"` is never inside a JSON string (its quotes would be escaped).
 */
const ADDRESS_FIELD_CUT = `LC_ALL=C stdbuf -oL sed${['__CURSOR', '_BOOT_ID', '__SEQNUM_ID', '__SEQNUM']
  .map((k) => ` -e 's/"${k}":"[^"]*",//' -e 's/,"${k}":"[^"]*"//'`)
  .join('')}`;

/**
 * `$1` the unit, `$2` `@SECONDS`. journalctl's exit status stays the command's: written to fd 3,
 * read by the command substitution (sed's lines go to the real stdout, fd 4).
 */
const FOLLOW_SCRIPT = `{ s=$( { { journalctl -u "$1" -f -a -o json --output-fields=MESSAGE,_PID,SYSLOG_IDENTIFIER --no-pager --since "$2"; echo "$?" >&3; } | ${ADDRESS_FIELD_CUT} >&4; } 3>&1 ); exit "\${s:-1}"; } 4>&1`;

/**
 * Follows the unit's journal from `sinceEpochMs` on, as JSON: timestamps come with each entry
 * and tqdm's `\r` lines survive (as byte arrays); `-a` keeps fields over 4 KiB (else null).
 * Only the fields the monitor reads; the address fields always come, and are cut by ADDRESS_FIELD_CUT.
 */
export function journalFollowCommand(unit: string, sinceEpochMs: number): HostCommand {
  const since = Math.max(0, Math.floor(sinceEpochMs / 1000));
  return { argv: ['sh', '-c', FOLLOW_SCRIPT, 'sh', unit, `@${since}`] };
}

/** The last `lines` entries of the unit's journal, as JSON (for the cause of a failure). */
export function journalTailCommand(unit: string, lines: number): HostCommand {
  const n = Math.max(1, Math.min(100000, Math.floor(lines)));
  return { argv: ['journalctl', '-u', unit, '-n', String(n), '-a', '-o', 'json', '--no-pager'] };
}

// ---------------------------------------------------------------- journalctl -o json

/** One line of `journalctl -o json`; undefined for anything that is not an entry with a MESSAGE. */
export function parseJournalJsonLine(line: string): LogEntry | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  const rec = obj as Record<string, unknown>;
  const message = decodeField(rec['MESSAGE']);
  if (message === undefined) return undefined;
  const usec = Number(decodeField(rec['__REALTIME_TIMESTAMP']));
  const at = Number.isFinite(usec) && usec > 0 ? Math.floor(usec / 1000) : Date.now();
  const pidNum = Number(decodeField(rec['_PID']));
  const monotonicUs = Number(decodeField(rec['__MONOTONIC_TIMESTAMP']));
  const identifier = decodeField(rec['SYSLOG_IDENTIFIER']);
  return {
    message,
    at,
    ...(Number.isSafeInteger(pidNum) && pidNum > 0 ? { pid: pidNum } : {}),
    ...(Number.isFinite(monotonicUs) && monotonicUs > 0 ? { monotonicUs } : {}),
    ...(identifier !== undefined ? { identifier } : {}),
  };
}

/**
 * A journal JSON field is a string, an array of byte values (binary or control characters,
 * e.g. tqdm's `\r`), null (too large without `-a`), or an array of those when repeated.
 */
function decodeField(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (!Array.isArray(v)) return undefined;
  if (v.length === 0) return '';
  if (v.every((b) => typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255)) {
    return Buffer.from(v as number[]).toString('utf8');
  }
  const parts = v.map(decodeField).filter((s): s is string => s !== undefined);
  return parts.length > 0 ? parts.join('\n') : undefined;
}

// ---------------------------------------------------------------- journalctl's own complaints

/** The fix for a user who may not read the system journal. */
export const JOURNAL_ACCESS_FIX = 'sudo usermod -aG systemd-journal USER (then log in again)';

/**
 * What journalctl's stderr (and exit code, once it ended) say about reading the unit's journal:
 * undefined when nothing is wrong. A user outside `adm`/`systemd-journal` gets only the hint
 * (and no lines of a system unit) or "No journal files were opened" (and exit 1).
 */
export function journalProblem(
  stderrLines: readonly string[],
  exitCode: number | null | undefined,
): string | undefined {
  const text = stderrLines.join(' ').replace(/\s+/g, ' ').trim();
  if (/not seeing messages from other users and the system/i.test(text) || /insufficient permissions/i.test(text)) {
    return journalNotReadable(text.slice(0, 200));
  }
  if (exitCode !== undefined && exitCode !== null && exitCode !== 0) {
    return journalctlExited(exitCode, text ? text.slice(0, 200) : undefined);
  }
  return undefined;
}
