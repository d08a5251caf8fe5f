/**
 * "Suggest a faster load": gathers the evidence of a server's last load (its log since the
 * process started, its command line, the host's memory and filesystem, the engine's version),
 * asks the pure rules (engine/advice) what would cut the largest phase, and applies one advice
 * through the target's `argsEdit`, with the same diff, confirmation and roll back as the parsers.
 * Knows nothing of VS Code.
 */
import type { ServerProfile } from '../../config/config';
import { engineLabels, ensureSwitch, findServerCommand, modelPathOf, setFlag } from '../../engine/execStart';
import { diffArgv } from '../../engine/argvDiff';
import type { EngineId as Engine } from '../../engine/engine';
import { logFacts, type LogEntry, type LogFacts } from '../../engine/advice/logFacts';
import { advise, type Advice, type AdviceResult, type HostFacts } from '../../engine/advice/rules';
import { versionFromInfo, versionFromOutput, type EngineVersion } from '../../engine/advice/version';
import { ParserChangeError, type ArgsEditor, type ArgsEditResult, type ParserChangeDeps } from '../../target/argsEdit';
import type { ServerHttpClient as SglangClient } from '../../engine/serverHttp';
import { targetFor, targetIo, type Target } from '../../target/target';
import { quote } from '../../transport/shell';
import type { Transport } from '../../transport/transport';
import type { LoadRecord } from '../../monitor/history/history';
import { measureResidency } from '../../monitor/forecast/warmCache';
import { fsTypeCommand } from '../../host/pageCache';
import { ServerSession } from '../../monitor/watch/session';
import { cannotApply, noServerCommandLine, notACommandLineChange } from '../../present/words/fleetWords';
import {
  dockerByHand,
  logLinesSinceStart,
  pageCacheUnreadable,
  versionFromTheLog,
  versionUnknownLine,
} from '../../present/words/adviceWords';

/** What the verb needs of a session (ServerSession has it). */
export interface AdviceSession {
  readonly profile: ServerProfile;
  readonly transport: Transport;
  readonly client: SglangClient;
}

/** The unit's journal since the process started (the fields read here only; `-a` keeps tqdm's long lines). */

/** A single-host session (a multi-node server's ranks each have their own log: not advised yet). */
export function adviceSessionOf(session: unknown): AdviceSession | undefined {
  return session instanceof ServerSession ? session : undefined;
}

export interface AdviceReport {
  readonly engine: Engine;
  readonly argv: readonly string[];
  readonly version: EngineVersion | undefined;
  readonly log: LogFacts;
  readonly host: HostFacts;
  readonly result: AdviceResult;
}

/** Journal entries read back for one load (a long load with tqdm bars logs a few thousand). */
const LOG_LINES = 20_000;
const TIMEOUT_MS = 30_000;

export interface GatherOptions {
  /** This server's load history, newest first: the page-cache share when the last load began. */
  readonly records?: readonly LoadRecord[];
  readonly log?: (line: string) => void;
  /** The page-cache share when this load began, when the caller knows it (the live watch's prior). */
  readonly residentShareAtStart?: number;
  /** The shortest phase worth advice (engine/advice/rules MIN_PHASE_MS by default). */
  readonly minPhaseMs?: number;
}

export async function gatherAdvice(session: AdviceSession, options: GatherOptions = {}): Promise<AdviceReport> {
  const say = options.log ?? (() => undefined);
  const io = targetIo(session.transport, TIMEOUT_MS);
  const target = targetFor(session.profile);
  const state = await target.readState(io);
  const location = findServerCommand(state.argv);
  if (!location) {
    throw new Error(noServerCommandLine(session.profile.unit, engineLabels(), state.argv.join(' ').slice(0, 200)));
  }
  const engine = location.engine;
  const since = state.unit.execMainStartedAt;
  // The log's tail (the unit's journal, a container's own logs), from the process's start on.
  const tail = await target.tailLog(io, LOG_LINES);
  const entries: LogEntry[] = tail.entries.filter((entry) => since === undefined || entry.at >= since - 1000);
  const log = logFacts(engine, entries);
  say(logLinesSinceStart(entries.length, JSON.stringify(log.phaseMs)));

  const share = options.residentShareAtStart ?? residentShareOf(options.records ?? [], since);
  const host = await hostFacts(session, target, state.argv, (p) => state.hostPath(p), share, say);
  const version = await engineVersion(session, target, engine, log, state.argv, location.start, say);
  const result = advise({
    engine,
    argv: state.argv,
    log,
    host,
    version,
    ...(options.minPhaseMs !== undefined ? { minPhaseMs: options.minPhaseMs } : {}),
  });
  return { engine, argv: state.argv, version, log, host, result: byHand(session.profile, target, result) };
}

/** A command line the target cannot edit (a plain container's): its advice says what to add, by hand. */
function byHand(profile: ServerProfile, target: Target, result: AdviceResult): AdviceResult {
  if (target.argsEdit.how !== 'by-hand') return result;
  return {
    ...result,
    advice: result.advice.map((a) =>
      a.change && !a.notApplicable ? { ...a, notApplicable: dockerByHand(profile.unit, a.action) } : a,
    ),
  };
}

