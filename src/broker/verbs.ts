/**
 * Every verb a peer may ask of the owner's fleet, declared once: its fields and its reply, each
 * a schema. The client's types, the owner's dispatch and the checks of both directions (the
 * owner checks a call's fields, the client the reply) all come from this table. Pure.
 */
import { z } from 'zod';
import { printable } from '../config/text';
import type { ParserVerification } from '../fleet/fleetTypes';
import type { LoadForecast } from '../monitor/forecast/loadInsights';
import { MODEL_FILE_NAMES, type ModelFileName } from '../engine/tokenizer/modelFolder';
import type { ExecResult } from '../transport/transport';
import { HOST_OPS } from './hostOps';

/** A command's standard input: larger is not one of ours (the client runs it itself). */
export const MAX_COMMAND_CHARS = 1024 * 1024;

const wholeNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const server = z.string().max(200);
const text = z.string().max(100_000);
export const questionSchema = z.enum(['confirm', 'choose']);
export type Question = z.infer<typeof questionSchema>;
export const choiceSchema = z.enum(['follow', 'restart', 'cancel']);
export type Choice = z.infer<typeof choiceSchema>;

/** Optional keys made required (`T | undefined`), as the fleet's types declare them. */
// Replies come from the owner (same version): unknown keys are left out rather than refused.
const verification: z.ZodType<ParserVerification> = z
  .object({
    summary: text,
    allPassed: z.boolean().optional(),
    table: z.string().max(1_000_000),
    verdict: z.enum(['verified', 'failed', 'inconclusive', 'incomplete']),
  })
  .transform((v) => ({ ...v, allPassed: v.allPassed }));

const number = z.number();
const forecast: z.ZodType<LoadForecast> = z
  .object({
    modelPath: text.optional(),
    residentBytes: number.optional(),
    totalBytes: number.optional(),
    text: text.optional(),
    warning: text.optional(),
    advice: text.optional(),
    prior: z.object({
      coldBps: number.optional(),
      warmBps: number.optional(),
      residentBytes: number.optional(),
      totalBytes: number.optional(),
      startingMs: number.optional(),
      weightsPhaseMs: number.optional(),
      afterWeightsMs: number.optional(),
      afterShardsMs: number.optional(),
      totalMsRange: z.tuple([number, number]).optional(),
      loads: number.optional(),
      foreseenSteps: z
        .array(
          z.object({
            kind: z.enum([
              'deepgemm',
              'torch-compile',
              'piecewise-graphs',
              'flashinfer-jit',
              'autotune',
              'post-shards',
            ]),
            ms: number,
            lowMs: number,
            highMs: number,
            dir: text,
            from: z.enum(['history', 'published logs']),
          }),
        )
        .max(100)
        .optional(),
    }),
  })
  .transform((f) => ({
    ...f,
    modelPath: f.modelPath,
    residentBytes: f.residentBytes,
    totalBytes: f.totalBytes,
    text: f.text,
    warning: f.warning,
  }));

/** A command's output, or `tooLarge`: more than a message may carry (the client runs it itself). */
const execReply: z.ZodType<ExecResult | { readonly tooLarge: true }> = z.union([
  z.strictObject({ tooLarge: z.literal(true) }),
  z.strictObject({
    stdout: z.string(),
    stderr: z.string(),
    code: z.number().int().nullable(),
    signal: z.string().max(64).optional(),
  }),
]);

/** The restart's answer: `null` when it was cancelled (a question answered no). */
const restartReply = z.union([
  z.null(),
  z.strictObject({ kind: z.literal('restarted'), issued: z.boolean() }),
  z.strictObject({ kind: z.literal('watched'), reason: text }),
]);

const onServer = z.strictObject({ server });
/** No value: the verb only says it is done (its reply carries no `value`). */
const done = z.undefined();

export const VERBS = {
  /** Watch it (its outcome follows the reply). */
  watch: { fields: z.strictObject({ server, quiet: z.boolean().optional() }), reply: done, outcome: true },
  /** Through the owner's one door of restarts. */
  restart: {
    fields: z.strictObject({
      server,
      force: z.boolean().optional(),
      issueTimeoutMs: wholeNumber.optional(),
      /** The questions the asking peer answers itself besides the confirmation (the owner's setting decides that one). */
      asks: z.array(z.literal('choose')).max(1).optional(),
    }),
    reply: restartReply,
    /** The watch of the restart (or of the load it followed): its outcome follows the reply. */
    outcome: true,
  },
  /** Whether a watch was stopped. */
  stop: { fields: onServer, reply: z.boolean() },
  verify: { fields: onServer, reply: verification },
  connect: { fields: onServer, reply: done },
  forecast: { fields: onServer, reply: forecast },
  /**
   * An operation on the server's host by name, over the owner's connection (hostOps.ts): the
   * owner builds the command itself from its own entry for the server; never a command line.
   */
  host: {
    fields: z.strictObject({
      server,
      op: z.enum(HOST_OPS),
      arg: z.string().max(4096).optional(),
      file: z.enum(MODEL_FILE_NAMES as [ModelFileName, ...ModelFileName[]]).optional(),
      timeoutMs: wholeNumber.optional(),
      maxOutputBytes: wholeNumber.optional(),
      stdin: z.string().max(MAX_COMMAND_CHARS).optional(),
    }),
    reply: execReply,
  },
} as const;

export type Verb = keyof typeof VERBS;
type FieldsMap = { readonly [V in Verb]: z.output<(typeof VERBS)[V]['fields']> };
type ReplyMap = { readonly [V in Verb]: z.output<(typeof VERBS)[V]['reply']> };
export type FieldsOf<V extends Verb> = FieldsMap[V];
export type ReplyOf<V extends Verb> = ReplyMap[V];

/** The table indexed so that a verb known only as `V` still gives its own schemas. */
const table: {
  readonly [V in Verb]: {
    readonly fields: z.ZodType<FieldsOf<V>>;
    readonly reply: z.ZodType<ReplyOf<V>>;
    /** The reply is followed by the outcome of the watch the verb started. */
    readonly outcome?: true;
  };
} = VERBS;

/** Whether the verb's reply is followed by the outcome of the watch it started. */
export function hasOutcome(verb: Verb): boolean {
  return table[verb].outcome === true;
}

export function isVerb(value: unknown): value is Verb {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(VERBS, value);
}

/** Where a value fails its schema, in a few words (the first issue, its path; an unknown key's name cut). */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const where = issue.path.map(String).join('.') || 'the value';
  const why =
    issue.code === 'unrecognized_keys' ? `unknown field "${printable(issue.keys[0] ?? '', 40)}"` : issue.message;
  return `${where}: ${why}`;
}

/** A call's fields as the verb declares them; throws (with `why`) otherwise. */
export function parseFields<V extends Verb>(verb: V, value: unknown, why: (issue: string) => Error): FieldsOf<V> {
  const schema: z.ZodType<FieldsOf<V>> = table[verb].fields;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw why(firstIssue(parsed.error));
  return parsed.data;
}

/** A reply's value as the verb declares it; throws (with `why`) otherwise. */
export function parseReply<V extends Verb>(verb: V, value: unknown, why: (issue: string) => Error): ReplyOf<V> {
  const schema: z.ZodType<ReplyOf<V>> = table[verb].reply;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw why(firstIssue(parsed.error));
  return parsed.data;
}
