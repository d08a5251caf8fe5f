/**
 * Docker's `argsEdit`: a compose service's command changes in its compose file (./composeParsers.ts,
 * the backup put back on roll back); a plain container's cannot, so the user gets the exact words.
 */
import type { ArgvPlanner } from '../../engine/engine';
import type { DockerTargetConfig } from '../../config/names';
import type { ArgsEditor, ArgsEditResult, ArgsUndo, ParserChangeDeps } from '../argsEdit';
import {
  byHandAdvice,
  changeComposeCommand,
  findComposeRollback,
  rollbackCompose,
  type ComposeRollback,
} from './composeParsers';
import {
  copyBackupOver,
  plainContainerNothingChanged,
  restartsComposeService,
  restartsContainer,
  sameAsBackup,
} from '../../present/words/editStepWords';

type Compose = Extract<DockerTargetConfig, { kind: 'compose' }>;

export class ComposeEditor implements ArgsEditor {
  readonly how = 'compose-file';
  constructor(private readonly config: Compose) {}

  get restarts(): string {
    return restartsComposeService(this.config.service);
  }

  file(): string {
    return this.config.file;
  }

  async change(deps: ParserChangeDeps, planner: ArgvPlanner): Promise<ArgsEditResult> {
    const result = await changeComposeCommand(deps, this.config.file, this.config.service, planner);
    if (result.kind === 'cancelled') return result;
    if (result.kind === 'already-set') return { kind: 'already-set', where: this.config.file };
    return { kind: 'changed', file: this.config.file, diff: result.diff, undo: composeUndo(result.rollback) };
  }

  async findUndo(deps: ParserChangeDeps): Promise<ArgsUndo | { readonly nothing: string }> {
    const plan = await findComposeRollback(deps, this.config.file);
    return plan ? composeUndo(plan) : { nothing: sameAsBackup(this.config.file) };
  }
}

function composeUndo(plan: ComposeRollback): ArgsUndo {
  return {
    file: plan.file,
    restores: 'previous',
    byHand: copyBackupOver(plan.backup, plan.file),
    run: (deps) => rollbackCompose(deps, plan),
  };
}

/** A plain container: its command line is `docker run`'s; the change is said, for the user to make. */
export class ByHandEditor implements ArgsEditor {
  readonly how = 'by-hand';
  constructor(
    private readonly name: string,
    /** The container's command line now (docker inspect). */
    private readonly argv: (deps: ParserChangeDeps) => Promise<readonly string[]>,
  ) {}

  get restarts(): string {
    return restartsContainer(this.name);
  }

  file(): undefined {
    return undefined;
  }

  async change(deps: ParserChangeDeps, planner: ArgvPlanner): Promise<ArgsEditResult> {
    return { kind: 'manual', advice: byHandAdvice(this.name, await this.argv(deps), planner) };
  }

  async findUndo(): Promise<{ readonly nothing: string }> {
    return { nothing: plainContainerNothingChanged(this.name) };
  }
}