async function hostFacts(
  session: AdviceSession,
  target: Target,
  argv: readonly string[],
  hostPath: (p: string) => string | undefined,
  residentShareAtStart: number | undefined,
  say: (line: string) => void,
): Promise<HostFacts> {
  const given = modelPathOf(argv);
  const modelPath = given?.startsWith('/') ? hostPath(given) : undefined;
  let memAvailableBytes: number | undefined;
  let modelBytes: number | undefined;
  let fsType: string | undefined;
  if (modelPath) {
    try {
      const { residency, memAvailable } = await measureResidency(session.transport, modelPath);
      memAvailableBytes = memAvailable;
      if (residency.totalBytes !== undefined && residency.totalBytes > 0) modelBytes = residency.totalBytes;
    } catch (e) {
      say(pageCacheUnreadable((e as Error).message));
    }
    const fs = await session.transport.exec(fsTypeCommand(modelPath), { timeoutMs: TIMEOUT_MS });
    if (fs.code === 0 && /^[\w./-]{1,40}$/.test(fs.stdout.trim())) fsType = fs.stdout.trim();
  }
  const environment = await target.readEnvironment(targetIo(session.transport, TIMEOUT_MS));
  return {
    ...(memAvailableBytes !== undefined ? { memAvailableBytes } : {}),
    ...(modelBytes !== undefined ? { modelBytes } : {}),
    ...(residentShareAtStart !== undefined ? { residentShareAtStart } : {}),
    ...(fsType !== undefined ? { fsType } : {}),
    ...(environment ? { environment } : {}),
  };
}

/** A restart is asked for at most this long before the process it starts (the stop in between). */
const STOP_WINDOW_MS = 120_000;

/**
 * The page-cache share when the load of the process started at `since` began: from its own
 * history record (begun shortly before that process started), never from an earlier load's.
 */
export function residentShareOf(records: readonly LoadRecord[], since: number | undefined): number | undefined {
  if (since === undefined) return undefined;
  const record = records.find((r) => r.startedAt <= since + 5_000 && r.startedAt >= since - STOP_WINDOW_MS);
  if (record?.residentBytesAtStart === undefined || !record.totalBytes) return undefined;
  return Math.min(1, record.residentBytesAtStart / record.totalBytes);
}

/** The log's own words first, then the running server's answer, then the package on the host. */
async function engineVersion(
  session: AdviceSession,
  target: Target,
  engine: Engine,
  log: LogFacts,
  argv: readonly string[],
  start: number,
  say: (line: string) => void,
): Promise<EngineVersion | undefined> {
  if (log.version) return { text: log.version, source: versionFromTheLog() };
  const path = engine === 'vllm' ? '/version' : '/server_info';
  try {
    if (engine === 'sglang') {
      const info = await session.client.serverInfo();
      const text = info.ok ? versionFromInfo(info.info) : undefined;
      if (text) return { text, source: info.ok ? info.path : path };
    } else {
      const r = await session.client.request('GET', path);
      if (r.kind === 'http' && r.status === 200) {
        const text = versionFromInfo(safeJson(r.body));
        if (text) return { text, source: path };
      }
    }
  } catch {
    // Not serving: ask the package.
  }
  // The host's Python is not the one of a container.
  if (!target.commandRunsOnHost) return undefined;
  const python = interpreterOf(argv, start);
  if (!python) return undefined;
  const module = engine === 'vllm' ? 'vllm' : 'sglang';
  const command = `timeout 20 ${quote(python)} -c ${quote(`import ${module}; print(${module}.__version__)`)}`;
  const r = await session.transport.exec(command, { timeoutMs: TIMEOUT_MS });
  const text = r.code === 0 ? versionFromOutput(r.stdout) : undefined;
  if (!text) say(versionUnknownLine(module, command, (r.stderr || r.stdout).trim().slice(0, 200)));
  return text ? { text, source: `${python} -c 'import ${module}'` } : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The unit's Python: the interpreter of `python -m ...`, or the one next to a `sglang`/`vllm` script. */
function interpreterOf(argv: readonly string[], start: number): string | undefined {
  const word = argv[start];
  if (!word) return undefined;
  const base = word.slice(word.lastIndexOf('/') + 1);
  if (/^python[0-9.]*$/.test(base)) return word;
  return word.includes('/') ? `${word.slice(0, word.lastIndexOf('/'))}/python` : undefined;
}

/** The advice's change on a command line (pure). */
export function applyToArgv(argv: readonly string[], advice: Advice): string[] {
  const change = advice.change;
  if (!change) return [...argv];
  return change.value === undefined ? ensureSwitch(argv, change.flag) : setFlag(argv, change.flag, change.value);
}

/** How the server's arguments change (the fronts word their question after it). */
export function argsEditorOf(profile: ServerProfile): ArgsEditor {
  return targetFor(profile).argsEdit;
}

/**
 * Applies one advice: the server's command line with the advice's flag, through the target's
 * `argsEdit`, after the user's yes (deps.confirmDiff). The caller restarts, and rolls back
 * (the result's `undo`) when the new command line fails.
 */
export async function applyAdvice(
  deps: ParserChangeDeps,
  profile: ServerProfile,
  advice: Advice,
): Promise<ArgsEditResult> {
  const change = advice.change;
  if (!change) throw new ParserChangeError(notACommandLineChange(advice.title, advice.action));
  if (advice.notApplicable) throw new ParserChangeError(cannotApply(advice.title, advice.notApplicable));
  const label = change.value === undefined ? change.flag : `${change.flag} ${change.value}`;
  return argsEditorOf(profile).change(deps, {
    plan: (argv) => {
      const newArgv = applyToArgv(argv, advice);
      if (newArgv.length === argv.length && newArgv.every((a, i) => a === argv[i])) return { kind: 'already-set' };
      return { kind: 'change', newArgv, diff: diffArgv(argv, newArgv) };
    },
    label: () => label,
  });
}
