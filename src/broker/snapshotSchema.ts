/**
 * A server snapshot as it comes off the socket, checked whole before a client window shows it:
 * every field of ServerSnapshot and of the load state it carries, each as its type declares it.
 * `server` travels as the owner's profile and is replaced by this peer's own (wire.ts): only its
 * name is read. A key that its type does not have is refused (the owner is the same program and
 * version: it is not one of ours), and each schema names every key of its type (`exact`). Pure.
 */
import { z } from 'zod';
import { LOAD_PHASES, type ActivityKind } from '../engine/events';
import type { ServerSnapshot } from '../fleet/fleetTypes';
import type { LoadState, Verdict } from '../monitor/state/loadStateTypes';
import type { SshClient, Ssh2Gap } from '../transport/openssh/chooseClient';
import type { TransportErrorKind } from '../transport/transport';
import type { ServiceStatus } from '../target/target';
import type { Activity } from '../engine/activity';
import type { LoadPrior } from '../monitor/eta/eta';
import type { ShownEta } from '../monitor/eta/etaDamp';
import type { Refusal } from '../present/refusalWords';
import type { LoadBreakdown } from '../monitor/history/loadBreakdown';
import type { ClientChoice } from '../transport/openssh/chooseClient';
import { firstIssue } from './verbs';

/**
 * `schema`, when its output has every key of `T`, an optional one too: a field added to `T` and
 * not to its schema does not compile (assignability alone lets an optional key be left out).
 */
export function exact<T>() {
  return <S extends z.ZodType<T>>(
    schema: S &
      (Exclude<keyof T, keyof z.output<S>> extends never ? unknown : { missing: Exclude<keyof T, keyof z.output<S>> }),
  ): S => schema;
}

/** Every member of the union `T`, once: a member added to `T` and not here does not compile. */
export function everyOf<T extends string>() {
  return <const A extends readonly [T, ...T[]]>(values: A & ([T] extends [A[number]] ? unknown : never)) =>
    z.enum(values);
}

/** A key whose type is `T | undefined` (required): JSON leaves it out when undefined. */
export function maybe<S extends z.ZodType>(schema: S) {
  return schema.optional().transform((v): z.output<S> | undefined => v);
}

/** An array's `undefined` element, which JSON writes as null. */
function absentAsNull<S extends z.ZodType>(schema: S) {
  return schema.nullable().transform((v): z.output<S> | undefined => v ?? undefined);
}

export const num = z.number();
export const when = z.number();
export const text = z.string().max(100_000);
export const word = z.string().max(200);
export const count = z.number().int().min(0);

const verdict = everyOf<Verdict>()([
  'stopped',
  'stopping',
  'restarting',
  'loading',
  'warming up',
  'ready',
  'unhealthy',
  'failed',
  'unreachable',
  'stalled',
]);
const phase = z.enum(LOAD_PHASES);
export const activityKind = everyOf<ActivityKind>()([
  'deepgemm',
  'torch-compile',
  'piecewise-graphs',
  'flashinfer-jit',
  'autotune',
  'post-shards',
]);
export const transportErrorKind = everyOf<TransportErrorKind>()([
  'dns',
  'refused',
  'timeout',
  'command-timeout',
  'auth',
  'host-key-unknown',
  'host-key-changed',
  'host-key-rejected',
  'sudo-password',
  'closed',
  'config',
  'other',
]);
const sshClient = everyOf<SshClient>()(['ssh2', 'openssh']);
const ssh2Gap = everyOf<Ssh2Gap>()([
  'certificate',
  'agent-certificate',
  'host-ca',
  'revoked-keys',
  'kerberos',
  'pkcs11',
  'known-hosts-command',
  'match-exec',
  'config-unreadable',
]);

const unit = exact<ServiceStatus>()(
  z.strictObject({
    loadState: word,
    activeState: word,
    subState: word,
    mainPid: count,
    nRestarts: count,
    result: word,
    execMainStatus: num.optional(),
    execMainCode: word.optional(),
    execMainStartedAt: when.optional(),
    execMainStartedMonotonicUs: num.optional(),
    execMainExitedAt: when.optional(),
    fragmentPath: text.optional(),
    dropInPaths: z.array(text).max(1_000),
    needDaemonReload: z.boolean(),
    id: word.optional(),
    invocationId: word.optional(),
    controlGroup: text.optional(),
    activeEnteredAt: when.optional(),
    execMainPid: count.optional(),
    manager: z.enum(['systemd', 'docker', 'scheduler']).optional(),
    stopRequested: z.boolean().optional(),
    jobPending: z.boolean().optional(),
    managerName: word.optional(),
    endedBecause: text.optional(),
    notFoundText: text.optional(),
    queued: z.strictObject({ reason: text.optional(), estimatedStartAt: when.optional() }).optional(),
    endsAt: when.optional(),
    jobId: word.optional(),
    node: word.optional(),
    mainPidElsewhere: z.boolean().optional(),
  }),
);

