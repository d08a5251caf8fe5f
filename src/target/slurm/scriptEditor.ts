/**
 * Slurm's `argsEdit`: the server's command line in the batch script a restart submits, changed
 * in place (./scriptEdit.ts plans it; the previous script kept as SCRIPT.kimi-backup and put
 * back on roll back). A requeue would run the job's own copy of the script, so the restart
 * after a change submits the file again (SlurmTarget.restart compares them).
 */
import type { ArgvPlanner } from '../../engine/engine';
import type { SlurmTargetConfig } from '../../config/names';
import type { ArgsEditor, ArgsEditResult, ArgsUndo, ParserChangeDeps } from '../argsEdit';
import { ParserChangeError } from '../argsEdit';
import { findBackup, readHostFile, restoreBackup, writeWithBackup, type FileBackup } from '../fileBackup';
import { homeCommand } from './slurmCommands';
import { planScriptChange } from './scriptEdit';
import { alreadyIn, loginHomeUnknown, restoredFrom, wroteFile } from '../../present/words/targetWords';
import { copyBackupOver, restartsJob, sameAsBackup } from '../../present/words/editStepWords';

export class BatchScriptEditor implements ArgsEditor {
  readonly how = 'batch-script';
  constructor(private readonly config: SlurmTargetConfig) {}

  get restarts(): string {
    return restartsJob(this.config.label);
  }

  file(): string {
    return this.config.script;
  }

  /** The script's path on the login node (`~/` is the login user's home). */
  private async path(deps: ParserChangeDeps): Promise<string> {
    if (!this.config.script.startsWith('~/')) return this.config.script;
    const home = await deps.exec(homeCommand());
    const dir = home.stdout.trim();
    if (home.code !== 0 || !dir.startsWith('/'))
      throw new ParserChangeError(loginHomeUnknown(deps.host, home.stderr.trim()));
    return `${dir.replace(/\/+$/, '')}/${this.config.script.slice(2)}`;
  }

  async change(deps: ParserChangeDeps, planner: ArgvPlanner): Promise<ArgsEditResult> {
    const file = await this.path(deps);
    const plan = planScriptChange(await readHostFile(deps, file), file, planner);
    if (plan.kind === 'unsupported') throw new ParserChangeError(plan.reason);
    if (plan.kind === 'already-set') {
      deps.log(alreadyIn(planner.label(), file));
      return { kind: 'already-set', where: file };
    }
    if (!(await deps.confirmDiff(plan.diff))) return { kind: 'cancelled' };
    const saved = await writeWithBackup(deps, file, plan.newText);
    deps.log(wroteFile(file, saved.backup));
    return { kind: 'changed', file, diff: plan.diff, undo: scriptUndo(saved) };
  }

  async findUndo(deps: ParserChangeDeps): Promise<ArgsUndo | { readonly nothing: string }> {
    const saved = await findBackup(deps, await this.path(deps));
    return saved ? scriptUndo(saved) : { nothing: sameAsBackup(this.config.script) };
  }
}

function scriptUndo(saved: FileBackup): ArgsUndo {
  return {
    file: saved.file,
    restores: 'previous',
    byHand: copyBackupOver(saved.backup, saved.file),
    run: async (deps) => {
      await restoreBackup(deps, saved);
      deps.log(restoredFrom(saved.file, saved.backup));
    },
  };
}
