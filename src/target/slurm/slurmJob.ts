/**
 * What the scheduler says of one batch job, parsed: `scontrol show job -o ID` (one line of
 * Key=Value pairs), the estimated start of `squeue --start -o %S`, and the login node's UTC
 * offset (`date +%z`: Slurm prints local times without a zone). Pure. Checked against Slurm
 * 22.05.8 (Debian 12). The `-o` forms, not `--json`: 22.05 has `squeue --json` (openapi
 * v0.0.38), but its schema changes with each release and older clusters lack it.
 */
import {
  sacctPrintedNothing,
  scontrolSaidNothing,
  squeueFailed,
  unexpectedOutput,
} from '../../present/words/slurmWords';

/** A node's name as `scontrol show hostnames` prints it: a plain host name, nothing a url or shell would read otherwise. */
const NODE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$/;

/** The job states of `scontrol show job` (JobState=) that this target tells apart. */
export type SlurmJobState =
  | 'PENDING'
  | 'CONFIGURING'
  | 'RUNNING'
  | 'COMPLETING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TIMEOUT'
  | 'OUT_OF_MEMORY'
  | 'NODE_FAIL'
  | 'PREEMPTED'
  | 'BOOT_FAIL'
  | 'DEADLINE'
  | 'SUSPENDED'
  | 'REQUEUED'
  | 'OTHER';

const KNOWN_STATES: ReadonlySet<string> = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'OUT_OF_MEMORY',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'SUSPENDED',
  'REQUEUED',
]);

export interface SlurmJob {
  readonly id: string;
  readonly name: string;
  readonly state: SlurmJobState;
  /** JobState as printed (REQUEUE_HOLD, RESIZING... stay readable). */
  readonly stateText: string;
  /** Reason=, without "None". */
  readonly reason?: string;
  /** Requeue=1: `scontrol requeue` may put it back in the queue with the same id. */
  readonly requeue: boolean;
  readonly restarts: number;
  /** ExitCode=CODE:SIGNAL of the batch script. */
  readonly exitCode?: number;
  readonly exitSignal?: number;
  /** Epoch ms (the login node's clock and zone). */
  readonly submitTime?: number;
  readonly startTime?: number;
  readonly endTime?: number;
  /** Seconds. */
  readonly runTimeSeconds?: number;
  /** Seconds; undefined for UNLIMITED. */
  readonly timeLimitSeconds?: number;
  readonly nodeList?: string;
  readonly batchHost?: string;
  readonly workDir?: string;
  readonly stdOut?: string;
  readonly stdErr?: string;
  /** The batch script as the controller keeps its path. */
  readonly command?: string;
  readonly user?: string;
}

/**
 * `scontrol show job -o` as Key=Value pairs. A value runs to the next ` Key=` (keys are words
 * of letters, digits, `:` and `/`), so a path with a space stays whole.
 */
export function scontrolFields(line: string): Map<string, string> {
  const fields = new Map<string, string>();
  const keyAt = /(?:^|\s)([A-Za-z][A-Za-z0-9:/_]*)=/g;
  const keys: { key: string; valueStart: number; keyStart: number }[] = [];
  for (let m = keyAt.exec(line); m; m = keyAt.exec(line)) {
    keys.push({ key: m[1] ?? '', valueStart: m.index + m[0].length, keyStart: m.index });
  }
  keys.forEach((k, i) => {
    const end = i + 1 < keys.length ? (keys[i + 1]?.keyStart ?? line.length) : line.length;
    if (!fields.has(k.key)) fields.set(k.key, line.slice(k.valueStart, end).trim());
  });
  return fields;
}

/** `[D-]HH:MM:SS`, `MM:SS`, `UNLIMITED` / `INVALID` (undefined). */
export function slurmDurationSeconds(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(text.trim());
  if (!m) return undefined;
  const [, d, h, min, s] = m;
  return Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(min) * 60 + Number(s);
}

