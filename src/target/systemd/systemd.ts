/** `systemctl show` of the service unit -> ServiceStatus. Pure, apart from building the command. */
import type { HostCommand } from '../../transport/shell';
import type { ServiceStatus } from '../targetTypes';

export const UNIT_PROPERTIES = [
  'Id',
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'ExecMainPID',
  'ExecMainStatus',
  'ExecMainCode',
  'ExecMainStartTimestampMonotonic',
  'ExecMainStartTimestamp',
  'ExecMainExitTimestamp',
  'NRestarts',
  'Result',
  'FragmentPath',
  'DropInPaths',
  'NeedDaemonReload',
  'ActiveEnterTimestamp',
  'InvocationID',
  'ControlGroup',
  'Job',
] as const;

/**
 * `systemctl show -p PROPS UNIT`. `TZ=UTC` makes systemctl print its timestamps in UTC: a zone
 * abbreviation such as "CET" cannot be turned back into an offset reliably.
 */
export function showCommand(unit: string, properties: readonly string[] = UNIT_PROPERTIES): HostCommand {
  for (const p of properties)
    if (!/^[A-Za-z]+$/.test(p)) throw new Error(`Invalid systemd property name: ${JSON.stringify(p)}`);
  return { argv: ['systemctl', 'show', '--no-pager', '-p', properties.join(','), unit], env: { TZ: 'UTC' } };
}

/** `Key=Value` lines; a value may contain `=`. A repeated key (several Exec lines) keeps its first value. */
export function parseShow(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const m = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/.exec(line);
    if (!m || m[1] === undefined) continue;
    if (!(m[1] in out)) out[m[1]] = m[2] ?? '';
  }
  return out;
}

/** `A=1 B="x y"` (systemctl show's Environment) -> { A: '1', B: 'x y' }. */
export function parseEnvironment(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of value.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) out[m[1]!] = m[3] ?? m[2] ?? '';
  return out;
}

const ZONE_OFFSETS_MIN: Readonly<Record<string, number>> = { UTC: 0, GMT: 0, Z: 0, UCT: 0 };

/**
 * systemd timestamps: `Mon 2026-11-30 05:40:12 UTC`, with `.123456` under --timestamp=us,
 * `@1764481212` under --timestamp=unix, an offset (`+0100`) under some locales; `n/a` or empty
 * when unset. An unknown zone abbreviation gives undefined rather than a wrong time.
 */
export function parseSystemdTimestamp(value: string | undefined): number | undefined {
  const v = (value ?? '').trim();
  if (v === '' || v === 'n/a' || v === '0') return undefined;
  const unix = /^@(\d+(?:\.\d+)?)$/.exec(v);
  if (unix) {
    const ms = Math.round(Number(unix[1]) * 1000);
    return Number.isFinite(ms) ? ms : undefined;
  }
  const m =
    /^(?:[A-Za-z]{2,3}\s+)?(\d{4})-(\d{2})-(\d{2})\s+(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:\s+(\S+))?$/.exec(v);
  if (!m) return undefined;
  const zone = m[8] ?? 'UTC';
  let offsetMin: number | undefined = ZONE_OFFSETS_MIN[zone.toUpperCase()];
  const off = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (off) offsetMin = (off[1] === '-' ? -1 : 1) * (Number(off[2]) * 60 + Number(off[3]));
  if (offsetMin === undefined) return undefined;
  const frac = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  const utc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Math.floor(utc + frac) - offsetMin * 60_000;
}

/** si_code values of waitid(): CLD_EXITED=1, CLD_KILLED=2, CLD_DUMPED=3. */
const EXIT_CODES: Readonly<Record<string, string>> = { '1': 'exited', '2': 'killed', '3': 'dumped' };

function exitCode(v: string | undefined): string | undefined {
  const s = (v ?? '').trim();
  if (s === '' || s === '0') return undefined;
  return EXIT_CODES[s] ?? s;
}

/** systemd prints decimal integers; `1e308`, `0x10` or 400 digits are no PID or count. */
function int(v: string | undefined, dflt: number): number {
  const s = (v ?? '').trim();
  const n = Number(s);
  return /^-?\d+$/.test(s) && Number.isSafeInteger(n) ? n : dflt;
}

function optional(v: string | undefined): string | undefined {
  const s = (v ?? '').trim();
  return s === '' ? undefined : s;
}

