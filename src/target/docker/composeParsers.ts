/**
 * A change of the arguments (the parser flags, an advice) for Docker: the compose file's
 * `command:` of the service gets it (comments and layout kept, a diff shown, a backup kept,
 * rolled back on request); a plain container cannot be changed in place, so the user is told
 * exactly what its `docker run` needs. The plans are pure; `changeComposeCommand` /
 * `rollbackCompose` do the I/O (./composeEditor.ts makes them the targets' `argsEdit`).
 */
import type { Document, Scalar, YAMLSeq } from 'yaml';
import { quote, type HostCommand } from '../../transport/shell';
import { findServerCommand, type ArgvPlanner } from '../../engine/engine';
import { ParserChangeError, planOrRefuse, type ParserChangeDeps } from '../argsEdit';
import { BACKUP_SUFFIX, findBackup } from '../fileBackup';
import { alreadySet, notWrittenBack, restoredFrom, stepFailed, wroteFile } from '../../present/words/targetWords';
import {
  keepingComposeBackup,
  readingFile,
  readingFileBack,
  restoringFile,
  touchingFile,
  writingFile,
} from '../../present/words/editStepWords';
import {
  composeCommandIs,
  composeFlagsInEntrypoint,
  composeLaidOutOtherwise,
  composeNoCommand,
  composeNoServerCommand,
  composeNoService,
  composeNotYaml,
  containerAddByHand,
  containerAlreadyRuns,
  containerRecreateWith,
  type ComposeCommandShape,
} from '../../present/words/argsEditWords';

export type ComposePlan =
  | { readonly kind: 'already-set'; readonly argv: readonly string[] }
  | { readonly kind: 'change'; readonly newText: string; readonly diff: string; readonly newArgv: readonly string[] }
  | { readonly kind: 'unsupported'; readonly reason: string };

/** A word as a YAML scalar: plain when YAML would read it back as the same string, else double-quoted. */
function yamlWord(word: string): string {
  const plain =
    /^[A-Za-z0-9_./=@+-][A-Za-z0-9_./:=@+-]*$/.test(word) &&
    !/^[-+]?[0-9.]+$/.test(word) &&
    !/^(true|false|null|yes|no|on|off|~)$/i.test(word) &&
    !/^-$/.test(word);
  return plain ? word : JSON.stringify(word);
}

/**
 * The file with the command's words changed in place and new words added after the last one,
 * in the list's own layout: every other byte of the file (comments, spacing) stays as it was.
 * Undefined when the words cannot be matched that way (a duplicate flag dropped...).
 */