const activity = exact<Activity>()(
  z.strictObject({
    kind: activityKind,
    since: when,
    done: num.optional(),
    total: num.optional(),
    note: text.optional(),
  }),
);

const prior = exact<LoadPrior>()(
  z.strictObject({
    coldBps: num.optional(),
    warmBps: num.optional(),
    residentBytes: num.optional(),
    totalBytes: num.optional(),
    startingMs: num.optional(),
    weightsPhaseMs: num.optional(),
    afterWeightsMs: num.optional(),
    afterShardsMs: num.optional(),
    totalMsRange: z.tuple([num, num]).optional(),
    loads: count.optional(),
    foreseenSteps: z
      .array(
        z.strictObject({
          kind: activityKind,
          ms: num,
          lowMs: num,
          highMs: num,
          dir: text,
          from: z.enum(['history', 'published logs']),
        }),
      )
      .max(100)
      .optional(),
  }),
);

const eta = exact<ShownEta>()(
  z.strictObject({
    at: when,
    readyAt: when,
    lowAt: when.optional(),
    highAt: when.optional(),
    basis: text,
    source: z.enum(['history', 'defaults']).optional(),
    readsMoved: z
      .discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('uncached'), cachedPercent: num.optional() }),
        z.strictObject({ kind: z.literal('rate'), nowBps: num, pastBps: num }),
      ])
      .optional(),
    reason: text.optional(),
    key: word.optional(),
    keySince: when.optional(),
    recent: z
      .array(z.tuple([num, num]))
      .max(10_000)
      .optional(),
  }),
);

const gpuMemory = z.strictObject({ index: count, usedMiB: num, totalMiB: num });

export const loadState = exact<LoadState>()(
  z.strictObject({
    verdict,
    phase: maybe(phase),
    watchStartedAt: when,
    restartRequestedAt: maybe(when),
    mainPid: maybe(count),
    processStartedAt: maybe(when),
    baselineRestarts: maybe(count),
    unit: maybe(unit),
    shards: maybe(z.strictObject({ done: count, total: count })),
    cudaGraphBatches: maybe(
      z.strictObject({ done: count, total: count, firstDoneAt: z.strictObject({ at: when, done: count }).optional() }),
    ),
    progress: maybe(num),
    lastProgressAt: when,
    lastSignal: maybe(z.strictObject({ at: when, text })),
    http: maybe(z.enum(['refused', 'warming', 'healthy', 'error'])),
    readyLogSeen: z.boolean(),
    completion: maybe(z.strictObject({ ok: z.boolean(), detail: text })),
    readyAt: maybe(when),
    failure: maybe(z.strictObject({ summary: text, lines: z.array(text).max(10_000) })),
    recentErrors: z.array(text).max(10_000),
    connected: z.boolean(),
    downSince: maybe(when),
    connectionError: maybe(text),
    connectionErrorKind: maybe(word),
    stalled: z.boolean(),
    healthFailures: count,
    confirmedAt: maybe(when),
    journal: maybe(z.strictObject({ readable: z.boolean(), detail: text.optional() })),
    restartedBy: maybe(z.enum(['us', 'someone else'])),
    io: maybe(z.strictObject({ at: when, readBytes: num, coldBytes: num.optional(), totalBytes: num.optional() })),
    ioSamples: z.array(z.strictObject({ at: when, bytes: num, coldBytes: num.optional() })).max(100_000),
    readRate: maybe(num),
    ioTotals: z.strictObject({ coldBytes: num, coldMs: num, warmBytes: num, warmMs: num }),
    gpu: maybe(
      z.strictObject({
        at: when,
        usedMiB: num,
        totalMiB: num,
        perGpu: z.array(gpuMemory).max(1_000),
        utilPercent: num.optional(),
      }),
    ),
    gpuPeakMiB: num,
    phaseTimes: z.partialRecord(phase, when),
    prior: maybe(prior),
    eta: maybe(eta),
    witnessWarning: maybe(text),
    activity: maybe(activity),
    stepsSeen: z.array(activityKind).max(100).optional(),
    lineActivity: maybe(activity),
    weightsEnded: count,
    weightsDone: z.boolean(),
    weightsReadAt: when.optional(),
    cpu: maybe(z.strictObject({ at: when, seconds: num, cores: maybe(num) })),
    cpuSamples: z.array(z.strictObject({ at: when, seconds: num })).max(100_000),
    progressMark: z.strictObject({ readBytes: num, gpuUsedMiB: maybe(num) }),
    lastProgressWitness: maybe(word),
    standIn: maybe(
      z.strictObject({
        port: count,
        pid: count.optional(),
        command: text.optional(),
        service: text,
        since: when,
      }),
    ),
    phaseBeforeHttp: z.strictObject({ phase: maybe(phase), at: when }).optional(),
  }),
);

