/**
 * `docker inspect` (dockerTarget.INSPECT_FORMAT) -> the ServiceStatus shape the load state reads,
 * and `docker logs --timestamps` lines -> journal entries. Pure.
 */
import type { LogEntry, ServiceStatus } from '../targetTypes';
import { inspectNotJson, inspectPrintedNothing, removedExitUnknown } from '../../present/words/dockerWords';

export interface ContainerMount {
  readonly source: string;
  readonly destination: string;
}

export interface ContainerInfo {
  readonly id: string;
  readonly name: string;
  /** created | running | paused | restarting | removing | exited | dead */
  readonly status: string;
  readonly running: boolean;
  readonly restarting: boolean;
  readonly oomKilled: boolean;
  readonly exitCode: number;
  /** Host PID of the container's first process; 0 when none runs. */
  readonly pid: number;
  readonly startedAt: number | undefined;
  /** Epoch microseconds of StartedAt (for comparing with log lines exactly). */
  readonly startedAtUs: number | undefined;
  readonly finishedAt: number | undefined;
  readonly restartCount: number;
  readonly health: string | undefined;
  readonly restartPolicy: string | undefined;
  /** The command the container runs: Path then Args. */
  readonly argv: readonly string[];
  readonly mounts: readonly ContainerMount[];
  /** Ended by `docker stop` / `docker kill` (or restart): a `kill` or `stop` event since its start. */
  readonly stopRequested?: boolean;
  /** Running again after its restart policy brought it back since the last read: how the run before ended. */
  readonly previousExit?: { readonly exitCode: number; readonly oomKilled: boolean };
}

export type InspectResult =
  | { readonly kind: 'found'; readonly container: ContainerInfo }
  | { readonly kind: 'missing' }
  | { readonly kind: 'error'; readonly message: string };

