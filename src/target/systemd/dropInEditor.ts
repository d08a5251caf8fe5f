/** A unit's `argsEdit`: the new command line as a drop-in (./argvChange.ts), its roll back restoring the drop-in before it. */
import type { ArgvPlanner } from '../../engine/engine';
import type { ArgsEditor, ArgsEditResult, ArgsUndo, ParserChangeDeps } from '../argsEdit';
import { changeServerArgv, findRollbackPlan, rollback, type RollbackPlan } from './argvChange';
import { dropInLocation } from './sudoers';
import { noDropInToRollBack, removeDropInAndReload } from '../../present/words/editStepWords';

export class DropInEditor implements ArgsEditor {
  readonly how = 'systemd-drop-in';
  constructor(private readonly unit: string) {}

  get restarts(): string {
    return this.unit;
  }

  file(deps: Pick<ParserChangeDeps, 'unitDir'>): string {
    return dropInLocation(this.unit, deps.unitDir).file;
  }

  async change(deps: ParserChangeDeps, planner: ArgvPlanner): Promise<ArgsEditResult> {
    const result = await changeServerArgv(deps, this.unit, planner);
    if (result.kind === 'cancelled') return result;
    if (result.kind === 'already-set') return { kind: 'already-set', where: this.unit };
    return { kind: 'changed', file: result.rollback.dropInPath, diff: result.diff, undo: dropInUndo(result.rollback) };
  }

  async findUndo(deps: ParserChangeDeps): Promise<ArgsUndo | { readonly nothing: string }> {
    const plan = await findRollbackPlan(deps, this.unit);
    return plan ? dropInUndo(plan) : { nothing: noDropInToRollBack(this.unit) };
  }
}

/** The roll back of a drop-in as an ArgsUndo (the plan is the host's own record: see findRollbackPlan). */
export function dropInUndo(plan: RollbackPlan): ArgsUndo {
  return {
    file: plan.dropInPath,
    restores: plan.previousContent === null ? 'removed' : 'previous',
    byHand: removeDropInAndReload(plan.dropInPath),
    run: (deps) => rollback(deps, plan),
  };
}
