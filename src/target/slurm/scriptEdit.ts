/**
 * A change of the server's arguments (the parser flags, an advice) in a batch script, planned:
 * the words the planner adds go at the end of the server's command (before a comment or a
 * trailing `&`), every other byte of the script stays as it was, and the new text is read back
 * to the planned command line. A change of a word already there is left to the user. Pure.
 */
import { findServerCommand, type ArgvPlanner } from '../../engine/engine';
import { quote } from '../../transport/shell';
import { planOrRefuse } from '../argsEdit';
import { serverArgvOfScript, serverCommandOfScript } from './scriptArgv';
import { scriptFlagsDiffer, scriptNoServerCommand, scriptWrittenOtherwise } from '../../present/words/argsEditWords';

export type ScriptPlan =
  | { readonly kind: 'already-set' }
  | { readonly kind: 'change'; readonly newText: string; readonly diff: string; readonly newArgv: readonly string[] }
  | { readonly kind: 'unsupported'; readonly reason: string };

export function planScriptChange(text: string, file: string, planner: ArgvPlanner): ScriptPlan {
  const command = serverCommandOfScript(text);
  const location = command ? findServerCommand(command.argv) : null;
  if (!command || !location) return { kind: 'unsupported', reason: scriptNoServerCommand(file, planner.label()) };
  const plan = planOrRefuse(planner, command.argv, location);
  if (plan.kind !== 'change') return plan;
  const { argv } = command;
  const kept = plan.newArgv.slice(0, argv.length);
  if (kept.length < argv.length || kept.some((w, i) => w !== argv[i]))
    return { kind: 'unsupported', reason: scriptFlagsDiffer(file, planner.label(location)) };
  const added = plan.newArgv.slice(argv.length).map(quote).join(' ');
  const newText = `${text.slice(0, command.endOffset)} ${added}${text.slice(command.endOffset)}`;
  const readBack = serverArgvOfScript(newText);
  if (readBack.join('\0') !== plan.newArgv.join('\0'))
    return { kind: 'unsupported', reason: scriptWrittenOtherwise(file, planner.label(location)) };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createTwoFilesPatch } = require('diff') as typeof import('diff');
  const diff = createTwoFilesPatch(file, file, text, newText, 'current', `with ${planner.label(location)}`);
  return { kind: 'change', newText, diff, newArgv: plan.newArgv };
}