/** `+0100` as minutes east of UTC; undefined when it is not one. */
export function utcOffsetMinutes(text: string): number | undefined {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(text.trim());
  if (!m) return undefined;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

/** `2026-12-06T14:05:00` on a clock `offsetMinutes` east of UTC, as epoch ms; Unknown, N/A, None: undefined. */
export function slurmTime(text: string | undefined, offsetMinutes: number): number | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)$/.exec(text?.trim() ?? '');
  if (!m) return undefined;
  const utc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return utc - offsetMinutes * 60_000;
}

function optional(text: string | undefined): string | undefined {
  const t = text?.trim();
  return t && t !== '(null)' && t !== 'None' && t !== 'N/A' && t !== 'Unknown' ? t : undefined;
}

/** One job of `scontrol show job -o`; undefined when the line is not one. */
export function parseScontrolJob(line: string, offsetMinutes: number): SlurmJob | undefined {
  const f = scontrolFields(line);
  const id = f.get('JobId');
  const stateText = f.get('JobState');
  if (!id || !/^\d+$/.test(id) || !stateText) return undefined;
  const state = (KNOWN_STATES.has(stateText) ? stateText : 'OTHER') as SlurmJobState;
  const exit = /^(\d+):(\d+)$/.exec(f.get('ExitCode') ?? '');
  const reason = optional(f.get('Reason'));
  const nodeList = optional(f.get('NodeList'));
  const batchHost = optional(f.get('BatchHost'));
  const workDir = optional(f.get('WorkDir'));
  const stdOut = optional(f.get('StdOut'));
  const stdErr = optional(f.get('StdErr'));
  const command = optional(f.get('Command'));
  const user = /^([^()]+)\(\d+\)$/.exec(f.get('UserId') ?? '')?.[1];
  const submitTime = slurmTime(f.get('SubmitTime'), offsetMinutes);
  const startTime = slurmTime(f.get('StartTime'), offsetMinutes);
  const endTime = slurmTime(f.get('EndTime'), offsetMinutes);
  const runTimeSeconds = slurmDurationSeconds(f.get('RunTime'));
  const timeLimitSeconds = slurmDurationSeconds(f.get('TimeLimit'));
  return {
    id,
    name: f.get('JobName') ?? '',
    state,
    stateText,
    requeue: f.get('Requeue') === '1',
    restarts: Number(f.get('Restarts') ?? 0) || 0,
    ...(reason ? { reason } : {}),
    ...(exit ? { exitCode: Number(exit[1]), exitSignal: Number(exit[2]) } : {}),
    ...(submitTime !== undefined ? { submitTime } : {}),
    ...(startTime !== undefined ? { startTime } : {}),
    ...(endTime !== undefined ? { endTime } : {}),
    ...(runTimeSeconds !== undefined ? { runTimeSeconds } : {}),
    ...(timeLimitSeconds !== undefined ? { timeLimitSeconds } : {}),
    ...(nodeList ? { nodeList } : {}),
    ...(batchHost ? { batchHost } : {}),
    ...(workDir ? { workDir } : {}),
    ...(stdOut ? { stdOut } : {}),
    ...(stdErr ? { stdErr } : {}),
    ...(command ? { command } : {}),
    ...(user ? { user } : {}),
  };
}

/**
 * What accounting says of a job (`sacct -X -n -P -o State,ExitCode`): its state (`CANCELLED by
 * 0`: the uid that cancelled it, in the State field as sacct's manual says), exit code and the
 * canceller's name; or that the cluster keeps none (`Slurm accounting storage is disabled`, as
 * Slurm 22.05 without slurmdbd says), or sacct's other words.
 */
export type Accounting =
  | {
      readonly kind: 'known';
      readonly state: string;
      readonly exitCode?: string;
      /** The canceller: its user name, else its uid. */
      readonly cancelledBy?: string;
    }
  | { readonly kind: 'disabled' }
  | { readonly kind: 'unknown'; readonly said: string };