/** RFC 3339 with up to nanoseconds; Docker's zero time (0001-01-01...) is unset. -> epoch microseconds. */
export function parseDockerTimeUs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text.trim());
  if (!m || m[1] === '0001') return undefined;
  const base = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  const fracUs = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1e6) : 0;
  let offsetMin = 0;
  const zone = m[8] ?? 'Z';
  if (zone !== 'Z')
    offsetMin = (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  return (base - offsetMin * 60_000) * 1000 + fracUs;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The output of `inspectCommand`: the container, "no such container", or what went wrong. */
export function parseInspect(stdout: string): InspectResult {
  const text = stdout.trim();
  const line = text.split('\n').find((l) => l.trim().startsWith('{'));
  if (line === undefined) {
    if (/no such (object|container)/i.test(text)) return { kind: 'missing' };
    return {
      kind: 'error',
      message: text.split('\n').slice(-2).join(' ').slice(0, 300) || inspectPrintedNothing(),
    };
  }
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { kind: 'error', message: inspectNotJson(line.slice(0, 120)) };
  }
  const state = (raw['State'] ?? {}) as Record<string, unknown>;
  const health = (state['Health'] ?? undefined) as Record<string, unknown> | undefined;
  const policy = (raw['RestartPolicy'] ?? undefined) as Record<string, unknown> | undefined;
  // Docker writes strings and objects here; anything else (null, a nested array) is no argument or mount.
  const args = Array.isArray(raw['Args'])
    ? (raw['Args'] as unknown[]).map((a) => (typeof a === 'number' ? String(a) : str(a)))
    : [];
  const mounts = Array.isArray(raw['Mounts'])
    ? (raw['Mounts'] as unknown[])
        .map((m) => (typeof m === 'object' && m !== null ? (m as Record<string, unknown>) : {}))
        .map((m) => ({ source: str(m['Source']), destination: str(m['Destination']) }))
        .filter((m) => m.source !== '' && m.destination !== '')
    : [];
  const startedAtUs = parseDockerTimeUs(state['StartedAt']);
  const finishedAtUs = parseDockerTimeUs(state['FinishedAt']);
  return {
    kind: 'found',
    container: {
      id: str(raw['Id']),
      name: str(raw['Name']).replace(/^\//, ''),
      status: str(state['Status']),
      running: state['Running'] === true,
      restarting: state['Restarting'] === true,
      oomKilled: state['OOMKilled'] === true,
      exitCode: num(state['ExitCode']),
      pid: num(state['Pid']),
      startedAt: startedAtUs === undefined ? undefined : Math.floor(startedAtUs / 1000),
      startedAtUs,
      finishedAt: finishedAtUs === undefined ? undefined : Math.floor(finishedAtUs / 1000),
      restartCount: num(raw['RestartCount']),
      health: health ? str(health['Status']) || undefined : undefined,
      restartPolicy: policy ? str(policy['Name']) || undefined : undefined,
      argv: [str(raw['Path']), ...args].filter((a, i) => i > 0 || a !== ''),
      mounts,
    },
  };
}

/** 128 + N is how Docker reports a process killed by signal N (SIGTERM from `docker stop` is a clean stop). */
function exitOf(
  c: ContainerInfo,
): Pick<ServiceStatus, 'execMainCode' | 'execMainStatus' | 'result'> & { clean: boolean } {
  if (c.exitCode < 0) return { result: removedExitUnknown(), clean: false };
  if (c.oomKilled) return { execMainCode: 'killed', execMainStatus: 9, result: 'oom-kill', clean: false };
  if (c.exitCode > 128 && c.exitCode < 160) {
    const signal = c.exitCode - 128;
    return {
      execMainCode: 'killed',
      execMainStatus: signal,
      result: signal === 15 ? 'success' : 'signal',
      clean: signal === 15,
    };
  }
  return {
    execMainCode: 'exited',
    execMainStatus: c.exitCode,
    result: c.exitCode === 0 ? 'success' : 'exit-code',
    clean: c.exitCode === 0,
  };
}

/**
 * The container as a unit: running -> active/running with the container's PID; restarting
 * (its restart policy brings it back after an exit) -> activating/auto-restart; exited non-zero,
 * OOM-killed or dead -> failed; exited 0 (or by `docker stop`'s SIGTERM), created -> inactive.
 * `invocationId` is id@StartedAt: it changes on every start, restarts by the policy included.
 */
export function containerServiceStatus(result: InspectResult, label: string): ServiceStatus {
  if (result.kind !== 'found') {
    return {
      loadState: 'not-found',
      activeState: 'inactive',
      subState: 'dead',
      mainPid: 0,
      nRestarts: 0,
      result: '',
      dropInPaths: [],
      needDaemonReload: false,
      id: label,
      manager: 'docker',
    };
  }
  const c = result.container;
  const ended = !c.running && !c.restarting && c.finishedAt !== undefined;
  const exit = exitOf(c);
  let activeState = 'inactive';
  let subState = c.status || 'dead';
  if (c.status === 'running' || c.status === 'paused') activeState = 'active';
  else if (c.restarting || c.status === 'restarting') {
    activeState = 'activating';
    subState = 'auto-restart';
  } else if (c.status === 'removing') activeState = 'deactivating';
  // Stopped by someone (docker stop), even when it took SIGKILL after the stop timeout: not a failure.
  else if (!c.stopRequested && (c.status === 'dead' || c.status === 'removed' || (ended && !exit.clean)))
    activeState = 'failed';
  const running = activeState === 'active' && c.pid > 0;
  // Docker resets ExitCode when its policy starts the container again: the crash is the run before's.
  const previous =
    running && c.previousExit
      ? exitOf({ ...c, exitCode: c.previousExit.exitCode, oomKilled: c.previousExit.oomKilled })
      : undefined;
  return {
    loadState: 'loaded',
    activeState,
    subState,
    mainPid: running ? c.pid : 0,
    nRestarts: c.restartCount,
    result: running ? 'success' : (exit.result ?? ''),
    ...(!running && (ended || c.restarting) && exit.execMainCode !== undefined
      ? { execMainCode: exit.execMainCode, execMainStatus: exit.execMainStatus }
      : {}),
    ...(previous?.execMainCode !== undefined
      ? { execMainCode: previous.execMainCode, execMainStatus: previous.execMainStatus }
      : {}),
    ...(c.startedAt !== undefined ? { execMainStartedAt: c.startedAt } : {}),
    // Wall-clock microseconds, as the log lines' `monotonicUs` (logLineEntry): compared with each other only.
    ...(c.startedAtUs !== undefined ? { execMainStartedMonotonicUs: c.startedAtUs } : {}),
    ...(!running && c.finishedAt !== undefined ? { execMainExitedAt: c.finishedAt } : {}),
    dropInPaths: [],
    needDaemonReload: false,
    id: label,
    invocationId: `${c.id.slice(0, 12)}@${c.startedAtUs ?? 0}`,
    manager: 'docker',
    ...(running ? { execMainPid: c.pid } : {}),
    ...(!running && c.stopRequested ? { stopRequested: true } : {}),
  };
}

/** One line of `docker logs --timestamps`: `2026-11-30T14:29:02.324652777Z message`. */
export function logLineEntry(line: string): LogEntry | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ?(.*)$/s.exec(
    line.replace(/\n$/, ''),
  );
  if (!m) return undefined;
  const us = parseDockerTimeUs(m[1]);
  if (us === undefined) return undefined;
  return { message: m[2] ?? '', at: Math.floor(us / 1000), monotonicUs: us };
}

