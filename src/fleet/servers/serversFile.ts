/**
 * Adding a server to a servers file (`kimi-service discover --add`), as text: the file keeps its
 * comments, its layout and its other keys (jsonc-parser edits). Pure.
 */
import { applyEdits, modify, parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import * as words from '../../present/words/fleetWords';

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } } as const;

export type AddedText = { readonly text: string } | { readonly error: string };

/** The servers of a servers file's value: an array, or an object's `servers` / `kimiService.servers`. */
function serversPath(value: unknown): (string | number)[] | undefined {
  if (Array.isArray(value)) return [];
  if (!value || typeof value !== 'object') return undefined;
  return 'kimiService.servers' in value ? ['kimiService.servers'] : ['servers'];
}

/** The names already in the file (for a name that must be new). */
export function serverNamesIn(text: string): string[] {
  const value: unknown = parseJsonc(text, [], { allowTrailingComma: true });
  const path = serversPath(value);
  if (!path) return [];
  const list = path.length === 0 ? value : (value as Record<string, unknown>)[path[0] as string];
  return Array.isArray(list) ? list.map((s) => String((s as { name?: unknown })?.name)) : [];
}

/** `text` with `entry` appended to its servers; no file yet (`undefined`): a new array of one. */
export function addServerToText(text: string | undefined, entry: Record<string, unknown>): AddedText {
  if (text === undefined || text.trim() === '') return { text: `${JSON.stringify([entry], null, 2)}\n` };
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0)
    return { error: words.serversFileNotJson(printParseErrorCode(errors[0]!.error), errors[0]!.offset) };
  const path = serversPath(value);
  if (!path) return { error: words.serversFileShapeless() };
  const list = path.length === 0 ? value : (value as Record<string, unknown>)[path[0] as string];
  if (list !== undefined && !Array.isArray(list)) return { error: words.serversNotAnArray(String(path[0])) };
  const edits =
    list === undefined
      ? modify(text, path, [entry], FORMAT)
      : modify(text, [...path, -1], entry, { ...FORMAT, isArrayInsertion: true });
  return { text: applyEdits(text, edits) };
}
