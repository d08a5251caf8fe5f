/**
 * The operations on a server's host that the owner runs for another window, by name: the
 * Target's reads and its command-line edit (target/peerCommands.ts), the model-folder and
 * page-cache reads. A peer sends an operation's name and its one parameter, never a command: the
 * owner builds the line itself from its own settings entry for that server, so nothing a peer
 * writes reaches a shell but a checked number, path or list of property names, quoted by the
 * owner's builder. A client finds which operation a line of its own code is by building each
 * one for its entry with the parameter read back from the line and comparing. Pure.
 */
import type { ServerProfile } from '../config/config';
import { listingCommand, MODEL_FILE_NAMES, readFileCommand, type ModelFileName } from '../engine/tokenizer/modelFolder';
import { fsTypeCommand, residencyCommand } from '../host/pageCache';
import { modelSizeCommand } from '../host/procIo';
import { measureResidencyCommand } from '../monitor/forecast/warmCache';
import { TARGET_OPS, targetCommandShapes, type CommandParam, type CommandShape } from '../target/peerCommands';
import { isValidAbsolutePath, shellLine } from '../transport/shell';

const READER_OPS = [
  'model-list',
  'model-read',
  'page-cache-residency',
  'page-cache-measure',
  'model-size',
  'fs-type',
] as const;
/** Every operation's name, the only words a peer may ask for. */
export const HOST_OPS = [...TARGET_OPS, ...READER_OPS] as const;
export type HostOp = (typeof HOST_OPS)[number];

/** One operation as the owner builds it: a shell line from the parameter (none: ''). */
interface OpShape {
  readonly op: HostOp;
  readonly param?: CommandParam;
  /** Which model file (model-read only). */
  readonly file?: ModelFileName;
  readonly stdin?: true;
  build(value: string): string;
}

/** What a client asks for: the operation, its parameter, the model file. */
export interface HostOpCall {
  readonly op: HostOp;
  readonly arg?: string;
  readonly file?: ModelFileName;
}

const onPath = (op: HostOp, build: (path: string) => string, file?: ModelFileName): OpShape => ({
  op,
  param: 'path',
  build,
  ...(file ? { file } : {}),
});

/** The reader's operations: the same for every entry (any model folder's known files, never others). */
const READER: readonly OpShape[] = [
  onPath('model-list', listingCommand),
  ...MODEL_FILE_NAMES.map((name) => onPath('model-read', (folder) => readFileCommand(folder, name), name)),
  onPath('page-cache-residency', residencyCommand),
  onPath('page-cache-measure', measureResidencyCommand),
  onPath('model-size', modelSizeCommand),
  onPath('fs-type', fsTypeCommand),
];

function shapesOf(server: ServerProfile): OpShape[] {
  const target = targetCommandShapes(server).map(
    (shape: CommandShape): OpShape => ({ ...shape, build: (value) => shellLine(shape.build(value)) }),
  );
  return [...target, ...READER];
}

/** A parameter as its kind allows it: bounded, and nothing a shell would read as more than one word. */
export function validParam(param: CommandParam, value: string): boolean {
  if (value.length > 4096) return false;
  if (param === 'count') return /^\d{1,9}$/.test(value);
  if (param === 'path') return isValidAbsolutePath(value);
  return /^[A-Za-z]+(,[A-Za-z]+){0,63}$/.test(value);
}

/** The line the owner builds for `server`'s entry; a string of why it will not (refused), as `{ refused }`. */
export function buildHostOp(
  server: ServerProfile,
  call: HostOpCall & { readonly stdin?: boolean },
): { readonly line: string } | { readonly refused: string } {
  const shape = shapesOf(server).find((s) => s.op === call.op && s.file === call.file);
  if (!shape) return { refused: `${call.op}${call.file ? ` ${call.file}` : ''} is not an operation of ${server.name}` };
  if (call.stdin && !shape.stdin) return { refused: `${call.op} takes no input` };
  if (!shape.param)
    return call.arg === undefined ? { line: shape.build('') } : { refused: `${call.op} takes no value` };
  if (call.arg === undefined || !validParam(shape.param, call.arg))
    return { refused: `${call.op} takes a ${shape.param === 'count' ? 'whole number' : shape.param}` };
  try {
    return { line: shape.build(call.arg) };
  } catch {
    return { refused: `${call.op}: the value is refused by its builder` };
  }
}

/** Stands in for the parameter to find where it goes in a built line. */
const SENTINEL: { readonly [P in CommandParam]: string } = {
  count: '42424',
  path: '/kimi-sentinel-path',
  properties: 'KimiSentinelProperties',
};
/** The parameter as it may appear in a line (a path quoted or not). */
const CAPTURE: { readonly [P in CommandParam]: string } = {
  count: '(\\d{1,9})',
  path: "([^'\\s]+|'[^']*(?:'\\\\''[^']*)*')",
  properties: '([A-Za-z,]{1,2000})',
};

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A word as `quote` writes it, back to its text; the text itself when it is not quoted. */
function unquoted(word: string): string {
  return word.startsWith("'") && word.endsWith("'") && word.length >= 2
    ? word.slice(1, -1).replace(/'\\''/g, "'")
    : word;
}

/** The parameter with which `shape` builds exactly `line` ('' without one); undefined when it does not. */
function argOf(shape: OpShape, line: string): string | undefined {
  try {
    const { param } = shape;
    if (!param) return shape.build('') === line ? '' : undefined;
    const parts = shape.build(SENTINEL[param]).split(SENTINEL[param]);
    const found = new RegExp(`^${parts.map(escape).join(CAPTURE[param])}$`, 's').exec(line);
    const value = found?.[1] === undefined ? undefined : unquoted(found[1]);
    return value !== undefined && validParam(param, value) && shape.build(value) === line ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Which operation of `server`'s entry builds `line`: what a client asks the owner for; undefined: none. */
export function hostOpOf(server: ServerProfile, line: string): HostOpCall | undefined {
  for (const shape of shapesOf(server)) {
    const arg = argOf(shape, line);
    if (arg === undefined) continue;
    return { op: shape.op, ...(shape.param ? { arg } : {}), ...(shape.file ? { file: shape.file } : {}) };
  }
  return undefined;
}