/** A path inside the container as it is on the host, through the mount that holds it; undefined if none does. */
export function hostPathOf(containerPath: string, mounts: readonly ContainerMount[]): string | undefined {
  let best: ContainerMount | undefined;
  for (const m of mounts) {
    const dest = m.destination.replace(/\/+$/, '') || '/';
    const inside = containerPath === dest || containerPath.startsWith(dest === '/' ? '/' : `${dest}/`);
    if (inside && (!best || dest.length > best.destination.replace(/\/+$/, '').length)) best = m;
  }
  if (!best) return undefined;
  const dest = best.destination.replace(/\/+$/, '');
  const rest = containerPath.slice(dest.length).replace(/^\/+/, '');
  return rest === '' ? best.source : `${best.source.replace(/\/+$/, '')}/${rest}`;
}

/**
 * A container seen running, then gone (removed on exit): ended as its last `die` event says
 * (exitCode, and an `oom` event before it), or with an unknown status when no event is left.
 */
export function endedFromEvents(last: ContainerInfo, eventsOutput: string): ContainerInfo {
  const { exitCode, oom, at, stop } = readEndEvents(eventsOutput, last.startedAtUs);
  return {
    ...last,
    status: exitCode === undefined ? 'removed' : 'exited',
    running: false,
    restarting: false,
    pid: 0,
    oomKilled: oom,
    exitCode: exitCode ?? -1,
    finishedAt: at ?? last.finishedAt ?? last.startedAt,
    ...(stop ? { stopRequested: true } : {}),
  };
}

/** A container its restart policy restarted since `previous` was read, with how that run ended (its die event). */
export function withPreviousExit(now: ContainerInfo, previous: ContainerInfo, eventsOutput: string): ContainerInfo {
  const { exitCode, oom } = readEndEvents(eventsOutput, previous.startedAtUs);
  return exitCode === undefined ? now : { ...now, previousExit: { exitCode, oomKilled: oom } };
}

/** An ended container still there, with what its events add: stopped on purpose, OOM. */
export function withEndEvents(ended: ContainerInfo, eventsOutput: string): ContainerInfo {
  const { oom, stop } = readEndEvents(eventsOutput, ended.startedAtUs);
  return { ...ended, oomKilled: ended.oomKilled || oom, ...(stop ? { stopRequested: true } : {}) };
}

/** The events of the run that started at `startedAtUs` (not those of the run before it). */
function readEndEvents(
  eventsOutput: string,
  startedAtUs: number | undefined,
): { exitCode: number | undefined; oom: boolean; at: number | undefined; stop: boolean } {
  let exitCode: number | undefined;
  let oom = false;
  let at: number | undefined;
  let stop = false;
  for (const line of eventsOutput.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let event: {
      Action?: unknown;
      status?: unknown;
      time?: unknown;
      timeNano?: unknown;
      Actor?: { Attributes?: Record<string, unknown> };
    };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      continue;
    }
    if (startedAtUs !== undefined && typeof event.timeNano === 'number' && event.timeNano / 1000 < startedAtUs)
      continue;
    const action = str(event.Action ?? event.status);
    if (action === 'oom') oom = true;
    if (action === 'kill' || action === 'stop') stop = true;
    if (action === 'die') {
      const code = Number(event.Actor?.Attributes?.['exitCode']);
      if (Number.isInteger(code)) exitCode = code;
      if (typeof event.time === 'number') at = event.time * 1000;
    }
  }
  return { exitCode, oom, at, stop };
}