export const refusal = exact<Refusal>()(
  z.strictObject({
    kind: transportErrorKind,
    message: text,
    hostKeyChange: z
      .object({
        host: word,
        offered: word,
        known: z.array(word).max(1_000),
        file: text,
        lines: z.array(count).max(1_000),
      })
      .optional(),
  }),
);

const timedPhase = z.enum(['restart', ...LOAD_PHASES.filter((p) => p !== 'ready')] as [
  'restart',
  ...Exclude<(typeof LOAD_PHASES)[number], 'ready'>[],
]);

const lastLoad = exact<LoadBreakdown>()(
  z.strictObject({
    startedAt: when,
    totalMs: num,
    phases: z
      .array(
        z.strictObject({ phase: timedPhase, startMs: num, ms: num, previousMs: z.array(absentAsNull(num)).max(100) }),
      )
      .max(100),
    steps: z.array(z.strictObject({ kind: activityKind, startMs: num, ms: num })).max(1_000),
    weights: maybe(
      z.strictObject({
        bps: maybe(num),
        source: maybe(z.enum(['cold', 'warm', 'mean'])),
        cachedShare: maybe(num),
      }),
    ),
    previous: z.array(z.strictObject({ startedAt: when, totalMs: num })).max(100),
    comparison: maybe(
      z.strictObject({
        previousTotalMs: num,
        deltaMs: num,
        same: z.boolean(),
        reason: maybe(
          z.discriminatedUnion('kind', [
            z.strictObject({ kind: z.literal('page cache'), share: num, previousShare: num }),
            z.strictObject({ kind: z.literal('read rate'), bps: num, previousBps: num }),
            z.strictObject({ kind: z.literal('step'), step: activityKind, ms: num, now: z.boolean() }),
            z.strictObject({ kind: z.literal('phase'), phase: timedPhase, ms: num, previousMs: num }),
          ]),
        ),
      }),
    ),
  }),
);

const clientChoice = exact<ClientChoice>()(
  z.strictObject({
    client: sshClient,
    reason: text,
    because: z.discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('setting'), where: z.enum(['global', 'server']) }),
      z.strictObject({ kind: z.literal('windows') }),
      z.strictObject({ kind: z.literal('no-openssh') }),
      z.strictObject({ kind: z.literal('ssh2-suffices') }),
      z.strictObject({ kind: z.literal('needs-openssh'), gaps: z.array(ssh2Gap).max(100) }),
    ]),
    ssh2Gaps: z.array(text).max(100).optional(),
  }),
);

/** The snapshot without its `server`, which each peer supplies from its own settings. */
export type SnapshotBody = Omit<ServerSnapshot, 'server'>;

export const snapshotBodySchema = exact<SnapshotBody>()(
  z.strictObject({
    state: maybe(loadState),
    watching: z.boolean(),
    loading: z.boolean(),
    refusal: maybe(refusal),
    verification: maybe(text),
    verifying: z.strictObject({ word, line: z.string().max(2_000), long: z.boolean() }).optional(),
    verificationTable: z.string().max(1_000_000).optional(),
    nodes: z
      .array(z.strictObject({ label: word, host: z.string().max(255), state: maybe(loadState) }))
      .max(1_000)
      .optional(),
    forwardedPort: z.number().int().min(1).max(65_535).optional(),
    lastLoad: lastLoad.optional(),
    sshClient: clientChoice.optional(),
  }),
);

/** A load state as the owner sent it (an event's); throws (with `why`) at the first field that is not. */
export function parseLoadState(value: unknown, why: (issue: string) => Error): LoadState {
  const parsed = loadState.safeParse(value);
  if (parsed.success) return parsed.data;
  throw why(firstIssue(parsed.error));
}

/** The snapshot's body as the owner sent it; throws (with `why`) at the first field that is not. */
export function parseSnapshotBody(value: unknown, why: (issue: string) => Error): SnapshotBody {
  const parsed = snapshotBodySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw why(firstIssue(parsed.error));
}