function spliceCommand(
  text: string,
  node: unknown,
  oldWords: readonly string[],
  newWords: readonly string[],
  yaml: typeof import('yaml'),
): string | undefined {
  if (newWords.length < oldWords.length) return undefined;
  const edits: { at: number; end: number; insert: string }[] = [];
  if (yaml.isSeq(node)) {
    const items = node.items as Scalar[];
    for (let i = 0; i < oldWords.length; i++) {
      const range = items[i]?.range;
      if (!range) return undefined;
      if (oldWords[i] !== newWords[i]) edits.push({ at: range[0], end: range[1], insert: yamlWord(newWords[i] ?? '') });
    }
    // New words quoted when every word of the list is, after the last one, with the list's own separator.
    const lastItem = items[items.length - 1];
    const quoted = items.every((i) => i.type === 'QUOTE_DOUBLE');
    const added = newWords.slice(oldWords.length).map((w) => (quoted ? JSON.stringify(w) : yamlWord(w)));
    const last = lastItem?.range;
    if (added.length > 0) {
      if (!last) return undefined;
      const previous = items[items.length - 2]?.range;
      const separator = previous ? text.slice(previous[1], last[0]) : ', ';
      if (node.flow)
        edits.push({
          at: last[1],
          end: last[1],
          insert: added.map((w) => `${/^\s*,\s*$/.test(separator) ? separator : ', '}${w}`).join(''),
        });
      else {
        const lineStart = text.lastIndexOf('\n', last[0] - 1) + 1;
        const dash = /^(\s*-\s+)/.exec(text.slice(lineStart, last[0]));
        if (!dash) return undefined;
        const lineEnd = text.indexOf('\n', last[0]);
        const at = lineEnd < 0 ? text.length : lineEnd;
        edits.push({ at, end: at, insert: added.map((w) => `\n${dash[1]}${w}`).join('') });
      }
    }
  } else if (
    yaml.isScalar(node) &&
    node.range &&
    (node.type === 'PLAIN' || node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE')
  ) {
    const line = newWords.join(' ');
    edits.push({
      at: node.range[0],
      end: node.range[1],
      insert: node.type === 'PLAIN' && !/: | #/.test(line) ? line : JSON.stringify(line),
    });
  } else return undefined;
  let out = text;
  for (const e of edits.sort((x, y) => y.at - x.at)) out = out.slice(0, e.at) + e.insert + out.slice(e.end);
  return out;
}

function scalarWords(node: unknown, yaml: typeof import('yaml')): string[] | ComposeCommandShape | undefined {
  if (node === undefined || node === null) return undefined;
  if (yaml.isSeq(node)) {
    const items = (node as YAMLSeq).items;
    if (!items.every((i) => yaml.isScalar(i) && (typeof i.value === 'string' || typeof i.value === 'number')))
      return 'list-not-words';
    return items.map((i) => String((i as Scalar).value));
  }
  if (yaml.isScalar(node) && typeof node.value === 'string') {
    // Compose splits a string command like a shell; only plain words are rewritten safely.
    if (/["'\\$`]/.test(node.value)) return 'quoted-string';
    return node.value
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '');
  }
  return 'neither';
}

/** The compose file `text` with the planner's change on the service's command; pure. */
export function planComposeChange(text: string, file: string, service: string, planner: ArgvPlanner): ComposePlan {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const yaml = require('yaml') as typeof import('yaml');
  const doc: Document = yaml.parseDocument(text);
  if (doc.errors.length > 0)
    return { kind: 'unsupported', reason: composeNotYaml(file, `${doc.errors[0]?.message.split('\n')[0]}`) };
  const svc = doc.getIn(['services', service], true);
  if (!yaml.isMap(svc)) return { kind: 'unsupported', reason: composeNoService(file, service) };
  const commandNode = svc.get('command', true);
  const command = scalarWords(commandNode, yaml);
  if (command === undefined) {
    return { kind: 'unsupported', reason: composeNoCommand(service, file) };
  }
  if (typeof command === 'string') return { kind: 'unsupported', reason: composeCommandIs(service, file, command) };
  const entry = scalarWords(svc.get('entrypoint', true), yaml);
  const entryArgv = Array.isArray(entry) ? entry : [];
  const full = [...entryArgv, ...command];
  const location = findServerCommand(full);
  if (!location) {
    return { kind: 'unsupported', reason: composeNoServerCommand(service, file, full.join(' ').slice(0, 200)) };
  }
  const plan = planOrRefuse(planner, full, location);
  if (plan.kind === 'unsupported') return plan;
  if (plan.kind === 'already-set') return { kind: 'already-set', argv: full };
  const newFull = plan.newArgv;
  if (newFull.slice(0, entryArgv.length).join('\0') !== entryArgv.join('\0')) {
    return { kind: 'unsupported', reason: composeFlagsInEntrypoint(service, file) };
  }
  const newCommand = newFull.slice(entryArgv.length);
  const newText = spliceCommand(text, commandNode, command, newCommand, yaml);
  // Read back: the new file must say exactly the new command, and nothing else may have moved.
  const check = newText === undefined ? undefined : yaml.parseDocument(newText);
  const readBack =
    check && check.errors.length === 0
      ? scalarWords(check.getIn(['services', service, 'command'], true), yaml)
      : undefined;
  if (newText === undefined || !Array.isArray(readBack) || readBack.join('\0') !== newCommand.join('\0')) {
    return { kind: 'unsupported', reason: composeLaidOutOtherwise(service, file, planner.label(location)) };
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createTwoFilesPatch } = require('diff') as typeof import('diff');
  const diff = createTwoFilesPatch(file, file, text, newText, 'current', `with ${planner.label(location)}`);
  return { kind: 'change', newText, diff, newArgv: newFull };
}

/** What a plain container needs: its command with the change, to be run again by hand. */
export function byHandAdvice(container: string, argv: readonly string[], planner: ArgvPlanner): string {
  const location = argv.length === 0 ? null : findServerCommand(argv);
  const flags = planner.label(location ?? undefined);
  if (!location) {
    return containerAddByHand(container, flags);
  }
  const plan = planOrRefuse(planner, argv, location);
  if (plan.kind === 'unsupported') throw new ParserChangeError(plan.reason);
  if (plan.kind === 'already-set') return containerAlreadyRuns(container, flags);
  return containerRecreateWith(container, plan.newArgv.map(quote).join(' '), flags);
}

export interface ComposeRollback {
  readonly file: string;
  readonly backup: string;
}

export type ComposeEnableResult =
  | { readonly kind: 'already-set' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'changed'; readonly rollback: ComposeRollback; readonly diff: string };

export const COMPOSE_BACKUP_SUFFIX = BACKUP_SUFFIX;

async function must(deps: ParserChangeDeps, what: string, command: HostCommand, stdin?: string): Promise<string> {
  const r = await deps.exec(command, stdin === undefined ? undefined : { stdin });
  if (r.code !== 0)
    throw new ParserChangeError(stepFailed(what, r.code ?? r.signal ?? '?', r.stderr.trim().slice(0, 300)));
  return r.stdout;
}

/**
 * Reads the compose file, shows the diff, keeps FILE.kimi-backup, writes the new file (its
 * content on stdin) and reads it back. The caller restarts: the file is then newer than the
 * container, so the restart recreates the service (dockerTarget.restartCommand).
 */
export async function changeComposeCommand(
  deps: ParserChangeDeps,
  file: string,
  service: string,
  planner: ArgvPlanner,
): Promise<ComposeEnableResult> {
  const text = await must(deps, readingFile(file), { argv: ['cat', '--', file], sudo: deps.sudo });
  const plan = planComposeChange(text, file, service, planner);
  if (plan.kind === 'unsupported') throw new ParserChangeError(plan.reason);
  if (plan.kind === 'already-set') {
    deps.log(alreadySet(planner.label(findServerCommand(plan.argv) ?? undefined), file));
    return { kind: 'already-set' };
  }
  if (!(await deps.confirmDiff(plan.diff))) return { kind: 'cancelled' };
  const backup = `${file}${COMPOSE_BACKUP_SUFFIX}`;
  await must(deps, keepingComposeBackup(), { argv: ['cp', '-p', '--', file, backup], sudo: deps.sudo });
  const rollback = { file, backup };
  await must(
    deps,
    writingFile(file),
    { argv: ['tee', '--', file], sudo: deps.sudo, discardStdout: true },
    plan.newText,
  );
  const written = await must(deps, readingFileBack(file), { argv: ['cat', '--', file], sudo: deps.sudo });
  if (written !== plan.newText) {
    await rollbackCompose(deps, rollback);
    throw new ParserChangeError(notWrittenBack(file));
  }
  deps.log(wroteFile(file, backup));
  return { kind: 'changed', rollback, diff: plan.diff };
}

/** The compose file as it was before the change (from its backup). The caller restarts. */
export async function rollbackCompose(deps: ParserChangeDeps, plan: ComposeRollback): Promise<void> {
  await must(deps, restoringFile(plan.file), { argv: ['cp', '--', plan.backup, plan.file], sudo: deps.sudo });
  // The restored file must count as newer than the container made from the changed one.
  await must(deps, touchingFile(plan.file), { argv: ['touch', '--', plan.file], sudo: deps.sudo });
  deps.log(restoredFrom(plan.file, plan.backup));
}

/**
 * The roll back of a compose file on the host now, from the host alone: its `.kimi-backup`
 * when there is one and it differs from the file; undefined when there is nothing to put back.
 */
export async function findComposeRollback(
  deps: Pick<ParserChangeDeps, 'exec' | 'sudo'>,
  file: string,
): Promise<ComposeRollback | undefined> {
  return findBackup(deps, file);
}