/** The `sacct=` and `by=` lines of the state script; undefined when sacct was not asked. */
export function parseAccounting(sacctLine: string | undefined, byLine: string | undefined): Accounting | undefined {
  if (sacctLine === undefined) return undefined;
  const text = sacctLine.trim();
  if (/accounting storage is disabled/i.test(text)) return { kind: 'disabled' };
  const m = /^([A-Z_]+)(?: by (\d+))?\|(\d+:\d+)?$/.exec(text);
  if (!m) return { kind: 'unknown', said: text.slice(0, 200) || sacctPrintedNothing() };
  const by = byLine?.trim() || m[2];
  return {
    kind: 'known',
    state: m[1] ?? '',
    ...(m[3] ? { exitCode: m[3] } : {}),
    ...(by ? { cancelledBy: by } : {}),
  };
}

/** What the state script (slurmCommands.ts stateCommand) printed, read. */
export type JobReading =
  | {
      readonly kind: 'job';
      readonly job: SlurmJob;
      /** `squeue --start`'s estimate for a pending job (epoch ms), when the scheduler has one. */
      readonly estimatedStart?: number;
      /** sacct's words for a cancelled job (who cancelled it). */
      readonly accounting?: Accounting;
      /** The job's nodes in order (`scontrol show hostnames` of its NodeList): rank 0 runs on the first. */
      readonly hosts?: readonly string[];
    }
  /** No job of that name for the login user, and none remembered. */
  | { readonly kind: 'none' }
  /** The remembered job is no longer known to the controller (MinJobAge passed); what accounting says of it. */
  | { readonly kind: 'gone'; readonly id: string; readonly accounting?: Accounting }
  /** squeue or scontrol failed: their words. */
  | { readonly kind: 'error'; readonly message: string };

/**
 * The state script's output: `tz=+0000`, then `none`, or `id=N` followed by scontrol's line
 * (or its error) and `start=...` (squeue --start), or `error=...` for a squeue that failed.
 */
export function parseJobReading(stdout: string): JobReading {
  const lines = stdout.split('\n').map((l) => l.trimEnd());
  const offset = utcOffsetMinutes(lines.find((l) => l.startsWith('tz='))?.slice(3) ?? '') ?? 0;
  const error = lines.find((l) => l.startsWith('error='));
  if (error !== undefined) return { kind: 'error', message: error.slice(6).trim() || squeueFailed() };
  if (lines.includes('none')) return { kind: 'none' };
  const id = lines.find((l) => l.startsWith('id='))?.slice(3);
  if (!id) return { kind: 'error', message: unexpectedOutput(stdout.trim().slice(0, 200)) };
  const jobLine = lines.find((l) => l.startsWith('JobId='));
  const job = jobLine ? parseScontrolJob(jobLine, offset) : undefined;
  const accounting = parseAccounting(
    lines.find((l) => l.startsWith('sacct='))?.slice(6),
    lines.find((l) => l.startsWith('by='))?.slice(3),
  );
  if (!job) {
    if (lines.some((l) => /Invalid job id specified/i.test(l)))
      return { kind: 'gone', id, ...(accounting ? { accounting } : {}) };
    const said = lines.filter((l) => l && !/^(tz|id|start|sacct|by|hosts)=/.test(l)).join(' ');
    return { kind: 'error', message: said || scontrolSaidNothing(id) };
  }
  const start = slurmTime(lines.find((l) => l.startsWith('start='))?.slice(6), offset);
  const hosts = (lines.find((l) => l.startsWith('hosts='))?.slice(6) ?? '')
    .split(/\s+/)
    .filter((h) => NODE_NAME.test(h));
  return {
    kind: 'job',
    job,
    ...(hosts.length > 0 ? { hosts } : {}),
    ...(start !== undefined && job.state === 'PENDING' ? { estimatedStart: start } : {}),
    ...(accounting ? { accounting } : {}),
  };
}

/** Expands the `%x`, `%j`, `%u`, `%N`, `%%` of an output path as Slurm does for the batch step (scontrol already does for 22.05; older ones print them). */
export function expandOutputPath(path: string, job: SlurmJob): string {
  return path.replace(/%([%xjuN])/g, (_, c: string) => {
    if (c === '%') return '%';
    if (c === 'x') return job.name;
    if (c === 'j') return job.id;
    if (c === 'u') return job.user ?? '%u';
    return job.batchHost ?? '%N';
  });
}
