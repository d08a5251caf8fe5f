/**
 * What one load's log says that advice rests on: how long each phase and each quiet step took,
 * which shard loader ran, the captured CUDA-graph batch sizes, the engine's version and its
 * own hints. Pure: journal entries (message, time) in, facts out.
 */
import { LOAD_PHASES, type ActivityKind, type LoadPhase } from '../events';
import { JournalReader } from '../logReader';
import { splitLines, stripPrefix } from '../logGrammar';
import { engineById, type EngineId as Engine } from '../engine';
import { versionFromLogLine } from './version';

export interface LogEntry {
  readonly message: string;
  /** Epoch ms. */
  readonly at: number;
}

export interface LogFacts {
  /** Each phase seen, with its duration (until the next phase, or until ready / the last line). */
  readonly phaseMs: Readonly<Partial<Record<LoadPhase, number>>>;
  /** First line to ready (or to the last line when the load did not reach ready). */
  readonly totalMs: number;
  readonly ready: boolean;
  /** Quiet steps with a start and an end (or the next phase, or the last line), summed per kind. */
  readonly activityMs: Readonly<Partial<Record<ActivityKind, number>>>;
  /** SGLang's shard bar: `Multi-thread loading shards` or `Loading safetensors checkpoint shards`. */
  readonly shardLoader: 'multi-thread' | 'single-thread' | undefined;
  /** `Capture cuda graph bs [1, 2, 4, ...]`. */
  readonly graphBatchSizes: readonly number[] | undefined;
  /** vLLM: `Auto-prefetch is disabled because the filesystem (EXT4) is not a recognized network FS`. */
  readonly autoPrefetchDisabledOn: string | undefined;
  readonly version: string | undefined;
}

const AUTO_PREFETCH_OFF = /Auto-prefetch is disabled because the filesystem \(([^)]{1,40})\)/;
const GRAPH_BS = /Capture cuda graph bs \[([\d,\s]*)\]/;

export function logFacts(engine: Engine, entries: readonly LogEntry[]): LogFacts {
  const reader = new JournalReader(engineById(engine).grammar);
  const phaseAt = new Map<LoadPhase, number>();
  const activityMs: Partial<Record<ActivityKind, number>> = {};
  const open = new Map<ActivityKind, number>();
  let shardLoader: LogFacts['shardLoader'];
  let graphBatchSizes: number[] | undefined;
  let autoPrefetchDisabledOn: string | undefined;
  let version: string | undefined;
  let readyAt: number | undefined;
  let first = entries[0]?.at ?? 0;
  let last = first;
  // systemd's "Started ..." begins a new process: what came before it is an earlier run's.
  const reset = (at: number): void => {
    phaseAt.clear();
    open.clear();
    for (const k of Object.keys(activityMs) as ActivityKind[]) delete activityMs[k];
    shardLoader = undefined;
    graphBatchSizes = undefined;
    autoPrefetchDisabledOn = undefined;
    version = undefined;
    first = at;
  };

  const close = (kind: ActivityKind, at: number): void => {
    const since = open.get(kind);
    if (since === undefined) return;
    activityMs[kind] = (activityMs[kind] ?? 0) + Math.max(0, at - since);
    open.delete(kind);
  };

  for (const { message, at } of entries) {
    const events = reader.readLines(message, at).map((l) => l.event);
    if (events.some((e) => e.type === 'systemd' && e.what === 'started')) {
      reset(at);
      readyAt = undefined;
      last = at;
      continue;
    }
    // After ready: only a later start matters (the steady server's lines are no part of the load).
    if (readyAt !== undefined) continue;
    last = Math.max(last, at);
    for (const line of splitLines(message)) {
      const text = stripPrefix(line).text;
      if (/Multi-thread loading shards:/.test(text)) shardLoader = 'multi-thread';
      else if (/Loading safetensors checkpoint shards:/.test(text) && shardLoader === undefined)
        shardLoader = 'single-thread';
      const bs = GRAPH_BS.exec(text);
      if (bs) {
        graphBatchSizes = (bs[1] ?? '')
          .split(',')
          .map((s) => Number(s.trim()))
          .filter((n) => Number.isInteger(n) && n > 0);
      }
      autoPrefetchDisabledOn ??= AUTO_PREFETCH_OFF.exec(text)?.[1];
      version ??= versionFromLogLine(engine, text);
    }
    for (const event of events) {
      if (event.type === 'phase' && !phaseAt.has(event.phase)) {
        phaseAt.set(event.phase, at);
        // A quiet step does not outlive its phase (SGLang's DeepGEMM compile ends with the capture).
        if (event.phase !== 'capturing CUDA graphs') for (const kind of [...open.keys()]) close(kind, at);
      } else if (event.type === 'ready') readyAt = at;
      else if (event.type === 'activity') {
        if (event.edge === 'end') close(event.activity, at);
        else if (!open.has(event.activity)) open.set(event.activity, at);
      }
    }
  }
  if (readyAt !== undefined && !phaseAt.has('ready')) phaseAt.set('ready', readyAt);
  const end = readyAt ?? last;
  for (const kind of [...open.keys()]) close(kind, end);

  if (!phaseAt.has('starting') && entries.length > 0) phaseAt.set('starting', first);
  const seen = LOAD_PHASES.filter((p) => phaseAt.has(p)).map((p) => [p, phaseAt.get(p)!] as const);
  const phaseMs: Partial<Record<LoadPhase, number>> = {};
  for (let i = 0; i < seen.length; i++) {
    const [phase, at] = seen[i]!;
    if (phase === 'ready') continue;
    const next = seen.slice(i + 1).find(([, t]) => t >= at)?.[1] ?? end;
    phaseMs[phase] = Math.max(0, next - at);
  }
  return {
    phaseMs,
    totalMs: Math.max(0, end - first),
    ready: readyAt !== undefined,
    activityMs,
    shardLoader,
    graphBatchSizes,
    autoPrefetchDisabledOn,
    version,
  };
}