export function toServiceStatus(props: Record<string, string>): ServiceStatus {
  const execMainStatus = optional(props['ExecMainStatus']);
  const execMainCode = exitCode(props['ExecMainCode']);
  const started = parseSystemdTimestamp(props['ExecMainStartTimestamp']);
  const exited = parseSystemdTimestamp(props['ExecMainExitTimestamp']);
  const activeEntered = parseSystemdTimestamp(props['ActiveEnterTimestamp']);
  const fragmentPath = optional(props['FragmentPath']);
  const id = optional(props['Id']);
  const invocationId = optional(props['InvocationID']);
  const controlGroup = optional(props['ControlGroup']);
  const execMainPid = int(props['ExecMainPID'], 0);
  const startedMonotonicUs = int(props['ExecMainStartTimestampMonotonic'], 0);
  const job = optional(props['Job']);
  return {
    loadState: (props['LoadState'] ?? '').trim(),
    activeState: (props['ActiveState'] ?? '').trim(),
    subState: (props['SubState'] ?? '').trim(),
    mainPid: int(props['MainPID'], 0),
    nRestarts: int(props['NRestarts'], 0),
    result: (props['Result'] ?? '').trim(),
    ...(execMainStatus !== undefined && Number.isSafeInteger(Number(execMainStatus))
      ? { execMainStatus: Number(execMainStatus) }
      : {}),
    ...(execMainCode !== undefined ? { execMainCode } : {}),
    ...(started !== undefined ? { execMainStartedAt: started } : {}),
    ...(exited !== undefined ? { execMainExitedAt: exited } : {}),
    ...(fragmentPath !== undefined ? { fragmentPath } : {}),
    dropInPaths: (props['DropInPaths'] ?? '').split(/\s+/).filter((s) => s !== ''),
    needDaemonReload: (props['NeedDaemonReload'] ?? '').trim() === 'yes',
    ...(id !== undefined ? { id } : {}),
    ...(invocationId !== undefined ? { invocationId } : {}),
    ...(controlGroup !== undefined ? { controlGroup } : {}),
    ...(activeEntered !== undefined ? { activeEnteredAt: activeEntered } : {}),
    ...(execMainPid > 0 ? { execMainPid } : {}),
    ...(startedMonotonicUs > 0 ? { execMainStartedMonotonicUs: startedMonotonicUs } : {}),
    ...(job !== undefined ? { jobPending: true } : {}),
  };
}

// ---------------------------------------------------------------- ExecStart

/**
 * `systemctl show -p ExecStart` prints `{ path=/x ; argv[]=/x --a b ; ignore_errors=no ; ... }`
 * (or `; flags=... ;` for ExecStartEx). systemd joins argv with plain spaces, no quoting
 * (systemctl-show.c: `strv_join(info.argv, " ")`), so an argument with a space cannot be told
 * apart from two. A word that starts with a quote and whose closing quote ends a word is read
 * as one quoted argument (as newer tools and our simulator may print it); quotes inside a word
 * (`{"a":1}`) stay literal.
 */
export function parseExecStartProperty(value: string): string[] {
  let v = value.trim();
  if (v.startsWith('{')) v = v.slice(1);
  if (v.endsWith('}')) v = v.slice(0, -1);
  const start = v.indexOf('argv[]=');
  if (start < 0) {
    // Not the struct form: a bare command line.
    return splitCommandLine(v.trim());
  }
  const body = v.slice(start + 'argv[]='.length);
  const endMarkers = [' ; ignore_errors=', ' ; flags=', ' ; start_time='];
  let end = -1;
  for (const mark of endMarkers) {
    const i = body.lastIndexOf(mark);
    if (i >= 0 && (end < 0 || i < end)) end = i;
  }
  return splitCommandLine((end >= 0 ? body.slice(0, end) : body).trim());
}

function splitCommandLine(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i] ?? '')) i++;
    if (i >= s.length) break;
    const c = s[i];
    if (c === '"' || c === "'") {
      const quoted = readQuoted(s, i, c);
      if (quoted) {
        out.push(quoted.word);
        i = quoted.next;
        continue;
      }
    }
    let j = i;
    while (j < s.length && !/\s/.test(s[j] ?? '')) j++;
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

/** A quoted word that ends at whitespace or end of text; undefined if the quote does not close there. */
function readQuoted(s: string, i: number, q: string): { word: string; next: number } | undefined {
  let word = '';
  let j = i + 1;
  while (j < s.length) {
    const c = s[j];
    if (c === '\\' && q === '"' && j + 1 < s.length) {
      const n = s[j + 1] ?? '';
      word += n === 'n' ? '\n' : n === 't' ? '\t' : n;
      j += 2;
      continue;
    }
    if (c === q) {
      const after = s[j + 1];
      if (after === undefined || /\s/.test(after)) return { word, next: j + 1 };
      return undefined;
    }
    word += c;
    j++;
  }
  return undefined;
}
